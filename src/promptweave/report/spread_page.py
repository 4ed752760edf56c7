"""Writing a spread work dir's pages: each variant's own report, and ``DIR/report.html`` linking them."""
from __future__ import annotations

from pathlib import Path

from promptweave.report.page import build_report, write_report
from promptweave.report.spread import build_spread_page
from promptweave.safe_files import write_atomic


def write_spread_report(workdir: str | Path, out: str | Path | None = None, *,
                        root: str | Path | None = None) -> Path:
    """Each variant's report (``DIR/variants/<k>/report.html``, its rows) and the page that links them (``out``,
    default ``DIR/report.html``): the run's report with its spread section when DIR also holds a plain run's
    results, else the spread section on a page of its own. Every page inside DIR is written through an
    exclusively created temporary file, and a variant folder that is a link is refused (``root``: the folder
    ``out`` lies in when the user named it inside DIR)."""
    home = Path(workdir)
    found = (home / "variants").iterdir() if (home / "variants").is_dir() else ()
    for k in sorted(int(p.name) for p in found if p.name.isdigit()):
        vdir = home / "variants" / str(k)
        if (vdir / "results").is_dir() or (vdir / "predictions").is_dir():
            write_report([vdir], vdir / "report.html", root=home)
    ran = (home / "results").is_dir() or (home / "predictions").is_dir()
    html = build_report(home) if ran else build_spread_page(home)
    if out is None:
        out, root = home / "report.html", home
    return write_atomic(Path(out), html, root=root, errors="replace")

__all__ = ["write_spread_report"]
