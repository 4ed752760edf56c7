"""Every data source a dataset config names, where it is looked for and whether it is there, read from the
config alone (no data is opened): what ``run --dry-run`` and ``lint`` list, and where ``lint --no-data`` learns
that a source lies outside the data roots (``data/roots.py``)."""
from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promptweave.data.hub_cache import find_snapshot
from promptweave.data.locate import AISBENCH_PREFIX, candidates, is_data_id
from promptweave.data.roots import ALLOW_FLAG, Root, current_data_policy, data_roots, looks_like_path, root_for
from promptweave.data.sources import FILE_FORMATS, HF_BUILDERS
from promptweave.errors import DataOutsideRootsError

_NOT_SOURCES = frozenset({"type", "abbr", "reader_cfg", "infer_cfg", "eval_cfg", "k", "n", "name", "split",
                          "local_mode"})


@dataclass(frozen=True)
class DataSource:
    """One place a dataset reads from. ``kind``: ``file`` / ``folder`` (a local path), ``missing`` (a local
    path not found) or ``hub`` (a name only the Hugging Face cache can hold)."""

    dataset: str
    field: str
    value: str
    path: str
    kind: str
    allowed: bool = True

    @property
    def present(self) -> bool:
        return self.kind in ("file", "folder")

    def line(self) -> str:
        if self.kind == "hub":
            snap = find_snapshot(self.value)
            held = (f"present in the hub cache: {snap}" if snap is not None
                    else "not in the hub cache: `promptweave data fetch CONFIG` gets it")
            return (f"data: {self.dataset}: {self.field}={self.value!r}: no local file; a Hugging Face cache name "
                    f"(read offline, never downloaded; {held})")
        state = "present" if self.present else "missing"
        where = f"{self.field}={self.value!r} -> {self.path}"
        if not self.allowed:
            return f"data: {self.dataset}: {where} ({state}; outside the data roots: refused without {ALLOW_FLAG})"
        return f"data: {self.dataset}: {where} ({state})"

    def refusal(self, roots: tuple[Root, ...]) -> DataOutsideRootsError:
        from promptweave.data.roots import outside

        return outside(self.path, roots, field=self.field, value=self.value)


def data_sources(cfg: Mapping[str, Any], *, base_dir: Path | str | None, name: str = "") -> list[DataSource]:
    """The sources of one dataset config, in the order it names them."""
    if not isinstance(cfg, Mapping):
        return []
    shown = name or str(cfg.get("abbr") or "dataset")
    if "rows" in cfg or "train_rows" in cfg or "test_rows" in cfg:
        return []  # rows written in the config: nothing is read
    roots = data_roots(base_dir)
    trusted = current_data_policy().trusted
    loader = cfg.get("type") is not None
    local_mode = bool(cfg.get("local_mode"))
    out = []
    for field, value in _named_paths(cfg, loader):
        if loader:
            kind, path = _by_rule(value, base_dir, local_mode=local_mode or field.startswith("data_files"),
                                  hub_ok=field == "path")
        else:
            kind, path = _plain(value, base_dir, hub_ok=field == "path")
        allowed = trusted or kind == "hub" or root_for(path, roots) is not None
        out.append(DataSource(shown, field, value, path, kind, allowed))
    return out


def config_sources(config: Any, dataset_ids: Any) -> list[tuple[int, DataSource]]:
    """``(dataset index, source)`` for each selected dataset of a loaded config."""
    abbrs = config.dataset_abbrs()
    return [(i, src) for i in dataset_ids
            for src in data_sources(config.datasets[i], base_dir=config.base_dir, name=abbrs[i])]


def _named_paths(cfg: Mapping[str, Any], loader: bool) -> Iterator[tuple[str, str]]:
    path = cfg.get("path")
    if isinstance(path, str) and path and not (path in HF_BUILDERS and cfg.get("data_files") is not None):
        yield "path", path
    stack: list[tuple[str, Any]] = [("data_files", cfg.get("data_files"))]
    if loader:
        stack += [(k, v) for k, v in cfg.items() if k not in _NOT_SOURCES and k not in ("path", "data_files")]
    while stack:
        field, item = stack.pop(0)
        if isinstance(item, str) and item and (field.startswith("data_files") or (
                looks_like_path(item) and _exists_as_written(item))):
            yield field, item  # another argument counts when it names a place that exists (not a file-name suffix)
        elif isinstance(item, Mapping):
            stack[:0] = [(f"{field}.{k}", v) for k, v in item.items()]
        elif isinstance(item, (list, tuple)):
            stack[:0] = [(f"{field}[{i}]", v) for i, v in enumerate(item)]


def _by_rule(value: str, base_dir: Path | str | None, *, local_mode: bool, hub_ok: bool) -> tuple[str, str]:
    """As ``locate`` finds it: the first existing candidate, else the first tried (or a hub name)."""
    try:
        _rule, cands = candidates(value, base_dir=base_dir, local_mode=local_mode)
    except (ValueError, OSError):
        return "missing", value
    for cand in cands:
        if _exists(cand):
            return ("folder" if cand.is_dir() else "file"), str(cand)
    local = (is_data_id(value) or value.startswith(("./", "../", "/", "~", "data/", AISBENCH_PREFIX))
             or Path(value).suffix.lower() in FILE_FORMATS)
    if hub_ok and not local:
        return "hub", value
    return "missing", str(cands[0]) if cands else value


def _plain(value: str, base_dir: Path | str | None, *, hub_ok: bool) -> tuple[str, str]:
    """A promptweave ``path=`` (no loader class): relative to the config's folder, ``~`` expanded."""
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    try:
        target = Path(os.path.normpath(base.absolute() / Path(value).expanduser()))
    except (ValueError, OSError, RuntimeError):
        return "missing", value
    if _exists(target):
        return ("folder" if target.is_dir() else "file"), str(target)
    looks_local = (not hub_ok or Path(value).suffix.lower() in FILE_FORMATS or value.startswith((".", "/", "~"))
                   or value.count("/") > 1)
    return ("missing" if looks_local else "hub"), (str(target) if looks_local else value)


def _exists_as_written(text: str) -> bool:
    try:
        return _exists(Path(os.path.expanduser(text)))
    except RuntimeError:
        return False


def _exists(p: Path) -> bool:
    try:
        return p.exists()
    except (OSError, ValueError):
        return False


__all__ = ["DataSource", "config_sources", "data_sources"]
