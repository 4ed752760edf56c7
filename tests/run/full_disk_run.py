"""The toy run on a nearly full disk, then again once space is freed, each in a fresh process, as a user would
rerun it. Run as ``unshare -rm python full_disk_run.py URL FOLDER FREE_BYTES`` (a user and mount namespace,
where mounting a small tmpfs needs no privilege); prints one line per run: ``ok`` or the error line the
command line would print."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def _fill(folder: Path, free: int) -> None:
    """Leave about ``free`` bytes on the file system of ``folder``."""
    st = os.statvfs(folder)
    with open(folder / "filler", "wb") as fh:
        fh.write(b"\0" * max(0, st.f_bavail * st.f_frsize - free))


def one_run(url: str, work: Path) -> None:
    from toy_run import toy_tasks

    from promptweave.cli.app import error_line
    from promptweave.run import run_tasks

    try:
        outs = run_tasks(toy_tasks(url), work, show_progress=False)
        print("ok" if all(o.ok for o in outs) else "failed: " + "; ".join(str(o.error) for o in outs), flush=True)
    except BaseException as exc:  # noqa: BLE001 - what the command line would print, typed or not
        print(error_line(exc), flush=True)


def files(folder: Path) -> None:
    """A page and a journal written on a full disk: the typed error, the old page kept, no temporary file left."""
    from promptweave.cli.app import error_line
    from promptweave.safe_files import open_fresh, space_checked, write_atomic

    disk = folder / "disk"
    disk.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], check=True)
    write_atomic(disk / "w" / "report.html", "old page", root=disk / "w")
    _fill(disk, 0)
    for attempt in ("page", "journal"):
        try:
            if attempt == "page":
                write_atomic(disk / "w" / "report.html", "new page " * 100_000, root=disk / "w")
            else:
                journal = disk / "w" / "p.jsonl.partial"  # as the run's journal writes: space_checked
                with space_checked(journal), open_fresh(journal, root=disk / "w") as fh:
                    fh.write(b"row\n" * 100_000)
            print("written", flush=True)
        except BaseException as exc:  # noqa: BLE001 - what the command line would print, typed or not
            print(error_line(exc), flush=True)
    print("kept:", (disk / "w" / "report.html").read_text(), flush=True)
    print("left:", sorted(p.name for p in (disk / "w").iterdir()), flush=True)


def main() -> None:
    if sys.argv[1] == "--one":
        one_run(sys.argv[2], Path(sys.argv[3]))
        return
    if sys.argv[1] == "--files":
        files(Path(sys.argv[2]))
        return
    url, folder, free = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    disk = folder / "disk"
    disk.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], check=True)
    _fill(disk, free)
    for _ in range(2):
        subprocess.run([sys.executable, __file__, "--one", url, str(disk / "w")], check=True)
        (disk / "filler").unlink(missing_ok=True)  # space freed: the rerun resumes
    shutil.copytree(disk / "w" / "predictions", folder / "predictions")


if __name__ == "__main__":
    main()
