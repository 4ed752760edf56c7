"""Load OpenCompass-shaped configs (``datasets = [...]``, ``models = [...]``) from .py, .yaml or .json."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from promptweave.config.safe_py import ClassRef, load_py_config
from promptweave.errors import ConfigError, PromptweaveError


@dataclass
class Config:
    """A loaded config: dataset and model entries as plain dicts (the config boundary), plus where they came from."""

    path: Path
    datasets: list[dict[str, Any]]
    models: list[dict[str, Any]]
    variables: dict[str, Any] = field(default_factory=dict)

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def dataset_abbrs(self) -> list[str]:
        return [dataset_abbr(d, i) for i, d in enumerate(self.datasets)]

    def model_abbrs(self) -> list[str]:
        return [model_abbr(m, i) for i, m in enumerate(self.models)]


def dataset_abbr(d: Mapping[str, Any], i: int) -> str:
    return str(d.get("abbr") or Path(str(d.get("path") or f"dataset{i}")).stem)


def model_abbr(m: Mapping[str, Any], i: int) -> str:
    return str(m.get("abbr") or m.get("name") or m.get("path") or f"model{i}")


def normalise(value: Any) -> Any:
    """ClassRefs -> their class names, tuples -> lists: what the engine's config boundary takes."""
    if isinstance(value, ClassRef):
        return value.name
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, Mapping):
        return {k: normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalise(v) for v in value]
    return value


def load_config(path: str | Path, *, trust: bool = False) -> Config:
    """Read a config file.

    ``.py`` files are evaluated safely (no code runs) unless ``trust`` is set;
    ``.yaml``/``.yml``/``.json`` hold the same shape as data.
    """
    p = Path(path)
    if not p.exists():
        raise ConfigError("config file not found", file=str(p))
    suffix = p.suffix.lower()
    try:
        if suffix == ".py":
            if trust:
                from promptweave.config.trusted_py import run_py_config

                variables = run_py_config(p)
            else:
                variables = load_py_config(p)
        elif suffix in (".yaml", ".yml"):
            import yaml

            try:
                variables = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                where = f"{p}:{mark.line + 1}" if mark else str(p)
                raise ConfigError(f"YAML syntax error: {getattr(exc, 'problem', exc)}", file=where) from None
        elif suffix == ".json":
            try:
                variables = json.loads(p.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise ConfigError(f"JSON syntax error: {exc.msg}", file=f"{p}:{exc.lineno}") from None
        else:
            raise ConfigError("unknown config format", file=str(p), value=suffix, expected=".py, .yaml, .yml or .json")
    except PromptweaveError:
        raise
    except UnicodeDecodeError as exc:  # reliability: bytes that are not UTF-8 are a typed error
        raise ConfigError(f"the config is not UTF-8 text (byte {exc.start}: {exc.object[exc.start:exc.start + 4]!r})",
                          file=str(p), expected="a UTF-8 text file") from None
    if not isinstance(variables, Mapping):
        raise ConfigError("a config must define datasets and models at its top level", file=str(p))
    datasets = variables.get("datasets", [])
    models = variables.get("models", [])
    for name, value in (("datasets", datasets), ("models", models)):
        if isinstance(value, Mapping):
            value = [value]
        if not isinstance(value, list):
            raise ConfigError(f"'{name}' must be a list of dicts", file=str(p), field=name, value=value)
        for i, entry in enumerate(value):
            if not isinstance(entry, Mapping):
                raise ConfigError(f"each entry of '{name}' must be a dict", file=str(p), field=f"{name}[{i}]",
                                  value=entry)
        if name == "datasets":
            datasets = [normalise(d) for d in value]
        else:
            models = [normalise(m) for m in value]
    if not datasets and not models:
        raise ConfigError("the config defines neither 'datasets' nor 'models'", file=str(p),
                          expected="datasets = [...] and models = [...]")
    return Config(p, datasets, models, {k: v for k, v in variables.items() if k not in ("datasets", "models")})
