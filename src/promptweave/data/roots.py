"""Where safe mode reads data from: the data roots, and the user's ``--allow-data`` paths.

A config someone shares must not be able to read any file of the person who runs it and send it to a model
server. So while a dataset loads (:func:`data_scope`), every data file or folder promptweave reads is checked
(:func:`check_read`): its real path, links followed, must lie under one of the roots a user expects data in —

- the config file's folder;
- the working directory's ``data/`` (OpenCompass's ``./data/<name>`` when ``COMPASS_DATA_CACHE`` is unset) and
  ``ais_bench/datasets`` (AISBench's layout, run from a checkout);
- ``$COMPASS_DATA_CACHE`` and ``~/.cache/opencompass`` (OpenCompass's data cache, and ``data fetch``'s root);
- ``$AIS_BENCH_DATASETS_CACHE/ais_bench/datasets`` and the installed ``ais_bench`` package's ``datasets``;
- the Hugging Face cache (``$HF_HOME``, ``$HF_DATASETS_CACHE``, ``$HF_HUB_CACHE``, ``~/.cache/huggingface``);

or under a path the user named with ``--allow-data PATH``. Inside a root, a hidden name (``.ssh``, ``.env``) is
refused as well, unless the user named it. Anything else is a :class:`~promptweave.errors.DataOutsideRootsError`
naming the file, the field and the value, and the flag that allows it. ``--trust-config`` lifts the rule (such a
config runs as Python and could read the file anyway).

The policy is the user's, set once per command (:func:`set_data_policy`); nothing in a config can widen it.
"""
from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptweave.errors import DataOutsideRootsError

ALLOW_FLAG = "--allow-data"


@dataclass(frozen=True)
class DataPolicy:
    """The paths the user allowed beyond the roots (``--allow-data``), or everything under ``--trust-config``."""

    allowed: tuple[str, ...] = ()
    trusted: bool = False


@dataclass(frozen=True)
class Root:
    """One place data may be read from: what it is (for messages) and its real path."""

    what: str
    path: str


@dataclass
class Scope:
    """One dataset being loaded: its roots, and every data path checked while it loads (for the plan)."""

    roots: tuple[Root, ...]
    file: str | None = None
    reads: dict[str, None] = field(default_factory=dict)  # in order, each once


_policy = DataPolicy()
_scope: ContextVar[Scope | None] = ContextVar("promptweave_data_scope", default=None)


def set_data_policy(allowed: Iterable[str | os.PathLike[str]] = (), *, trusted: bool = False) -> DataPolicy:
    """Install the command's ``--allow-data`` paths (made absolute against the working directory now)."""
    global _policy
    old = _policy
    _policy = DataPolicy(tuple(_absolute(str(p)) for p in allowed if str(p)), bool(trusted))
    return old


def current_data_policy() -> DataPolicy:
    return _policy


@contextmanager
def data_policy(allowed: Iterable[str | os.PathLike[str]] = (), *, trusted: bool = False) -> Iterator[DataPolicy]:
    """The data policy for a block (tests; a worker loading data with the driver's policy)."""
    global _policy
    old = set_data_policy(allowed, trusted=trusted)
    try:
        yield _policy
    finally:
        _policy = old


def data_roots(base_dir: Path | str | None = None, policy: DataPolicy | None = None) -> tuple[Root, ...]:
    """The roots data may be read from for a config in ``base_dir`` (the allowed paths last)."""
    env = os.environ
    cwd = os.getcwd()
    home = _home()
    out: list[Root] = []

    def add(what: str, path: str | None) -> None:
        if path:
            out.append(Root(what, _real(_absolute(os.path.expanduser(path)))))

    if base_dir is not None:
        add("the config's folder", str(base_dir))
    add("./data", os.path.join(cwd, "data"))
    add("./ais_bench/datasets", os.path.join(cwd, "ais_bench", "datasets"))
    add("$COMPASS_DATA_CACHE", env.get("COMPASS_DATA_CACHE"))
    if home:
        add("~/.cache/opencompass", os.path.join(home, ".cache", "opencompass"))
    cache = env.get("AIS_BENCH_DATASETS_CACHE")
    if cache:
        add("$AIS_BENCH_DATASETS_CACHE/ais_bench/datasets", os.path.join(cache, "ais_bench", "datasets"))
    package = _aisbench_parent()
    if package:
        add("the ais_bench install's datasets", os.path.join(package, "ais_bench", "datasets"))
    for name in ("HF_HOME", "HF_DATASETS_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        add(f"${name}", env.get(name))
    xdg = env.get("XDG_CACHE_HOME")
    if xdg:
        add("$XDG_CACHE_HOME/huggingface", os.path.join(xdg, "huggingface"))
    if home:
        add("~/.cache/huggingface", os.path.join(home, ".cache", "huggingface"))
    for p in (policy or _policy).allowed:
        out.append(Root(f"{ALLOW_FLAG} {p}", _real(p)))
    return tuple(dict.fromkeys(out))


@contextmanager
def data_scope(base_dir: Path | str | None, *, file: str | None = None) -> Iterator[Scope]:
    """Check every data read inside the block against the roots of a config in ``base_dir``."""
    scope = Scope(data_roots(base_dir), file)
    token = _scope.set(scope)
    try:
        yield scope
    finally:
        _scope.reset(token)


def current_scope() -> Scope | None:
    return _scope.get()


def root_for(path: str | os.PathLike[str], roots: Iterable[Root]) -> Root | None:
    """The root ``path`` really lies under (links followed), or None; a hidden name inside a root (not one the
    user named) counts as outside."""
    try:
        real = _real(_absolute(os.path.expanduser(os.fspath(path))))
    except (ValueError, OSError):  # an embedded NUL, a name no file system accepts
        return None
    for root in roots:
        rel = _relative(real, root.path)
        if rel is None:
            continue
        if root.what.startswith(ALLOW_FLAG) or not any(part.startswith(".") for part in Path(rel).parts):
            return root
    return None


def check_read(path: str | os.PathLike[str], *, field: str | None = None, value: object = None) -> None:
    """Refuse a data read outside the roots while a dataset loads in safe mode; no-op otherwise."""
    scope = _scope.get()
    if scope is None or _policy.trusted:
        return
    shown = os.fspath(path)
    if root_for(shown, scope.roots) is None:
        raise outside(shown, scope.roots, field=field, value=value)
    scope.reads.setdefault(shown, None)


def outside(path: str, roots: Iterable[Root], *, field: str | None = None,
            value: object = None) -> DataOutsideRootsError:
    """The refusal for ``path``: where it really leads, the roots, and the flag that allows it."""
    try:
        real = _real(_absolute(os.path.expanduser(path)))
    except (ValueError, OSError):
        real = path
    hidden = any(_relative(real, r.path) is not None for r in roots)
    where = f"{path}" + (f" (really {real})" if real != _absolute(path) else "")
    why = ("is a hidden file or folder inside a data root" if hidden else
           "is outside the data roots (" + ", ".join(dict.fromkeys(r.what for r in roots)) + ")")
    kw: dict[str, Any] = {} if value is None else {"value": value}
    return DataOutsideRootsError(
        f"safe mode refuses to read data at {where}: it {why}; a config does not choose which of your files "
        "leave this machine", field=field or "path", expected=f"{ALLOW_FLAG} {real} on the command line if the "
        "config may read it (or move the data under the config's folder or a data cache)", **kw)


def looks_like_path(text: object) -> bool:
    """A loader argument that names a file system location rather than a dataset id or a plain word."""
    if not isinstance(text, str) or not text:
        return False
    return text.startswith(("/", "~", "./", "../", "\\")) or "/../" in text or text == ".." or (
        len(text) > 2 and text[1] == ":" and text[2] in "/\\")


def _relative(real: str, root: str) -> str | None:
    if real == root:
        return "."
    prefix = root if root.endswith(os.sep) else root + os.sep
    return real[len(prefix):] if real.startswith(prefix) else None


def _absolute(p: str) -> str:
    return os.path.normpath(p if os.path.isabs(p) else os.path.join(os.getcwd(), p))


def _real(p: str) -> str:
    return os.path.realpath(p)


def _home() -> str | None:
    try:
        home = os.path.expanduser("~")
    except (KeyError, RuntimeError):
        return None
    return None if home == "~" else home


def _aisbench_parent() -> str | None:
    try:
        spec = importlib.util.find_spec("ais_bench")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.dirname(next(iter(spec.submodule_search_locations)))


__all__ = ["ALLOW_FLAG", "DataPolicy", "Root", "Scope", "check_read", "current_data_policy", "current_scope",
           "data_policy", "data_roots", "data_scope", "looks_like_path", "outside", "root_for", "set_data_policy"]
