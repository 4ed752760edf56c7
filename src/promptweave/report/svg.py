"""Small SVG charts drawn here, so the page needs no chart library and no network.

Every label goes through :func:`html.escape`; the SVG is inlined into the page.
"""
from __future__ import annotations

from collections.abc import Sequence
from html import escape

_PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f")


def bar_chart(items: Sequence[tuple[str, str, float]], *, title: str, unit_max: float | None = None) -> str:
    """Horizontal bars: ``(group, series, value)``, a group's bars under its name, each bar labelled with its
    series (the model) and coloured by it."""
    if not items:
        return ""
    order = list(dict.fromkeys(g for g, _, _ in items))
    items = sorted(items, key=lambda it: order.index(it[0]))  # a group's bars together, in first-seen order
    series = list(dict.fromkeys(s for _, s, _ in items))
    top = unit_max or max(100.0, max(v for _, _, v in items))
    label_w, bar_w, row_h = 220, 420, 18
    groups = len(order)
    h = 30 + row_h * (len(items) + groups) + 24 + 16 * len(series)
    out = [(f'<svg class="chart" role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg" '
            f'width="{label_w + bar_w + 70}" height="{h}">'),
           f'<text x="4" y="16" class="t">{escape(title)}</text>']
    y = 30
    last = None
    for group, s, v in items:
        if group != last:
            out.append(f'<text x="4" y="{y + 13}" class="g">{escape(group)}</text>')
            y += row_h
            last = group
        colour = _PALETTE[series.index(s) % len(_PALETTE)]
        w = 0 if top <= 0 else max(0.0, min(1.0, v / top)) * bar_w
        out.append(f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end" class="bar-label">{escape(s)}</text>')
        out.append(f'<rect x="{label_w}" y="{y + 2}" width="{w:.1f}" height="{row_h - 4}" fill="{colour}">'
                   f'<title>{escape(group)} · {escape(s)}: {v:.2f}</title></rect>')
        out.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 13}">{v:.2f}</text>')
        y += row_h
    y += 12
    for k, s in enumerate(series):
        out.append(f'<rect x="{label_w}" y="{y + 16 * k}" width="10" height="10" '
                   f'fill="{_PALETTE[k % len(_PALETTE)]}"/><text x="{label_w + 14}" y="{y + 9 + 16 * k}">'
                   f'{escape(s)}</text>')
    out.append("</svg>")
    return "".join(out)


def histogram(values: Sequence[int], *, title: str, bins: int = 20, unit: str = "chars") -> str:
    """A histogram of prompt lengths with min / median / max marked in the caption."""
    if not values:
        return ""
    lo, hi = min(values), max(values)
    width = max(1, -(-(hi - lo + 1) // bins))
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, (v - lo) // width)] += 1
    used = max(i for i, c in enumerate(counts) if c) + 1
    counts = counts[:used]
    peak = max(counts)
    w, h, pad = 360, 110, 20
    bw = w / len(counts)
    srt = sorted(values)
    med = srt[len(srt) // 2]
    out = [(f'<svg class="chart" role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg" '
            f'width="{w + 2 * pad}" height="{h + 50}">'), f'<text x="4" y="14" class="t">{escape(title)}</text>']
    for i, c in enumerate(counts):
        bh = 0 if not peak else c / peak * h
        a, b = lo + i * width, lo + (i + 1) * width - 1
        out.append(f'<rect x="{pad + i * bw:.1f}" y="{20 + h - bh:.1f}" width="{max(bw - 1, 1):.1f}" '
                   f'height="{bh:.1f}" fill="#4e79a7"><title>{a}–{b} {unit}: {c} prompt(s)</title></rect>')
    out.append(f'<text x="{pad}" y="{h + 36}">{lo}</text>')
    out.append(f'<text x="{pad + w}" y="{h + 36}" text-anchor="end">{hi} {unit}</text>')
    out.append(f'<text x="{pad + w / 2}" y="{h + 36}" text-anchor="middle">median {med} · n={len(values)}</text>')
    out.append("</svg>")
    return "".join(out)


def line_chart(series: Sequence[tuple[str, Sequence[tuple[float, float]]]], *, title: str, x_label: str,
               y_label: str, log_x: bool = False) -> str:
    """Lines of ``(x, y)`` points, one per named series, on shared axes (x on a log scale when ``log_x``),
    each point with its value as a tooltip."""
    import math

    pts = [(x, y) for _, line in series for x, y in line if math.isfinite(x) and math.isfinite(y)]
    if not pts:
        return ""
    w, h, left, top, bottom = 420, 180, 60, 24, 40

    def fx(x: float) -> float:
        return math.log10(x) if log_x and x > 0 else x

    xs = [fx(x) for x, _ in pts]
    x0, x1 = min(xs), max(xs)
    y1 = max(y for _, y in pts) or 1.0
    span = (x1 - x0) or 1.0

    def px(x: float) -> float:
        return left + (fx(x) - x0) / span * w

    def py(y: float) -> float:
        return top + h - (y / y1) * h

    out = [(f'<svg class="chart" role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg" '
            f'width="{left + w + 160}" height="{top + h + bottom}">'),
           f'<text x="4" y="14" class="t">{escape(title)}</text>',
           f'<line x1="{left}" y1="{top + h}" x2="{left + w}" y2="{top + h}" stroke="#888"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + h}" stroke="#888"/>',
           f'<text x="{left - 4}" y="{top + 4}" text-anchor="end">{escape(f"{y1:.4g}")}</text>',
           f'<text x="{left - 4}" y="{top + h}" text-anchor="end">0</text>',
           f'<text x="{left + w / 2}" y="{top + h + 32}" text-anchor="middle">{escape(x_label)}</text>',
           f'<text x="4" y="{top + h / 2}" class="g">{escape(y_label)}</text>']
    for x in sorted({x for x, _ in pts}):
        out.append(f'<text x="{px(x):.1f}" y="{top + h + 16}" text-anchor="middle">{escape(f"{x:g}")}</text>')
    for k, (name, line) in enumerate(series):
        colour = _PALETTE[k % len(_PALETTE)]
        good = sorted((x, y) for x, y in line if math.isfinite(x) and math.isfinite(y))
        if not good:
            continue
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in good)
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{path}"/>')
        for x, y in good:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}">'
                       f'<title>{escape(name)} @ {escape(f"{x:g}")}: {escape(f"{y:.4g}")}</title></circle>')
        out.append(f'<rect x="{left + w + 12}" y="{top + 16 * k}" width="10" height="10" fill="{colour}"/>'
                   f'<text x="{left + w + 26}" y="{top + 9 + 16 * k}">{escape(name)}</text>')
    out.append("</svg>")
    return "".join(out)
