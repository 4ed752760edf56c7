"""Writing the self-contained HTML page: Jinja2 for the page, rows as gzip+base64 JSON decoded in the browser.

Nothing is fetched at view time: styles, script and SVG charts are inline and the
page's Content-Security-Policy forbids any connection. Row data is only ever put into
the page as text (``textContent``), never as markup.
"""
from __future__ import annotations

import base64
import datetime as dt
import gzip
import json
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from promptweave.render.chat import OPENAI_ROLES
from promptweave.report import svg
from promptweave.report.compare import changed_rows, score_deltas
from promptweave.report.paired import compare_tasks
from promptweave.report.rows import prompt_chars
from promptweave.report.table import headline, score_table
from promptweave.report.workdir import WorkDir, finite_number, iter_predictions, load_workdir
from promptweave.safe_files import atomic_writer

_MAX_DEPTH = 64  # deeper values from a work dir's files are shown as a note, so no writer recurses without end


def _asset(name: str) -> str:
    return resources.files("promptweave.report").joinpath("assets", name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _template() -> Any:
    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    return env.from_string(_asset("report.html.j2"))


def _shallow(obj: Any, depth: int = _MAX_DEPTH) -> Any:
    """``obj`` with anything nested deeper than ``depth`` replaced by a note."""
    if isinstance(obj, (dict, list)) and depth <= 0:
        return "(nested too deeply to show)"
    if isinstance(obj, dict):
        return {k: _shallow(v, depth - 1) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_shallow(v, depth - 1) for v in obj]
    return obj


def _json(obj: Any, **kw: Any) -> str:
    """JSON the browser's JSON.parse accepts: NaN and infinities (Python's json reads them from a work dir's
    files) become null rather than tokens that would stop the whole page from loading."""
    try:
        return _finite_json(obj, **kw)
    except RecursionError:
        return _finite_json(_shallow(obj), **kw)


def _finite_json(obj: Any, **kw: Any) -> str:
    try:
        return json.dumps(obj, ensure_ascii=False, default=str, allow_nan=False, **kw)
    except ValueError:
        text = json.dumps(obj, ensure_ascii=False, default=str, **kw)
        return json.dumps(json.loads(text, parse_constant=lambda _: None), ensure_ascii=False, **kw)


def _blob(obj: Any) -> str:
    # a lone surrogate read from an edited predictions file ("\\ud800") cannot be UTF-8: it shows as U+FFFD
    raw = _json(obj, separators=(",", ":")).encode("utf-8", "replace")
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def _script_json(obj: Any) -> str:
    # inside <script> only "</" and line separators can end or break it; escape "<" wholesale
    text = _json(obj)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _task_payloads(wd: WorkDir, prefix: str) -> tuple[list[dict], list[tuple[str, str]], list[str]]:
    index, blobs, charts = [], [], []
    for k, t in enumerate(wd.tasks):
        rows = list(iter_predictions(t.predictions, wd.problems))
        blob_id = f"{prefix}rows-{k}"
        lengths = [_chars(r.get("prompt")) for r in rows]
        index.append({"key": t.key, "model": t.model, "dataset": t.dataset, "mode": t.mode, "status": t.status,
                      "error": t.error, "n": len(rows), "blob": blob_id, "metrics": t.metrics,
                      "predictions": str(t.predictions) if t.predictions else None,
                      "result": _shallow({k2: v for k2, v in t.result.items() if k2 not in ("metrics",)}),
                      "wrong": sum(1 for r in rows if r.get("correct") is False),
                      "errors": sum(1 for r in rows if r.get("error")),
                      "chars_mean": round(sum(lengths) / len(lengths)) if lengths else 0,
                      "chars_max": max(lengths, default=0), "tokens": _tokens(t.result, rows)})
        blobs.append((blob_id, _blob(rows)))
        if lengths:
            charts.append(svg.histogram(lengths, title=f"prompt length · {t.dataset} × {t.model}"))
    return index, blobs, charts


def _chars(prompt: Any) -> int:
    try:
        return prompt_chars(prompt)
    except RecursionError:  # nested past any real prompt (an edited predictions file)
        return 0


def _tokens(result: dict, rows: list[dict]) -> str:
    """Tokens the task used, as its results recorded them (older runs: summed from the rows' usage, if any)."""
    got = result.get("tokens")
    if isinstance(got, dict) and finite_number(got.get("prompt")) is not None:
        exact = str(got.get("counted", "")).startswith("exact")
        return (f"{_whole(got['prompt']):,} prompt / {_whole(got.get('output')):,} output"
                + ("" if exact else " (estimated)"))
    usage = [r["usage"] for r in rows if isinstance(r.get("usage"), dict)]
    if usage:
        p = sum(_whole(u.get("prompt_tokens")) for u in usage)
        c = sum(_whole(u.get("completion_tokens")) for u in usage)
        return f"{p:,} prompt / {c:,} output (reported by the API)"
    return "-"


def _whole(value: Any) -> int:
    """A token count from a work dir file; text, NaN or infinity counts as 0."""
    n = finite_number(value)
    return int(n) if n is not None else 0


def build_report(workdir: str | Path, *, title: str | None = None) -> str:
    """The HTML page for one work dir."""
    wd = load_workdir(workdir)
    index, blobs, charts = _task_payloads(wd, "")
    heads = headline(wd)
    scores = svg.bar_chart([(f"{d} · {m}", mod, v) for d, mod, m, v in heads],
                           title="headline score per dataset, one bar per model")
    from promptweave.report.perf_page import perf_section  # perf hook: serving performance, when DIR holds it
    from promptweave.report.spread import spread_section  # the format spread, when DIR holds one

    return _template().render(
        title=title or f"promptweave report · {wd.path.name}", mode="single", generated=_now(),
        table=score_table(wd), intervals=interval_rows(wd), runs=[_run_view(wd, index, blobs, charts, scores)],
        spread=spread_section(wd.path) + perf_section(wd.path),
        css=_asset("report.css"), js=_asset("report.js"),
        index_json=_script_json({"mode": "single", "runs": [{"tasks": index}], "wire_roles": dict(OPENAI_ROLES)}),
        deltas=[])


def build_compare(a: str | Path, b: str | Path, *, title: str | None = None) -> str:
    """The HTML page comparing two work dirs (A, then B)."""
    wa, wb = load_workdir(a), load_workdir(b)
    runs = []
    for prefix, wd in (("a-", wa), ("b-", wb)):
        index, blobs, charts = _task_payloads(wd, prefix)
        heads = headline(wd)
        scores = svg.bar_chart([(f"{d} · {m}", mod, v) for d, mod, m, v in heads], title="headline scores")
        runs.append(_run_view(wd, index, blobs, charts, scores))
    deltas = with_tests(score_deltas(wa, wb), *compare_tasks(wa, wb))
    changes = changed_rows(wa, wb)
    blob = _blob(changes)
    return _template().render(
        title=title or f"promptweave compare · {wa.path.name} vs {wb.path.name}", mode="compare",
        generated=_now(), table=None, runs=runs, css=_asset("report.css"), js=_asset("report.js"),
        deltas=deltas, changes_blob=blob, intervals=[],
        index_json=_script_json({"mode": "compare", "runs": [{"tasks": r["index"]} for r in runs],
                                 "changes": [{"model": c["model"], "dataset": c["dataset"], "n": len(c["changed"]),
                                              "unchanged": c["unchanged"], "unmatched": c["unmatched"],
                                              "truncated": c["truncated"], "counts": c["counts"]}
                                             for c in changes], "wire_roles": dict(OPENAI_ROLES)}))


def interval_rows(wd: WorkDir) -> list[dict]:
    """Each score with its 95% interval and the method, as the results files give them."""
    out = []
    for t in wd.tasks:
        ci = t.result.get("metrics_ci95") if isinstance(t.result, dict) else None
        how = t.result.get("ci_method") if isinstance(t.result, dict) else None
        if not isinstance(ci, dict):
            continue
        for metric, value in t.metrics.items():
            bounds = ci.get(metric)
            if (isinstance(bounds, list) and len(bounds) == 2
                    and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in bounds)):
                out.append({"dataset": t.dataset, "model": t.model, "metric": metric, "score": value,
                            "lo": float(bounds[0]), "hi": float(bounds[1]), "n": t.result.get("n"),
                            "method": str(how.get(metric, "")) if isinstance(how, dict) else ""})
    return out


def with_tests(deltas: list[dict], paired: list[dict], note: str | None) -> list[dict]:
    """The score deltas with each paired test beside its row; paired by dataset across model abbrs, the paired
    entries are the rows (the per-abbr ones would all be "absent")."""
    if note:
        return [{"dataset": e["dataset"], "model": f"{e['model_a']} → {e['model_b']}", "metric": e["metric"],
                 "a": e["a"], "b": e["b"], "delta": e["delta"], "a_status": "done", "b_status": "done", **_test(e)}
                for e in paired]
    by_key = {(e["dataset"], e["model_a"], e["metric"]): e for e in paired}
    return [{**d, **_test(by_key.get((d["dataset"], d["model"], d["metric"])))} for d in deltas]


def _test(e: dict | None) -> dict:
    if e is None or e.get("p_value") is None:
        return {"ci95": None, "p_value": None, "p_holm": None, "significant": None, "n": e["n"] if e else None}
    return {k: e[k] for k in ("ci95", "p_value", "p_holm", "significant", "n")}


def _run_view(wd: WorkDir, index: list, blobs: list, charts: list, scores: str) -> dict:
    return {"path": str(wd.path), "name": wd.path.name, "meta": _meta_rows(wd.meta), "problems": wd.problems,
            "index": index, "blobs": blobs, "charts": charts, "scores_chart": scores, "table": score_table(wd)}


def _meta_rows(meta: dict) -> list[tuple[str, str]]:
    out = []
    for k, v in meta.items():
        out.append((k, v if isinstance(v, str) else _json(v)))  # nesting of any depth, NaN: shown, not fatal
    return out


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def write_report(workdirs: Sequence[str | Path], out: str | Path, *, root: str | Path | None = None) -> Path:
    """Write the report of one work dir, or the comparison of two, to ``out``; returns the path.

    ``root``: the work dir ``out`` lies in, when it does (the default output): the page is written through an
    exclusively created temporary file and no folder below ``root`` may be a link."""
    html = build_report(workdirs[0]) if len(workdirs) == 1 else build_compare(workdirs[0], workdirs[1])
    out = Path(out)
    # errors="replace": lone surrogates from the work dir's files
    with atomic_writer(out, root=root, errors="replace") as fh:
        fh.write(html)
    return out
