"""One writer per work dir: an OS file lock on ``WORKDIR/.lock`` held for the whole run.

``fcntl.flock`` is released by the kernel when the holder dies (kill -9 included), so
a stale lock never blocks a later run. The holder's pid is written into the file for
the waiting run's message only; the lock itself is the flock.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from promptweave.errors import RunError, WorkdirLinkError, WorkdirLockedError
from promptweave.safe_files import is_no_space, no_space, open_lock_file

LOCK_FILE = ".lock"


def _holder(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        pid = os.read(fd, 32).decode("ascii", "replace").strip()
    except OSError:
        pid = ""
    return f"pid {pid}" if pid.isdigit() else "another process"


@contextmanager
def workdir_lock(workdir: str | Path, *, wait: bool = True,
                 notify: Callable[[str], None] | None = None) -> Iterator[Path]:
    """Hold the work dir's lock; wait for it (telling ``notify`` once) or, with ``wait=False``, refuse at once."""
    workdir = Path(workdir)
    path = workdir / LOCK_FILE
    try:
        workdir.mkdir(parents=True, exist_ok=True)
        fd = open_lock_file(path)  # O_NOFOLLOW: a planted link is refused, its target never truncated
    except WorkdirLinkError:
        raise
    except OSError as exc:
        if is_no_space(exc):
            raise no_space(path, exc) from None
        raise RunError(f"cannot create the work dir's lock file: {exc.strerror}", file=str(path),
                       expected="a writable work dir (-w)") from None
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no flock; run unlocked
        fcntl = None  # type: ignore[assignment]
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                who = _holder(fd)
                if not wait:
                    raise WorkdirLockedError(f"another run ({who}) is writing to this work dir",
                                             file=str(workdir), expected="that run to finish (run without "
                                             "--no-wait to wait for it), or another work dir (-w)") from None
                if notify is not None:
                    notify(f"waiting for another run ({who}) that is writing to {workdir} ...")
                fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
        except OSError as exc:
            if is_no_space(exc):
                raise no_space(path, exc) from None
            raise
        yield path
    finally:
        os.close(fd)  # closing the descriptor releases the flock
