"""Where a dataset's files are: the references' data ids, cache folders and relative-path rules.

OpenCompass (``utils/datasets.py: get_data_path``): an absolute path is used as written; ``local_mode`` joins the
path onto ``$COMPASS_DATA_CACHE``; otherwise a dataset id (``opencompass/gsm8k``) is first mapped to its local
path (``./data/gsm8k/``) and joined the same way. When ``COMPASS_DATA_CACHE`` is unset the join leaves the path
relative, so it is read from the working directory. A path not found there is tried under
``~/.cache/opencompass``; OpenCompass would then download it, promptweave never does: it tries the config file's
folder last (a config kept beside its data) and otherwise raises one :class:`DataNotFoundError` listing every
folder tried.

AISBench (``datasets/utils/datasets.py``): relative paths (``ais_bench/datasets/gsm8k``) join onto
``$AIS_BENCH_DATASETS_CACHE``, else the folder holding the installed ``ais_bench`` package (a source checkout's
root); promptweave also tries the working directory and the config's folder.
"""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from promptweave.compat.data_ids import DATA_IDS
from promptweave.data.cache_places import AISBENCH_ENV, AISBENCH_PREFIX, COMPASS_DEFAULT, COMPASS_ENV  # noqa: F401
from promptweave.data.roots import check_read
from promptweave.data.sources import check_regular
from promptweave.errors import DataNotFoundError


@dataclass(frozen=True)
class Located:
    """A found path and the candidates tried before it (for the plan and for messages)."""

    path: Path
    tried: tuple[Path, ...]
    rule: str  # "absolute" | "opencompass" | "aisbench"


def is_data_id(path: str) -> bool:
    return path in DATA_IDS


def candidates(path: str, *, base_dir: Path | str | None = None, local_mode: bool = False) -> tuple[str, list[Path]]:
    """The rule that applies to ``path`` and the places it would be found, in the order they are tried."""
    raw = _expand(Path(path))
    if raw.is_absolute():
        return "absolute", [raw]
    out: list[Path] = []
    cwd = Path.cwd()
    if path.startswith(AISBENCH_PREFIX):
        env = os.environ.get(AISBENCH_ENV)
        if env:
            out.append(_expand(Path(env)) / path)
        out.append(cwd / path)
        root = _aisbench_root()
        if root is not None:
            out.append(root / path)
        if base_dir is not None:
            out.append(_absolute(Path(base_dir)) / path)
        return "aisbench", _unique(out)
    local = path if local_mode else DATA_IDS.get(path, path)
    env = os.environ.get(COMPASS_ENV, "")
    first = _expand(Path(env)) / local if env else Path(local)
    out.append(first if first.is_absolute() else cwd / first)
    out.append(_expand(COMPASS_DEFAULT) / local)
    if base_dir is not None:
        out.append(_absolute(Path(base_dir)) / local)
    return "opencompass", _unique(out)


def locate(path: str, *, base_dir: Path | str | None = None, local_mode: bool = False, abbr: str | None = None,
           file: str | None = None, field: str = "path", loader: str | None = None) -> Located:
    """The first existing candidate for ``path``; a :class:`DataNotFoundError` naming them all otherwise."""
    if not isinstance(path, str) or not path:
        raise DataNotFoundError("a dataset path must be a non-empty string", file=file, field=field, value=path)
    rule, cands = candidates(path, base_dir=base_dir, local_mode=local_mode)
    for i, cand in enumerate(cands):
        if _exists(cand):
            check_read(cand, field=field, value=path)  # safe mode: the data roots, links followed
            if not cand.is_dir():
                check_regular(cand, field=field)  # /dev/zero, a FIFO: refused before anything opens it
            return Located(cand, tuple(cands[:i]), rule)
    raise not_found(path, cands, rule, abbr=abbr, file=file, field=field, loader=loader)


def not_found(path: str, tried: list[Path] | tuple[Path, ...], rule: str, *, abbr: str | None, file: str | None,
              field: str, loader: str | None = None) -> DataNotFoundError:
    who = f"dataset {abbr!r}" if abbr else "the dataset"
    if loader:
        who += f" ({loader})"
    where = "; ".join(str(p) for p in tried)
    if rule == "aisbench":
        how = (f"the files at <folder>/{path}: run from <folder> (an AISBench checkout's root) or set "
               f"{AISBENCH_ENV}=<folder> (promptweave never downloads)")
    elif rule == "absolute":
        how = "an existing file or folder at that absolute path (promptweave never downloads)"
    else:
        local = DATA_IDS.get(path, path).removeprefix("./")
        how = (f"the files at <folder>/{local}: set {COMPASS_ENV}=<folder>, or run from <folder>, or use "
               f"~/.cache/opencompass as <folder> (OpenCompass's data archive unpacks to this layout; "
               "promptweave never downloads)")
    from promptweave.data.fetch import known_archive

    archive = known_archive(path)
    if archive is not None:
        config = (file or "CONFIG").split(":")[0]
        how += f"; or get it with `promptweave data fetch {config}` (the reference's {archive}, md5-checked)"
    return DataNotFoundError(f"{who}: data not found for {path!r}; tried {where}", file=file, field=field,
                             expected=how)


def _absolute(p: Path) -> Path:
    try:
        return p.absolute()
    except (OSError, ValueError):
        return p


def _expand(p: Path) -> Path:
    """``~`` / ``~user`` expanded; left as written when there is no such user (a typed not-found follows)."""
    try:
        return p.expanduser()
    except RuntimeError:
        return p


def _exists(p: Path) -> bool:
    try:
        return p.exists()
    except (OSError, ValueError):  # an embedded NUL, a name too long: no such file
        return False


def _unique(paths: list[Path]) -> list[Path]:
    seen, out = set(), []
    for p in paths:
        key = os.path.normpath(str(p))
        if key not in seen:
            seen.add(key)
            out.append(Path(key))
    return out


def _aisbench_root() -> Path | None:
    try:
        spec = importlib.util.find_spec("ais_bench")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).parent
