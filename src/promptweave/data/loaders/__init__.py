"""A dataset dict's ``type=`` loader class -> rows: native loaders first, then an installed reference's registry.

The keyword arguments a reference passes to its loader's ``load`` are the dataset dict's keys other than the
ones its ``BaseDataset`` and runner consume (``type``, ``abbr``, ``reader_cfg``, ``infer_cfg``, ``eval_cfg``,
``k``, ``n``); they are checked against the native loader's parameters before any file is read.
"""
from __future__ import annotations

import inspect
import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.sources import Split
from promptweave.errors import DataError, DataNotFoundError, LoaderError

NOT_LOAD_ARGS = frozenset({"type", "abbr", "reader_cfg", "infer_cfg", "eval_cfg", "judge_infer_cfg", "k", "n"})

NATIVE = "native"
BRIDGE = "reference bridge"


@dataclass(frozen=True)
class LoaderChoice:
    """Which implementation reads a dataset: ``kind`` is ``native`` or ``reference bridge``."""

    name: str
    kind: str
    fn: Callable[..., Any]
    package: str = "promptweave"

    @property
    def label(self) -> str:
        return f"{self.name} ({self.kind}{'' if self.kind == NATIVE else ': ' + self.package})"


@dataclass
class Loaded:
    splits: Splits
    choice: LoaderChoice
    source: str


def loader_name(cfg: Mapping[str, Any]) -> str | None:
    """The loader class a dataset dict names, or None (a promptweave path / rows dataset)."""
    t = cfg.get("type")
    if t is None:
        return None
    name = t if isinstance(t, str) else getattr(t, "__name__", None)
    if not isinstance(name, str) or not name:
        raise LoaderError("a dataset type must be a loader class name", field="type", value=t)
    return name if "." not in name else name.rsplit(".", 1)[-1]  # a bare name keeps its module (compat.origin)


def load_args(cfg: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in cfg.items() if k not in NOT_LOAD_ARGS}


def choose(name: str, *, file: str | None = None) -> LoaderChoice:
    """The native loader for ``name``, else the installed reference's registered class; LoaderError otherwise."""
    from promptweave.compat.loaders import LOADERS
    from promptweave.compat.origin import lookup

    fn = lookup(LOADERS, name, name)
    if fn is not None:
        return LoaderChoice(name, NATIVE, fn)
    from promptweave.compat.bridge import reference_class

    found = reference_class("loader", name)
    if found is not None:
        package, cls = found
        return LoaderChoice(name, BRIDGE, cls, package)
    owner = registered_in_source(name)
    if owner is not None:
        from promptweave.compat.bridge import why_unresolved

        why = why_unresolved("loader", name) or f"{owner}'s registry does not hold it here"
        raise LoaderError(f"dataset loader {name!r} has no native implementation; the installed {owner} registers "
                          f"it in its source, but {why}", file=file, field="type", value=name,
                          expected=f"{owner} installed with its dependencies (pip install {owner}), or the data "
                          "converted to JSONL and named with path= and no type=")
    raise LoaderError(f"dataset loader {name!r} has no native implementation and no installed reference "
                      "(opencompass / ais_bench) registers it", file=file, field="type", value=name,
                      expected="one of the native loaders (see README 'Data sources'), or install the reference "
                      "package that defines it, or convert the data to JSONL and give path= without type=")


_SOURCES = (("opencompass", "datasets"), ("ais_bench", "benchmark/datasets"))


def registered_in_source(name: str) -> str | None:
    """The installed reference whose source registers loader ``name`` (read, never imported), or None."""
    from promptweave.compat.bridge import installed_references

    shown = installed_references()  # PROMPTWEAVE_NO_REFERENCE=1 hides the installed references
    for package, names in _registered_names().items():
        if package in shown and name in names:
            return package
    return None


# a registration decorator (possibly among others) right before the class it registers
_REGISTERED = re.compile(r"@LOAD_DATASET\.register_module\([^)]*\)\s*\n(?:\s*@[^\n]*\n)*\s*class\s+(\w+)")


@lru_cache(maxsize=1)
def _registered_names() -> dict[str, frozenset[str]]:
    from promptweave.compat.reference_tables import package_root  # install directories only, never the cwd

    out: dict[str, frozenset[str]] = {}
    for package, sub in _SOURCES:
        found_root = package_root(package)
        if found_root is None:
            continue
        root = found_root / sub
        found: set[str] = set()
        for f in root.rglob("*.py"):
            try:
                found.update(_REGISTERED.findall(f.read_text(encoding="utf-8", errors="replace")))
            except OSError:
                continue
        out[package] = frozenset(found)
    return out


def check_args(choice: LoaderChoice, args: Mapping[str, Any], *, file: str | None = None) -> None:
    """Unknown or missing keyword arguments of a native loader, named by field, before any data is read."""
    if choice.kind != NATIVE:
        return
    params = list(inspect.signature(choice.fn).parameters.values())[1:]  # drop the context
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        accepted = None
    else:
        accepted = {p.name for p in params}
    if accepted is not None:
        for key in args:
            if key not in accepted:
                raise LoaderError(f"{choice.name} takes no argument {key!r}", file=file, field=key,
                                  value=args[key], expected="one of " + ", ".join(sorted(accepted)))
    variadic = (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    for p in params:
        if p.default is inspect.Parameter.empty and p.kind not in variadic and p.name not in args:
            raise LoaderError(f"{choice.name} needs {p.name}=", file=file, field=p.name)


def check(cfg: Mapping[str, Any], *, file: str | None = None) -> LoaderChoice | None:
    """What ``load`` would use for this dataset dict, with its arguments checked; reads no data."""
    name = loader_name(cfg)
    if name is None:
        return None
    choice = choose(name, file=file)
    check_args(choice, load_args(cfg), file=file)
    return choice


def load(cfg: Mapping[str, Any], *, base_dir: Path | str | None, file: str | None) -> Loaded:
    """Run the dataset dict's loader class and return its splits (before the reader config is applied)."""
    choice = check(cfg, file=file)
    assert choice is not None
    args = load_args(cfg)
    abbr = cfg.get("abbr") if isinstance(cfg.get("abbr"), str) else None
    ctx = LoadContext(choice.name, abbr, file, Path(base_dir) if base_dir is not None else None)
    if choice.kind == NATIVE:
        try:
            splits = choice.fn(ctx, **args)
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            # data (or an argument) not shaped as the reference's layout: name the loader, never a traceback
            raise LoaderError(f"{choice.name}: the data or arguments do not have the shape it reads "
                              f"({type(exc).__name__}: {exc})", file=file, field="path",
                              value=args.get("path"),
                              expected="the reference's on-disk layout (see the loader's docstring)") from None
    else:
        splits = _bridge(choice, ctx, args)
    splits = _repeat(splits, cfg.get("n", 1), file)
    return Loaded(splits, choice, f"{choice.label}: {_files(splits)}")


def _bridge(choice: LoaderChoice, ctx: LoadContext, args: dict[str, Any]) -> Splits:
    """Call the reference's own ``load`` with paths it can find already resolved, so that it never downloads."""
    from promptweave.compat.bridge import is_static
    from promptweave.data.locate import AISBENCH_PREFIX, is_data_id

    if is_static(choice.fn):  # installed without its dependencies, so its loader cannot run here
        raise choice.fn.unavailable(file=ctx.file, field="type")
    path = args.get("path")
    if isinstance(path, str) and path:
        try:
            args["path"] = str(ctx.find(path, local_mode=bool(args.get("local_mode"))))
        except DataNotFoundError:
            if is_data_id(path) or path.startswith(("./", "data/", AISBENCH_PREFIX, "/", "~")):
                raise
            # a hub dataset name: the reference loads it from the local Hugging Face cache (offline)
    _check_path_args(args)
    try:
        with _offline():
            got = choice.fn.load(**args)
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure inside the reference's code becomes a typed error
        raise LoaderError(f"the reference loader {choice.package}.{choice.name} failed: "
                          f"{type(exc).__name__}: {exc}", file=ctx.file, field="type", value=choice.name) from None
    from promptweave.data.sources import from_hf

    if isinstance(got, Split):
        return got
    try:
        return from_hf(got, f"{choice.package}.{choice.name}")
    except Exception as exc:  # noqa: BLE001
        raise LoaderError(f"the reference loader {choice.name} returned {type(got).__name__}, not a dataset: "
                          f"{exc}", file=ctx.file, field="type") from None


def _check_path_args(args: Mapping[str, Any]) -> None:
    """The reference's own code opens its other arguments itself: any that names an existing file system location
    (``data_files``, an image folder), on its own or joined to the located ``path`` as some references join
    ``path + filename``, is checked against the data roots first (safe mode)."""
    from promptweave.data.roots import check_read, looks_like_path

    base = args.get("path") if isinstance(args.get("path"), str) else None
    stack: list[tuple[str, Any]] = [(k, v) for k, v in args.items() if k != "path"]
    while stack:
        where, item = stack.pop()
        if looks_like_path(item):
            for cand in (item, base + item if base else None):
                if cand is not None and _exists(cand):
                    check_read(cand, field=where, value=item)
        elif isinstance(item, Mapping):
            stack.extend((f"{where}.{k}", v) for k, v in item.items())
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(item))


def _exists(path: str) -> bool:
    try:
        return os.path.exists(os.path.expanduser(path))
    except (OSError, ValueError, RuntimeError):
        return False


@contextmanager
def _offline() -> Iterator[None]:
    """The Hugging Face hub and datasets switched to offline for the reference's own loading code."""
    keys = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")
    old = {k: os.environ.get(k) for k in keys}
    os.environ.update({k: "1" for k in keys})
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _repeat(splits: Splits, n: Any, file: str | None) -> Splits:
    """``n=``: every split repeated n times, as the reference's BaseDataset does for sampling n answers."""
    if n in (None, 1):
        return splits
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise LoaderError("n must be a positive integer (the number of times each row is repeated)", file=file,
                          field="n", value=n)

    def rep(s: Split) -> Split:
        return Split(s.rows * n, s.file, s.where * n)

    return rep(splits) if isinstance(splits, Split) else {k: rep(v) for k, v in splits.items()}


def _files(splits: Splits) -> str:
    if isinstance(splits, Split):
        return splits.file
    return ", ".join(dict.fromkeys(s.file for s in splits.values()))


__all__ = ["BRIDGE", "NATIVE", "LoadContext", "Loaded", "LoaderChoice", "check", "choose", "load", "loader_name"]
