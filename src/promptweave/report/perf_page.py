"""The perf page: latency percentiles and throughput against concurrency, from a work dir's perf index.

Reads ``performances/perf_index.jsonl`` (one line per measured model, dataset and level) and draws, per model and
dataset, TTFT / TPOT / ITL / E2EL (median and P99, ms) and request and output-token throughput against the
concurrency, with the table of every level. Every value from the work dir is escaped.
"""
from __future__ import annotations

import json
import math
from html import escape
from pathlib import Path
from typing import Any

from promptweave.report.svg import line_chart

INDEX = Path("performances") / "perf_index.jsonl"


def read_levels(workdir: Path) -> list[dict]:
    """The index's lines (the last per model, dataset and level), sorted; [] when there is none."""
    path = Path(workdir) / INDEX
    if not path.is_file() or path.is_symlink():
        return []
    latest: dict[tuple, dict] = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            if isinstance(line, dict) and isinstance(line.get("total"), dict):
                latest[(str(line.get("model")), str(line.get("dataset")), str(line.get("concurrency")))] = line
    return sorted(latest.values(), key=lambda d: (str(d.get("model")), str(d.get("dataset")), _num(d.get(
        "concurrency"))))


def _num(v: Any) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f if math.isfinite(f) else math.nan


def _stat(line: dict, metric: str, stat: str) -> float:
    stats = (line.get("total") or {}).get("stats") or {}
    m = stats.get(metric) if isinstance(stats, dict) else None
    return _num(m.get(stat)) if isinstance(m, dict) else math.nan


def _fmt(v: float, scale: float = 1.0, nd: int = 1) -> str:
    return "–" if not math.isfinite(v) else f"{v * scale:.{nd}f}"


def perf_section(workdir: Path) -> str:
    """The perf figures of ``workdir`` as an HTML fragment ('' when it has none)."""
    lines = read_levels(workdir)
    if not lines:
        return ""
    groups: dict[tuple[str, str], list[dict]] = {}
    for line in lines:
        groups.setdefault((str(line.get("model")), str(line.get("dataset"))), []).append(line)
    out = ["<section id='perf' class='perf'><h2>Serving performance</h2>"]
    for (model, dataset), levels in groups.items():
        out.append(f"<h3>{escape(model)} · {escape(dataset)}</h3>")
        xs = [_num(d.get("concurrency")) for d in levels]
        for metric in ("TTFT", "TPOT", "ITL", "E2EL"):
            series = [(f"{metric} {stat}", [(x, _stat(d, metric, stat) * 1000) for x, d in zip(xs, levels)])
                      for stat in ("Median", "P99")]
            out.append(line_chart(series, title=f"{metric} (ms) against concurrency", x_label="concurrency",
                                  y_label="ms", log_x=True))
        tput = [("output token/s", [(x, _num((d.get("total") or {}).get("Output Token Throughput")))
                                    for x, d in zip(xs, levels)])]
        out.append(line_chart(tput, title="Output token throughput against concurrency", x_label="concurrency",
                              y_label="token/s", log_x=True))
        req = [("request/s", [(x, _num((d.get("total") or {}).get("Request Throughput"))) for x, d in zip(xs, levels)])]
        out.append(line_chart(req, title="Request throughput against concurrency", x_label="concurrency",
                              y_label="req/s", log_x=True))
        head = ("concurrency", "requests", "failed", "reached", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99",
                "ITL p50", "ITL p99", "E2EL p50", "E2EL p99", "req/s", "out token/s", "steady state")
        out.append("<table><thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr></thead><tbody>")
        for x, d in zip(xs, levels):
            t = d.get("total") or {}
            cells = [_fmt(x, nd=0), _fmt(_num(t.get("Total Requests")), nd=0),
                     _fmt(_num(t.get("Failed Requests")), nd=0), _fmt(_num(t.get("Concurrency")), nd=2)]
            for metric in ("TTFT", "TPOT", "ITL", "E2EL"):
                cells += [_fmt(_stat(d, metric, "Median"), 1000), _fmt(_stat(d, metric, "P99"), 1000)]
            cells += [_fmt(_num(t.get("Request Throughput")), nd=3), _fmt(_num(t.get("Output Token Throughput")))]
            st = d.get("stable")
            cells.append(f"{_fmt(_num(st.get('Success Requests')), nd=0)} requests" if isinstance(st, dict)
                         else "none")
            out.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
        out.append("</tbody></table><p class='note'>Latencies in ms; files in performances/"
                   f"{escape(model)}/ ({escape(dataset)}@c&lt;N&gt;.csv / .json).</p>")
    out.append("</section>")
    return "".join(out)


_STYLE = ("body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;"
          "margin:1em 0}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right;font-size:13px}"
          "svg.chart{margin:6px;font-size:11px}svg .t{font-weight:bold}.note{color:#666;font-size:13px}")


def write_perf_page(workdir: Path) -> Path:
    """``<workdir>/perf.html``: the perf section as a page of its own."""
    body = perf_section(Path(workdir)) or "<p>No perf results in this work dir.</p>"
    html = (f"<!doctype html><html><head><meta charset='utf-8'><title>perf · {escape(str(Path(workdir).name))}"
            f"</title><style>{_STYLE}</style></head><body><h1>Serving performance</h1>{body}</body></html>")
    path = Path(workdir) / "perf.html"
    tmp = path.with_name("perf.html.partial")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(path)
    return path
