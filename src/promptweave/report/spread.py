"""The spread section of the HTML report (``DIR/spread.json``, written by ``promptweave spread``): per dataset × model, every variant's score as a point (min and max
marked), the spread and PSS, and links to each variant's rows (``variants/<k>/report.html``, the ordinary
report of that variant's folder).

The page is self-contained like the run report: inline styles and SVG, nothing fetched, every text escaped.
"""
from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from promptweave.errors import ReportError
from promptweave.report.leaderboard import leaderboard_html

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_STYLE = """body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}th{background:#f4f4f4}
.best{color:#2e7d32;font-weight:600}.worst{color:#c62828;font-weight:600}code{white-space:pre-wrap}
svg text{font:11px sans-serif}.figs{margin:.3em 0 1em}"""


def _fmt(x: Any, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def strip_plot(fig: dict[str, Any]) -> str:
    """Every variant's score as a point on a 0–100 axis; the best and worst marked, variant 0 ringed."""
    pts = [p for p in fig["points"] if p["score"] is not None]
    n = max(1, len(fig["points"]))
    w, h, left, top, plot_h = 660, 170, 40, 20, 120
    step = (w - left - 20) / max(1, n - 1) if n > 1 else 0
    hi = max(100.0, max((p["score"] for p in pts), default=0))
    title = f"{fig['dataset']} × {fig['model']}: {fig['metric'] or 'score'} per variant"
    out = [f'<svg role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg" width="{w}" '
           f'height="{h}">', f'<text x="4" y="12">{escape(title)}</text>']
    for tick in (0, 25, 50, 75, 100):
        y = top + plot_h - tick / hi * plot_h
        out.append(f'<line x1="{left}" x2="{w - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
                   f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{tick}</text>')
    for p in fig["points"]:
        x = left + p["variant"] * step
        out.append(f'<text x="{x:.1f}" y="{h - 6}" text-anchor="middle">{p["variant"]}</text>')
        if p["score"] is None:
            continue
        y = top + plot_h - p["score"] / hi * plot_h
        colour = "#2e7d32" if p["variant"] == fig["best"] else "#c62828" if p["variant"] == fig["worst"] else "#4e79a7"
        ring = ' stroke="#000" stroke-width="1.5"' if p["variant"] == 0 else ""
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{colour}"{ring}><title>variant {p["variant"]}: '
                   f'{p["score"]:.2f} · {escape(p["description"])}</title></circle>')
    out.append("</svg>")
    return "".join(out)


def spread_section(workdir: str | Path, *, link_prefix: str = "") -> str:
    """The section's HTML for a spread work dir (``spread.json``); empty if the folder holds none."""
    path = Path(workdir) / "spread.json"
    if not path.is_file():
        return ""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"<section><h2>Format spread</h2><p>{escape(str(path))}: unreadable ({escape(str(exc))})</p></section>"
    out = ["<section id='spread'><h2>Format spread</h2>",
           f"<p>{escape(str(data.get('config')))} · seed {data.get('seed')} · up to {data.get('n')} variants per "
           "dataset; variant 0 is the config's template as written.</p>"]
    for fig in data.get("figures", []):
        ci = fig.get("ci95") or [None, None]
        out.append(f"<h3>{escape(fig['dataset'])} × {escape(fig['model'])}</h3><div class='figs'>"
                   f"{escape(fig['metric'] or 'score')}: min {_fmt(fig['min'])} · max {_fmt(fig['max'])} · "
                   f"<b>spread {_fmt(fig['spread'])}</b> · mean {_fmt(fig['mean'])} · std {_fmt(fig['std'])} · "
                   f"mean 95% CI {_fmt(ci[0])}–{_fmt(ci[1])} · <b>PSS {_fmt(fig['pss'], 3)}</b></div>")
        out.append(strip_plot(fig))
        out.append("<table><tr><th>variant</th><th>score</th><th>format</th><th>rows</th></tr>")
        for p in fig["points"]:
            cls = "best" if p["variant"] == fig["best"] else "worst" if p["variant"] == fig["worst"] else ""
            mark = " (best)" if cls == "best" else " (worst)" if cls == "worst" else ""
            href = f"{link_prefix}variants/{p['variant']}/report.html"
            score = _fmt(p["score"]) if p["score"] is not None else escape(str(p.get("status")))
            out.append(f"<tr><td>{p['variant']}</td><td class='{cls}'>{score}{mark}</td>"
                       f"<td><code>{escape(p['description'])}</code></td>"
                       f"<td><a href='{escape(href)}'>rows</a></td></tr>")
        out.append("</table>")
    for r in data.get("rankings", []):
        per = r.get("per_variant", [])
        if not per or len(per[0].get("ranking", [])) < 2:
            continue
        out.append(f"<h3>{escape(r['dataset'])}: model rankings per variant</h3>"
                   f"<p>The top model changes in {r['top_changes']} of {len(per) - 1} variants against variant 0.</p>"
                   "<table><tr><th>variant</th><th>ranking (best first)</th></tr>")
        for p in per:
            out.append(f"<tr><td>{p['variant']}</td><td>{escape(' > '.join(p['ranking']))}</td></tr>")
        out.append("</table>")
    out.append(leaderboard_html(data.get("robustness")))
    if data.get("search"):
        out.append("<h3>Search for the extreme formats</h3><table><tr><th>dataset × model</th><th>best</th>"
                   "<th>worst</th><th>calls used / budget</th><th>stopped</th></tr>")
        for f in data["search"]:
            bi, wi = f.get("best_interval") or [None, None], f.get("worst_interval") or [None, None]
            out.append(f"<tr><td>{escape(f['dataset'])} × {escape(f['model'])}</td>"
                       f"<td>{f['best']} ({_fmt(bi[0], 1)}–{_fmt(bi[1], 1)})</td>"
                       f"<td>{f['worst']} ({_fmt(wi[0], 1)}–{_fmt(wi[1], 1)})</td>"
                       f"<td>{f['calls_used']} / {f['budget']}</td><td>{escape(str(f['stopped']))}</td></tr>")
        out.append("</table>")
    out.append("</section>")
    return "".join(out)


def build_spread_page(workdir: str | Path) -> str:
    """A page of its own for a spread work dir (its variants' rows are in their own reports)."""
    body = spread_section(workdir)
    if not body:
        raise ReportError("no spread.json here", file=str(workdir), expected="the -w folder of promptweave spread")
    return (f"<!doctype html><html><head><meta charset='utf-8'><meta http-equiv='Content-Security-Policy' "
            f"content=\"{_CSP}\"><title>promptweave spread · {escape(Path(workdir).name)}</title>"
            f"<style>{_STYLE}</style></head><body><h1>promptweave spread · {escape(Path(workdir).name)}</h1>"
            f"{body}</body></html>")


__all__ = ["build_spread_page", "spread_section", "strip_plot"]
