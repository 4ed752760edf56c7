"""Writing a spread work dir's pages: each variant's own report, and ``DIR/report.html`` linking them."""
from __future__ import annotations

from pathlib import Path

from promptweave.report.page import build_report, write_report
from promptweave.report.spread import build_spread_page


def write_spread_report(workdir: str | Path, out: str | Path | None = None) -> Path:
    """Each variant's report (``DIR/variants/<k>/report.html``, its rows) and the page that links them (``out``,
    default ``DIR/report.html``): the run's report with its spread section when DIR also holds a plain run's
    results, else the spread section on a page of its own."""
    root = Path(workdir)
    found = (root / "variants").iterdir() if (root / "variants").is_dir() else ()
    for k in sorted(int(p.name) for p in found if p.name.isdigit()):
        vdir = root / "variants" / str(k)
        if (vdir / "results").is_dir() or (vdir / "predictions").is_dir():
            write_report([vdir], vdir / "report.html")
    ran = (root / "results").is_dir() or (root / "predictions").is_dir()
    html = build_report(root) if ran else build_spread_page(root)
    out = Path(out) if out is not None else root / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(out)
    return out


__all__ = ["write_spread_report"]
