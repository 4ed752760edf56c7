"""Files inside a work dir, written and read as data: no link is ever followed out of the dir.

A work dir may come from someone else (copied, unpacked, edited), so any name in it may be a planted
symbolic link, a FIFO or a folder. Every writer goes through here:

* folders below the work dir are created one component at a time, and a component that is a link (or not
  a folder) is refused — a link to elsewhere would carry every file below it out of the dir;
* a file is replaced by writing a temporary file created exclusively (``O_CREAT|O_EXCL|O_NOFOLLOW``) in the
  same folder and renaming it over the name, and a rename replaces a link itself, never its target;
* a file appended to across a run (a ``.partial`` journal) is created exclusively after removing whatever
  had its name (removing a link leaves the target alone);
* a lock file is opened with ``O_NOFOLLOW`` and must be a regular file.

Readers resolve a name, check the real file lies inside the work dir and is a regular file of bounded size,
and read it through a descriptor opened with ``O_NOFOLLOW|O_NONBLOCK`` (a FIFO never blocks a reader).

A write that fails for lack of space raises :class:`~promptweave.errors.NoSpaceError`; the writers leave the
previous file in place, so a rerun resumes from what was finished.
"""
from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from promptweave.errors import NoSpaceError, WorkdirFileError, WorkdirLinkError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
_SPACE_ERRNOS = frozenset(e for e in (errno.ENOSPC, getattr(errno, "EDQUOT", None), errno.EFBIG) if e is not None)


def is_no_space(exc: BaseException) -> bool:
    """Whether an OS error says the disk (or the quota, or the file size limit) is full."""
    return isinstance(exc, OSError) and exc.errno in _SPACE_ERRNOS


def no_space(path: str | Path, exc: BaseException | None = None) -> NoSpaceError:
    why = f" ({os.strerror(exc.errno)})" if isinstance(exc, OSError) and exc.errno else ""
    return NoSpaceError(f"no space left on the device to write the work dir{why}", file=str(path),
                        expected="space freed on that disk (or another work dir, -w); then rerun the same command: "
                                 "finished calls are cached and finished files kept, so the run resumes")


@contextlib.contextmanager
def space_checked(path: str | Path) -> Iterator[None]:
    """Turn a full disk met inside the block into :class:`NoSpaceError` naming ``path``."""
    try:
        yield
    except OSError as exc:
        if is_no_space(exc):
            raise no_space(path, exc) from None
        raise


def _link_error(path: Path, what: str) -> WorkdirLinkError:
    return WorkdirLinkError(f"{what}; promptweave writes only real files and folders inside a work dir",
                            file=str(path), expected="that entry removed (or another work dir, -w)")


def ensure_dir(folder: str | Path, root: str | Path | None = None) -> Path:
    """Create ``folder`` and the folders between ``root`` and it, refusing any component below ``root`` that is a
    link or not a folder; ``root`` itself may be a link the user chose (``-w``). Without ``root`` (a path the user
    named, such as ``-o``), the folders are made as named."""
    folder = Path(folder)
    if root is None:
        with space_checked(folder):
            folder.mkdir(parents=True, exist_ok=True)
        return folder
    base = Path(root)
    try:
        rel = folder.relative_to(base)
        if ".." in rel.parts:
            raise ValueError(rel)
    except ValueError:
        raise _link_error(folder, f"this folder is outside the work dir {base}") from None
    if not base.exists():
        with space_checked(base):
            base.mkdir(parents=True, exist_ok=True)
    cur = base
    for part in rel.parts:
        if part in ("", "."):
            continue
        cur = cur / part
        for _ in range(2):
            try:
                st = os.lstat(cur)
            except FileNotFoundError:
                try:
                    with space_checked(cur):
                        os.mkdir(cur)
                except FileExistsError:  # made meanwhile by another writer: look again
                    continue
                break
            if stat.S_ISLNK(st.st_mode):
                raise _link_error(cur, "this folder of the work dir is a symbolic link")
            if not stat.S_ISDIR(st.st_mode):
                raise _link_error(cur, "this name in the work dir should be a folder but is not")
            break
    return folder


def _temp_beside(path: Path) -> tuple[Path, int]:
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            return tmp, os.open(tmp, _NEW_FILE, 0o644)
        except FileExistsError:
            continue


@contextlib.contextmanager
def atomic_writer(path: str | Path, *, root: str | Path | None = None, binary: bool = False,
                  errors: str = "strict", sync: bool = False) -> Iterator[IO[Any]]:
    """A file object whose contents replace ``path`` when the block ends (nothing changes if it fails);
    ``sync``: the data reaches the disk before the rename."""
    path = Path(path)
    ensure_dir(path.parent, root)
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            raise _link_error(path, "this name in the work dir should be a file but is a folder")
    except FileNotFoundError:
        pass
    with space_checked(path):
        tmp, fd = _temp_beside(path)
    try:
        with space_checked(path):
            with (os.fdopen(fd, "wb") if binary else
                  os.fdopen(fd, "w", encoding="utf-8", errors=errors, newline="")) as fh:
                yield fh
                if sync:
                    fh.flush()
                    os.fsync(fh.fileno())
            os.replace(tmp, path)  # a rename replaces a link at ``path`` itself, never what it points to
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path: str | Path, data: str | bytes, *, root: str | Path | None = None,
                 errors: str = "strict") -> Path:
    """Replace ``path`` with ``data`` at once (see :func:`atomic_writer`)."""
    with atomic_writer(path, root=root, binary=isinstance(data, bytes), errors=errors) as fh:
        fh.write(data)
    return Path(path)


def open_fresh(path: str | Path, *, root: str | Path | None = None) -> IO[bytes]:
    """``path`` created anew for writing in binary, whatever had the name removed first (a link is removed, its
    target left alone); the file is created exclusively, so a link planted in between makes this fail."""
    path = Path(path)
    ensure_dir(path.parent, root)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISDIR(st.st_mode):
            raise _link_error(path, "this name in the work dir should be a file but is a folder")
        os.unlink(path)
    with space_checked(path):
        try:
            fd = os.open(path, _NEW_FILE, 0o644)
        except FileExistsError:
            raise _link_error(path, "this file appeared while promptweave was creating it") from None
    return os.fdopen(fd, "wb")


def remove_file(path: str | Path, *, root: str | Path) -> bool:
    """Remove ``path`` if every folder between ``root`` and it is a real folder (a link itself is removed, never
    what it points to); whether something was removed."""
    path = Path(path)
    try:
        rel = path.parent.relative_to(root)
    except ValueError:
        return False
    cur = Path(root)
    for part in rel.parts:
        cur = cur / part
        try:
            if part == ".." or not stat.S_ISDIR(os.lstat(cur).st_mode):
                return False
        except OSError:
            return False
    try:
        os.unlink(path)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return False
    return True


def open_lock_file(path: str | Path, *, root: str | Path | None = None) -> int:
    """A descriptor on the lock file ``path`` (created if missing), which must be a regular file, not a link."""
    path = Path(path)
    ensure_dir(path.parent, root)
    try:
        with space_checked(path):
            fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _link_error(path, "the work dir's lock file is a symbolic link") from None
        if exc.errno in (errno.EISDIR, errno.ENXIO):
            raise _link_error(path, "the work dir's lock file is not a regular file") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _link_error(path, "the work dir's lock file is not a regular file")
    return fd


def check_not_link(path: str | Path) -> None:
    """Refuse ``path`` if it exists as a link or as anything but a regular file (for files opened by a library
    that would follow a link, such as SQLite)."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise _link_error(path, "this file of the work dir is a symbolic link")
    if not stat.S_ISREG(st.st_mode):
        raise _link_error(path, "this file of the work dir is not a regular file")


# -- reading ----------------------------------------------------------------------------------------------


def confined(path: str | Path, root: str | Path) -> Path:
    """The real path of ``path`` if it is a regular file inside ``root`` (links resolved), else
    :class:`WorkdirFileError` saying why."""
    path = Path(path)
    try:
        real = path.resolve(strict=True)
        home = Path(root).resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # dangling links, link loops
        raise WorkdirFileError(f"not read ({getattr(exc, 'strerror', None) or exc})", file=str(path)) from None
    try:
        real.relative_to(home)
    except ValueError:
        raise WorkdirFileError(f"not read: the file is outside the work dir {root}", file=str(path)) from None
    try:
        if not stat.S_ISREG(os.stat(real).st_mode):
            raise WorkdirFileError("not read: not a regular file", file=str(path))
    except OSError as exc:
        raise WorkdirFileError(f"not read ({exc.strerror or exc})", file=str(path)) from None
    return real


def read_regular(path: str | Path, *, max_bytes: int, root: str | Path | None = None) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``max_bytes`` (inside ``root`` when given), else
    :class:`WorkdirFileError`; a FIFO or a device is never opened for reading, so it cannot block or flood."""
    path = Path(path)
    real = confined(path, root) if root is not None else path
    try:
        fd = os.open(real, os.O_RDONLY | _NONBLOCK | _CLOEXEC | (_NOFOLLOW if root is not None else 0))
    except OSError as exc:
        raise WorkdirFileError(f"not read ({exc.strerror or exc})", file=str(path)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise WorkdirFileError("not read: not a regular file", file=str(path))
        if st.st_size > max_bytes:
            raise WorkdirFileError(f"not read: larger than {max_bytes} bytes", file=str(path))
        chunks, total = [], 0
        while True:
            block = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not block:
                break
            chunks.append(block)
            total += len(block)
            if total > max_bytes:  # grew while being read
                raise WorkdirFileError(f"not read: larger than {max_bytes} bytes", file=str(path))
        return b"".join(chunks)
    except OSError as exc:
        raise WorkdirFileError(f"not read ({exc.strerror or exc})", file=str(path)) from None
    finally:
        os.close(fd)


__all__ = ["atomic_writer", "check_not_link", "confined", "ensure_dir", "is_no_space", "no_space", "open_fresh",
           "open_lock_file", "read_regular", "remove_file", "space_checked", "write_atomic"]
