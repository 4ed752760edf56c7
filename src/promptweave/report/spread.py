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

from promptweave.errors import ReportError, SpreadFileError, WorkdirFileError
from promptweave.report.leaderboard import leaderboard_html
from promptweave.report.workdir import finite_number
from promptweave.safe_files import read_regular

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_STYLE = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}"
# the section's own rules, scoped to it and carried inside it: the same look on the spread page and in a run's report
_SECTION_STYLE = """.pw-spread table{border-collapse:collapse;margin:.5em 0}
.pw-spread td,.pw-spread th{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}
.pw-spread th{background:#f4f4f4}.pw-spread .best{color:#2e7d32;font-weight:600}
.pw-spread .worst{color:#c62828;font-weight:600}.pw-spread code{white-space:pre-wrap}
.pw-spread svg text{font:11px sans-serif}.pw-spread .figs{margin:.3em 0 1em}"""


MAX_SPREAD_BYTES = 64_000_000


def _fmt(x: Any, digits: int = 2) -> str:
    n = finite_number(x)
    return "-" if n is None else f"{n:.{digits}f}"


def _t(x: Any) -> str:
    """Any value of ``spread.json`` as escaped text (a work dir is data: nothing from it is markup)."""
    if isinstance(x, str):
        return escape(x)
    try:
        text = json.dumps(x, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):
        text = "(unreadable)"
    return escape(text if len(text) <= 2000 else text[:2000] + "…")


def _dict(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _list(x: Any) -> list[Any]:
    return x if isinstance(x, list) else []


def _variant(x: Any) -> int | None:
    """A variant number: a whole number ≥ 0 (anything else is shown as text, never used in a link or position)."""
    return x if isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 1_000_000 else None


def strip_plot(fig: dict[str, Any]) -> str:
    """Every variant's score as a point on a 0–100 axis; the best and worst marked, variant 0 ringed."""
    points = [p for p in (_dict(q) for q in _list(fig.get("points"))) if _variant(p.get("variant")) is not None]
    scored = [(p, s) for p in points if (s := finite_number(p.get("score"))) is not None]
    n = max(1, max((_variant(p["variant"]) or 0 for p in points), default=0) + 1)
    w, h, left, top, plot_h = 660, 170, 40, 20, 120
    first = left + 14  # variant 0's point clear of the axis labels (a score of 0 sits beside the "0")
    step = (w - first - 20) / max(1, n - 1) if n > 1 else 0
    hi = max(100.0, max((s for _, s in scored), default=0))
    metric = fig.get("metric") or "score"
    title = f"{_t(fig.get('dataset'))} × {_t(fig.get('model'))}: {_t(metric)} per variant"
    out = [f'<svg role="img" aria-label="{title}" xmlns="http://www.w3.org/2000/svg" width="{w}" '
           f'height="{h}">', f'<text x="4" y="12">{title}</text>']
    for tick in (0, 25, 50, 75, 100):
        y = top + plot_h - tick / hi * plot_h
        out.append(f'<line x1="{left}" x2="{w - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
                   f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{tick}</text>')
    best, worst = _variant(fig.get("best")), _variant(fig.get("worst"))
    for p in points:
        v = _variant(p["variant"]) or 0
        x = first + v * step
        out.append(f'<text x="{x:.1f}" y="{h - 6}" text-anchor="middle">{v}</text>')
        score = finite_number(p.get("score"))
        if score is None:
            continue
        y = top + plot_h - score / hi * plot_h
        colour = "#2e7d32" if v == best else "#c62828" if v == worst else "#4e79a7"
        ring = ' stroke="#000" stroke-width="1.5"' if v == 0 else ""
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{colour}"{ring}><title>variant {v}: '
                   f'{score:.2f} · {_t(p.get("description"))}</title></circle>')
    out.append("</svg>")
    return "".join(out)


def load_spread(workdir: str | Path) -> dict[str, Any] | None:
    """``spread.json`` of a work dir (None if it has none), read as data: a regular file inside the dir, a JSON
    object; anything else is :class:`~promptweave.errors.SpreadFileError`."""
    root = Path(workdir)
    path = root / "spread.json"
    if not (path.is_symlink() or path.exists()):
        return None
    try:
        data = json.loads(read_regular(path, max_bytes=MAX_SPREAD_BYTES, root=root).decode("utf-8"))
    except WorkdirFileError as exc:
        raise SpreadFileError(exc.message, file=str(path)) from None
    except (ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise SpreadFileError(f"unreadable ({why})", file=str(path),
                              expected="the spread.json `promptweave spread` writes (rerun it)") from None
    if not isinstance(data, dict):
        raise SpreadFileError(f"holds a JSON {type(data).__name__}, not an object", file=str(path),
                              expected="the spread.json `promptweave spread` writes (rerun it)")
    return data


def spread_section(workdir: str | Path, *, link_prefix: str = "") -> str:
    """The section's HTML for a spread work dir (``spread.json``); empty if the folder holds none. Every value
    is escaped and every field may be missing or of another type (shown as text, or ``-``)."""
    try:
        data = load_spread(workdir)
    except SpreadFileError as exc:
        return f"<section><h2>Format spread</h2><p>{escape(str(exc))}</p></section>"
    if data is None:
        return ""
    try:
        return _section(data, link_prefix)
    except RecursionError:
        return ("<section><h2>Format spread</h2><p>spread.json: unreadable (nested too deeply)</p></section>")


def _section(data: dict[str, Any], link_prefix: str) -> str:
    out = [f"<section id='spread' class='pw-spread'><style>{_SECTION_STYLE}</style><h2>Format spread</h2>",
           f"<p>{_t(data.get('config'))} · seed {_t(data.get('seed'))} · up to {_t(data.get('n'))} variants per "
           "dataset; variant 0 is the config's template as written.</p>"]
    for fig in (_dict(f) for f in _list(data.get("figures"))):
        ci = _list(fig.get("ci95")) + [None, None]
        out.append(f"<h3>{_t(fig.get('dataset'))} × {_t(fig.get('model'))}</h3><div class='figs'>"
                   f"{_t(fig.get('metric') or 'score')}: min {_fmt(fig.get('min'))} · max {_fmt(fig.get('max'))} · "
                   f"<b>spread {_fmt(fig.get('spread'))}</b> · mean {_fmt(fig.get('mean'))} · "
                   f"std {_fmt(fig.get('std'))} · mean 95% CI {_fmt(ci[0])}–{_fmt(ci[1])} · "
                   f"<b>PSS {_fmt(fig.get('pss'), 3)}</b></div>")
        out.append(strip_plot(fig))
        out.append("<table><tr><th>variant</th><th>score</th><th>format</th><th>rows</th></tr>")
        best, worst = _variant(fig.get("best")), _variant(fig.get("worst"))
        for p in (_dict(q) for q in _list(fig.get("points"))):
            v = _variant(p.get("variant"))
            cls = "best" if v is not None and v == best else "worst" if v is not None and v == worst else ""
            mark = " (best)" if cls == "best" else " (worst)" if cls == "worst" else ""
            score = _fmt(p.get("score")) if finite_number(p.get("score")) is not None else _t(p.get("status"))
            link = ("-" if v is None else
                    f"<a href='{escape(link_prefix)}variants/{v}/report.html'>rows</a>")
            out.append(f"<tr><td>{_t(p.get('variant'))}</td><td class='{cls}'>{score}{mark}</td>"
                       f"<td><code>{_t(p.get('description'))}</code></td><td>{link}</td></tr>")
        out.append("</table>")
    for r in (_dict(x) for x in _list(data.get("rankings"))):
        per = [_dict(p) for p in _list(r.get("per_variant"))]
        if not per or len(_list(per[0].get("ranking"))) < 2:
            continue
        out.append(f"<h3>{_t(r.get('dataset'))}: model rankings per variant</h3>"
                   f"<p>The top model changes in {_t(r.get('top_changes'))} of {len(per) - 1} variants against "
                   "variant 0.</p><table><tr><th>variant</th><th>ranking (best first)</th></tr>")
        for p in per:
            ranking = " > ".join(str(m) if isinstance(m, str) else json.dumps(m, default=str)[:200]
                                 for m in _list(p.get("ranking")))
            out.append(f"<tr><td>{_t(p.get('variant'))}</td><td>{escape(ranking)}</td></tr>")
        out.append("</table>")
    out.append(leaderboard_html(data.get("robustness")))
    found = [_dict(f) for f in _list(data.get("search"))]
    if found:
        out.append("<h3>Search for the extreme formats</h3><table><tr><th>dataset × model</th><th>best</th>"
                   "<th>worst</th><th>calls used / budget</th><th>stopped</th></tr>")
        for f in found:
            bi = _list(f.get("best_interval")) + [None, None]
            wi = _list(f.get("worst_interval")) + [None, None]
            out.append(f"<tr><td>{_t(f.get('dataset'))} × {_t(f.get('model'))}</td>"
                       f"<td>{_t(f.get('best'))} ({_fmt(bi[0], 1)}–{_fmt(bi[1], 1)})</td>"
                       f"<td>{_t(f.get('worst'))} ({_fmt(wi[0], 1)}–{_fmt(wi[1], 1)})</td>"
                       f"<td>{_t(f.get('calls_used'))} / {_t(f.get('budget'))}</td><td>{_t(f.get('stopped'))}</td>"
                       "</tr>")
        out.append("</table>")
    out.append("</section>")
    return "".join(out)


def build_spread_page(workdir: str | Path) -> str:
    """A page of its own for a spread work dir (its variants' rows are in their own reports)."""
    data = load_spread(workdir)  # a hostile or damaged spread.json: its typed error
    if data is None:
        raise ReportError("no spread.json here", file=str(workdir), expected="the -w folder of promptweave spread")
    try:
        body = _section(data, "")
    except RecursionError:
        raise SpreadFileError("unreadable (nested too deeply)", file=str(Path(workdir) / "spread.json")) from None
    return (f"<!doctype html><html><head><meta charset='utf-8'><meta http-equiv='Content-Security-Policy' "
            f"content=\"{_CSP}\"><title>promptweave spread · {escape(Path(workdir).name)}</title>"
            f"<style>{_STYLE}</style></head><body><h1>promptweave spread · {escape(Path(workdir).name)}</h1>"
            f"{body}</body></html>")


__all__ = ["build_spread_page", "load_spread", "spread_section", "strip_plot"]
