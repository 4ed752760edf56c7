"""Unpacking a downloaded data archive safely: every member checked before anything is written, then a rename.

An archive is untrusted input. Before a byte is written, every member's name and kind is checked: an absolute
name, a ``..`` step, a link whose target leaves the archive, a device, FIFO or other special file, more members
than ``max_members`` or a declared size past ``max_bytes`` refuse the whole archive. The members are then written
into a fresh temporary folder (each file created exclusively, no link followed, bytes counted as they are written,
so an archive that lies about its sizes is stopped at the bound too) and only then moved into place.
"""
from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable

from promptweave.errors import DataFetchError

GIB = 1 << 30


@dataclass(frozen=True)
class UnpackLimits:
    max_bytes: int = 64 * GIB
    max_members: int = 2_000_000


@dataclass(frozen=True)
class Member:
    name: str  # normalised, relative, "/"-separated
    kind: str  # "file" | "dir" | "link"
    size: int
    target: str = ""  # a link's target, as written


def _clean_name(raw: str, archive: Path) -> str:
    name = raw.replace("\\", "/")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise DataFetchError(f"archive {archive.name} holds a member with an absolute path {raw!r}; refused whole",
                             field="archive", value=raw)
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise DataFetchError(f"archive {archive.name} holds a member that climbs out of it ({raw!r}); refused whole",
                             field="archive", value=raw)
    if any("\0" in p for p in parts):
        raise DataFetchError(f"archive {archive.name} holds a member name with a NUL byte; refused whole",
                             field="archive", value=raw)
    return "/".join(parts)


def _check_link(m: Member, archive: Path) -> None:
    target = m.target.replace("\\", "/")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(m.name), target))
    if target.startswith("/") or resolved == ".." or resolved.startswith("../"):
        raise DataFetchError(f"archive {archive.name} holds a link {m.name!r} -> {m.target!r} pointing out of it; "
                             "refused whole", field="archive", value=m.name)


def _zip_members(zf: zipfile.ZipFile, archive: Path) -> list[tuple[Member, zipfile.ZipInfo]]:
    out = []
    for info in zf.infolist():
        mode = info.external_attr >> 16
        kind = stat.S_IFMT(mode) if info.create_system == 3 and mode else 0
        name = _clean_name(info.filename, archive)
        if kind == stat.S_IFLNK:
            target = zf.read(info)[:4096].decode("utf-8", "replace")
            out.append((Member(name, "link", 0, target), info))
        elif kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise DataFetchError(f"archive {archive.name} holds a special file {info.filename!r} (not a file, folder "
                                 "or link); refused whole", field="archive", value=info.filename)
        elif info.is_dir() or kind == stat.S_IFDIR:
            out.append((Member(name, "dir", 0), info))
        else:
            out.append((Member(name, "file", info.file_size), info))
    return out


def _tar_members(tf: tarfile.TarFile, archive: Path) -> list[tuple[Member, tarfile.TarInfo]]:
    out = []
    for info in tf.getmembers():
        name = _clean_name(info.name, archive)
        if info.issym() or info.islnk():
            # a hard link names another member by its archive path: written as the relative link it amounts to
            target = info.linkname if info.issym() else posixpath.relpath(
                _clean_name(info.linkname, archive) or ".", posixpath.dirname(name) or ".")
            out.append((Member(name, "link", 0, target), info))
        elif info.isdir():
            out.append((Member(name, "dir", 0), info))
        elif info.isreg():
            out.append((Member(name, "file", info.size), info))
        else:
            raise DataFetchError(f"archive {archive.name} holds a special file {info.name!r} (device, FIFO or other); "
                                 "refused whole", field="archive", value=info.name)
    return out


def check(members: list[Member], archive: Path, limits: UnpackLimits) -> None:
    """Refuse the whole archive for any member that could write outside it or past the bounds."""
    if len(members) > limits.max_members:
        raise DataFetchError(f"archive {archive.name} holds {len(members)} members, more than {limits.max_members}; "
                             "refused whole", field="archive", value=archive.name)
    total = sum(m.size for m in members)
    if total > limits.max_bytes:
        raise DataFetchError(f"archive {archive.name} unpacks to {total} bytes, more than {limits.max_bytes}; "
                             "refused whole", field="archive", value=archive.name)
    for m in members:
        if m.kind == "link":
            _check_link(m, archive)


def _write(dest: Path, src: IO[bytes], budget: list[int], archive: Path) -> None:
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as out:
        while True:
            block = src.read(1 << 20)
            if not block:
                return
            budget[0] -= len(block)
            if budget[0] < 0:
                raise DataFetchError(f"archive {archive.name} unpacks to more bytes than it declares or the bound "
                                     "allows; refused whole", field="archive", value=archive.name)
            out.write(block)


def unpack(archive: Path, into: Path, limits: UnpackLimits = UnpackLimits()) -> list[str]:
    """Unpack ``archive`` (zip or tar, any compression tarfile reads) into a fresh folder ``into``.

    Returns the top-level names it made. Nothing is written unless every member passes :func:`check`.
    """
    into.mkdir(parents=True, exist_ok=False)
    try:
        return _unpack(archive, into, limits)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, tarfile.TarError, EOFError, zlib.error, NotImplementedError,
            RuntimeError) as exc:  # a corrupt or encrypted archive
        raise DataFetchError(f"archive {archive.name} cannot be read: {type(exc).__name__}: {exc}", field="archive",
                             value=archive.name) from None


def _unpack(archive: Path, into: Path, limits: UnpackLimits) -> list[str]:
    budget = [limits.max_bytes]
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            zmembers = _zip_members(zf, archive)
            check([m for m, _ in zmembers], archive, limits)
            for m, info in zmembers:
                _place(m, into, archive, lambda info=info: zf.open(info), budget)
    elif tarfile.is_tarfile(archive):
        with tarfile.open(archive) as tf:
            tmembers = _tar_members(tf, archive)
            check([m for m, _ in tmembers], archive, limits)
            for m, info in tmembers:
                _place(m, into, archive, lambda info=info: tf.extractfile(info), budget)
    else:
        raise DataFetchError(f"{archive.name} is neither a zip nor a tar archive", field="archive", value=archive.name)
    return sorted(p.name for p in into.iterdir())


def _place(m: Member, into: Path, archive: Path, opener: Callable[[], Any], budget: list[int]) -> None:
    try:
        _place_member(m, into, archive, opener, budget)
    except OSError as exc:  # a name that is a file in one member and a folder in another, and the like
        raise DataFetchError(f"archive {archive.name} cannot be unpacked at {m.name!r}: {exc.strerror or exc}; "
                             "refused whole", field="archive", value=m.name) from None


def _place_member(m: Member, into: Path, archive: Path, opener: Callable[[], Any], budget: list[int]) -> None:
    if not m.name:
        return
    dest = into / m.name
    _make_parents(into, dest.parent)
    if m.kind == "dir":
        _make_parents(into, dest)
    elif m.kind == "link":
        if os.path.lexists(dest):
            raise DataFetchError(f"archive {archive.name} holds {m.name!r} twice; refused whole", field="archive",
                                 value=m.name)
        os.symlink(m.target, dest)
    else:
        src = opener()
        if src is None:  # pragma: no cover - tarfile gives None only for non-files, refused above
            return
        with src:
            try:
                _write(dest, src, budget, archive)
            except FileExistsError:
                raise DataFetchError(f"archive {archive.name} holds {m.name!r} twice; refused whole",
                                     field="archive", value=m.name) from None


def _make_parents(into: Path, folder: Path) -> None:
    """Make ``folder`` (inside ``into``) without passing through a link a member made."""
    rel = folder.relative_to(into)
    cur = into
    for part in rel.parts:
        cur = cur / part
        if cur.is_symlink():
            raise DataFetchError(f"an archive member is placed under the link {str(rel)!r}; refused whole",
                                 field="archive", value=str(rel))
        if not cur.exists():
            cur.mkdir()


def move_into(staged: Path, root: Path) -> list[Path]:
    """Move each top-level entry of ``staged`` into ``root`` (merging into a folder already there, file by file)."""
    root.mkdir(parents=True, exist_ok=True)
    placed = []
    for entry in sorted(staged.iterdir()):
        dest = root / entry.name
        _merge(entry, dest)
        placed.append(dest)
    shutil.rmtree(staged, ignore_errors=True)
    return placed


def _merge(src: Path, dest: Path) -> None:
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()) or src.is_symlink() or not src.is_dir():
        if dest.is_symlink() or dest.is_file():
            dest.unlink()
        elif dest.is_dir():
            shutil.rmtree(dest)
        os.replace(src, dest)
        return
    if not dest.exists():
        os.replace(src, dest)
        return
    for child in sorted(src.iterdir()):
        _merge(child, dest / child.name)
