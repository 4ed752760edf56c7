"""Load OpenCompass-shaped configs (``datasets = [...]``, ``models = [...]``) from .py, .yaml or .json."""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptweave.config.safe_py import load_py_config
from promptweave.errors import BudgetError, ConfigError, PromptweaveError
from promptweave.sandbox.budget import DEFAULT_BUDGET
from promptweave.sandbox.interp import Function
from promptweave.sandbox.refs import ClassRef, ModuleRef, RefName


@dataclass
class Config:
    """A loaded config: dataset and model entries as plain dicts (the config boundary), plus where they came from."""

    path: Path
    datasets: list[dict[str, Any]]
    models: list[dict[str, Any]]
    variables: dict[str, Any] = field(default_factory=dict)
    # Environment variables the config read (name -> whether it was set); `run --dry-run` lists them.
    env_reads: dict[str, bool] = field(default_factory=dict)

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


def normalise(value: Any, _depth: int = 0) -> Any:
    """ClassRefs -> their class names, tuples -> lists: what the engine's config boundary takes."""
    if _depth > DEFAULT_BUDGET.max_depth:
        raise BudgetError(f"config value nested deeper than {DEFAULT_BUDGET.max_depth} levels (budget max_depth)")
    if isinstance(value, ClassRef):
        return RefName(value.name, value.module)  # the module picks between same-named reference classes
    if isinstance(value, ModuleRef):
        return value.name
    if isinstance(value, Function):
        return value.__name__  # a function defined in the config, named like a class reference
    if isinstance(value, type):
        return RefName(value.__name__, value.__module__)
    if isinstance(value, Mapping):
        return {k: normalise(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalise(v, _depth + 1) for v in value]
    return value


def _load_yaml(p: Path) -> Any:
    """YAML through the safe loader, with aliases capped and the expanded size measured (no alias bombs)."""
    import yaml

    class _Loader(yaml.SafeLoader):
        aliases = 0

        def compose_node(self, parent: Any, index: Any) -> Any:  # type: ignore[override]
            if self.check_event(yaml.AliasEvent):
                self.aliases += 1
                if self.aliases > _MAX_ALIASES:
                    mark = self.peek_event().start_mark
                    raise BudgetError(f"YAML uses more than {_MAX_ALIASES} aliases (budget max_aliases); "
                                      "write the values out", file=f"{p}:{mark.line + 1}")
            return super().compose_node(parent, index)

    loader = _Loader(p.read_text(encoding="utf-8"))
    try:
        data = loader.get_single_data()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{p}:{mark.line + 1}" if mark else str(p)
        raise ConfigError(f"YAML syntax error: {getattr(exc, 'problem', exc)}", file=where) from None
    finally:
        loader.dispose()
    if loader.aliases:  # only aliases can make the data larger than the file
        _measure(data, p)
    return data


_MAX_ALIASES = 100


def _measure(data: Any, p: Path) -> None:
    """Count nodes as a consumer walking the data would see them (shared ones each time)."""
    limit = DEFAULT_BUDGET.max_items * 10
    stack, seen = [data], 0
    while stack:
        v = stack.pop()
        seen += 1
        if seen > limit:
            raise BudgetError(f"config expands to more than {limit} values (budget max_items*10)", file=str(p))
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def load_config(path: str | Path, *, trust: bool = False, root: str | Path | None = None) -> Config:
    """Read a config file.

    ``.py`` files are evaluated safely (no code runs) unless ``trust`` is set;
    ``.yaml``/``.yml``/``.json`` hold the same shape as data. ``root`` widens the folder a safe-mode
    config may import from (default: the config's own folder).
    """
    p = Path(path)
    if not p.exists():
        raise ConfigError("config file not found", file=str(p))
    if not p.is_file():
        raise ConfigError("config path is not a regular file", file=str(p))
    suffix = p.suffix.lower()
    env_reads: dict[str, bool] = {}
    try:
        if suffix == ".py":
            if trust:
                from promptweave.config.trusted_py import run_py_config

                variables = run_py_config(p)
            else:
                variables, env_reads = load_py_config(p, root=Path(root) if root is not None else None)
        elif suffix in (".yaml", ".yml"):
            variables = _load_yaml(p) or {}
        elif suffix == ".json":
            try:
                variables = json.loads(p.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise ConfigError(f"JSON syntax error: {exc.msg}", file=f"{p}:{exc.lineno}") from None
        else:
            raise ConfigError("unknown config format", file=str(p), value=suffix, expected=".py, .yaml, .yml or .json")
    except PromptweaveError:
        raise
    except RecursionError:
        raise BudgetError("config nested too deeply to read (budget max_depth)", file=str(p)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config is not UTF-8 text: {exc.reason}", file=str(p)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read config: {exc.strerror or exc}", file=str(p)) from None
    if not isinstance(variables, Mapping):
        raise ConfigError("a config must define datasets and models at its top level", file=str(p))
    datasets = variables.get("datasets", [])
    models = variables.get("models", [])
    try:
        datasets, models = _entries(p, datasets, models)
    except RecursionError:
        raise BudgetError("config value nested too deeply (budget max_depth)", file=str(p)) from None
    except BudgetError as exc:
        raise exc.at(file=str(p)) from None
    if not datasets and not models:
        raise ConfigError("the config defines neither 'datasets' nor 'models'", file=str(p),
                          expected="datasets = [...] and models = [...]")
    return Config(p, datasets, models, {k: v for k, v in variables.items() if k not in ("datasets", "models")},
                  env_reads=env_reads)


def _entries(p: Path, datasets: Any, models: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
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
    return datasets, models
