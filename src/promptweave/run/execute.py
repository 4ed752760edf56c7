"""Executing tasks: inference through the cache, scoring, and writing predictions and results."""
from __future__ import annotations

import contextlib
import gc
import json
import warnings
from array import array
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from promptweave import safe_files
from promptweave.errors import NoSpaceError, PromptweaveError, PromptweaveWarning, RowsFailedWarning, RunError
from promptweave.evaluate.intervals import score_intervals
from promptweave.forms.registry import form_for
from promptweave.infer import ResponseCache
from promptweave.infer.failure import ON_ROW_ERROR
from promptweave.infer.records import RecordChunk
from promptweave.run.lock import workdir_lock
from promptweave.run.truncation import cut_warning, run_owns_the_warning
from promptweave.run.usage import TokenTally, measure_rows
from promptweave.work.batches import ROWS_PER_BATCH, batches
from promptweave.work.output import (
    causes_text,
    failure_causes,
    failure_summary,
    jsonl,
    predictions_path,
    results_path,
    write_atomic,
)
from promptweave.work.task import Task, TaskOutcome

CACHE_FILE = "cache.sqlite"


def _rows(task: Task, records: Sequence[Any], model: Any, cache: ResponseCache,
          progress: Callable[[int], None] | None) -> list[dict[str, Any]]:
    """Prediction rows of one batch of records (a failed request's row carries ``error`` instead of an answer)."""
    if task.refused is not None:  # refused at plan time (e.g. ppl on a chat API)
        raise task.refused
    run_owns_the_warning(model)
    form = form_for(task.mode)
    if form.columnar and task.golds is not None and isinstance(records, RecordChunk) and records.columnar:
        # a compiled chunk read by its columns: no record object, so none carries extra notes
        by_index: dict[int, Any] | None = None
        golds = task.golds

        def gold(i: int) -> Any:
            return golds.get(i)
    else:
        by_index = {}
        for r in records:
            by_index.setdefault(r.index, r)

        def gold(i: int) -> Any:
            return task.gold(by_index[i])
    out = form.rows(task, records, model, cache, progress, gold)
    for row in out if by_index is not None else ():  # examples dropped to fit max_seq_len: keep what the
        extra = getattr(by_index[row["index"]], "extra", None) or {}  # type: ignore[index]  # retriever chose as well
        if "retrieved_ids" in extra:
            row["retrieved_ids"] = list(extra["retrieved_ids"])
    # how many tokens a local model received, and whether and how it cut each prompt (truncation is data)
    measure_rows(out, task, model, cache)
    return out


class _JournalPrompts(Sequence):
    """The prompts of a task's journal rows, read from the file only when an evaluator asks for them."""

    def __init__(self, path: Path, offsets: Sequence[int], keep: Sequence[int], key: str = "prompt") -> None:
        self.path, self.offsets, self.keep = path, offsets, keep
        self.key = key  # another field of the rows ("steps"), read the same lazy way

    def __len__(self) -> int:
        return len(self.keep)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        with open(self.path, "rb") as f:
            f.seek(self.offsets[self.keep[i]])
            return json.loads(f.readline()).get(self.key)

    def __iter__(self) -> Iterator[Any]:
        want = self.keep if isinstance(self.keep, range) else set(self.keep)
        with open(self.path, encoding="utf-8") as f:
            for n, line in enumerate(f):
                if n in want:
                    yield json.loads(line).get(self.key)


def _score(task: Task, preds: list[Any], golds: list[Any], failed: Sequence[int], on_row_error: str,
           prompts: Callable[[Sequence[int]], Sequence[Any]], indices: Sequence[int], cache: ResponseCache,
           workdir: Path) -> tuple[dict[str, Any], list[Any], list[bool | None], list[Any] | None]:
    """Results fields, processed golds, per-row verdicts and judge records; failed rows per ``on_row_error``.

    ``wrong`` scores a failed row as an empty answer and marks it incorrect; ``skip``
    leaves it out of the metrics (its ``correct`` is None); ``fail`` scores like ``skip``
    (the task is then reported as failed). Evaluators get the test rows, the prompts (read
    back from the journal only if they use them), the cache and the judge, as
    ``evaluate.score_rows`` gives them.
    """
    ev = task.evaluation
    golds = [ev.process_gold(g) for g in golds]
    keep: Sequence[int] = ([i for i, f in enumerate(failed) if not f] if on_row_error != "wrong"
                           else range(len(golds)))
    correct: list[bool | None] = [None] * len(golds)
    if not keep:
        return {"metrics": {}}, golds, correct, None
    ctx = ev.context([indices[i] for i in keep], prompts=prompts(keep), cache=cache, workdir=workdir)
    if "steps" in ev.needs:  # CIBenchEvaluator reads the agent's recorded steps
        ctx.steps = prompts(keep, "steps")  # type: ignore[call-arg]
    scores = ev.score(["" if failed[i] else preds[i] for i in keep], [golds[i] for i in keep], ctx)
    for i, ok in zip(keep, scores.correct):
        correct[i] = None if ok is None else bool(ok) and not failed[i]
    judges: list[Any] | None = None
    details = getattr(scores, "details", None)
    if details is not None and len(details) == len(keep):
        judges = [None] * len(golds)
        for i, d in zip(keep, details):
            if isinstance(d, dict) and "judge" in d:
                judges[i] = d["judge"]
    out: dict[str, Any] = {"metrics": scores.metrics}
    if getattr(scores, "extra", None):
        out["evaluation"] = scores.extra
    return out, golds, correct, judges


def _failed_result(task: Task, error: str) -> dict[str, Any]:
    return {"dataset": task.dataset, "model": task.model_name, "mode": task.mode, "status": "failed",
            "error": error}


def _check_on_row_error(on_row_error: str) -> None:
    if on_row_error not in ON_ROW_ERROR:
        raise RunError("unknown --on-row-error", field="on_row_error", value=on_row_error,
                       expected=" / ".join(ON_ROW_ERROR))


def execute_task(task: Task, model: Any, workdir: Path, cache: ResponseCache,
                 progress: Callable[[int], None] | None = None, *, on_row_error: str = "wrong",
                 rows_per_batch: int = ROWS_PER_BATCH) -> TaskOutcome:
    """Run one task into its predictions and results files.

    Rows go through in batches of ``rows_per_batch``: each batch is sent, and its
    predictions appended to a ``.partial`` journal, before the next is built into
    requests; the scored, final predictions file replaces the journal at the end. A
    row whose request failed on its own is recorded with its error and scored per
    ``on_row_error``; an error that concerns the whole model stops this task only
    (finished calls stay cached, so a rerun sends only what is missing).
    """
    _check_on_row_error(on_row_error)
    writes_before = cache.writes
    cut_before = getattr(getattr(model, "stats", None), "truncated_prompts", None)
    ppath = predictions_path(workdir, task)
    journal = ppath.with_name(ppath.name + ".partial")
    try:
        whole = form_for(task.mode).run_task(task, model, cache, progress, ppath, workdir, on_row_error)
        if whole is not None:  # a form that runs (and writes) its task at once
            extra, n_rows = whole
        else:
            extra, n_rows = _stream_rows(task, model, cache, progress, ppath, journal, on_row_error,
                                         rows_per_batch, workdir)
    except NoSpaceError:
        raise  # the whole run stops: nothing more can be written, and a rerun resumes from the cache
    except PromptweaveError as exc:
        return _task_error(task, workdir, exc, ppath, journal)
    cut = model.stats.truncated_prompts - cut_before if cut_before is not None else 0
    return _task_done(task, workdir, extra, n_rows, ppath, on_row_error, cache.writes - writes_before, cut)


def _task_error(task: Task, workdir: Path, exc: PromptweaveError, ppath: Path, journal: Path) -> TaskOutcome:
    """The task failed (a model error, or scoring after the predictions were written): its results say why."""
    outcome = TaskOutcome(task.dataset, task.model_name, task.mode, task.rows)
    outcome.error = exc.text if isinstance(exc, _ScoringFailed) else str(exc)
    if isinstance(exc, _ScoringFailed):
        outcome.predictions_path = str(ppath)
    with contextlib.suppress(OSError):
        safe_files.remove_file(journal, root=workdir)  # never through a folder linked out of the work dir
    write_atomic(results_path(workdir, task), json.dumps(_failed_result(task, outcome.error), indent=2,
                                                         ensure_ascii=False), root=workdir)
    return outcome


def _verdicts(ppath: Path) -> Iterator[dict[str, Any]]:
    """Each prediction row's verdict and what groups it (conversation, turn), read back from the final file."""
    if not ppath.is_file():
        return
    with open(ppath, encoding="utf-8") as f:
        for line in f:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict):
                yield {k: row[k] for k in ("correct", "index", "turn_id", "turn") if k in row}


def _task_done(task: Task, workdir: Path, extra: dict[str, Any], n_rows: int, ppath: Path, on_row_error: str,
               sent: int, cut: int, task_rows: int | None = None) -> TaskOutcome:
    """The scored task's outcome and results file (failed rows counted and reported per ``on_row_error``)."""
    outcome = TaskOutcome(task.dataset, task.model_name, task.mode, task.rows if task_rows is None else task_rows)
    outcome.metrics = extra["metrics"]
    outcome.predictions_path = str(ppath)
    outcome.failed_conversations = len(extra.get("failed_conversations") or [])
    outcome.failed_rows = int(extra.get("failed_rows") or 0)
    outcome.sent = sent
    outcome.causes = list(extra.get("row_error_causes") or [])
    status = "partial" if outcome.failed_rows or outcome.failed_conversations else "done"
    if outcome.failed_rows and (on_row_error == "fail" or outcome.failed_rows >= n_rows):
        status = "failed"
        every = "every row" if outcome.failed_rows >= n_rows else f"{outcome.failed_rows} row(s)"
        outcome.error = (f"{every} failed: {causes_text(outcome.causes)}; the errors are in the predictions; rerun "
                         "the same command to retry only them")
    intervals = score_intervals(outcome.metrics, list(_verdicts(ppath)))
    outcome.ci95 = intervals.ci95
    result = {"dataset": task.dataset, "model": task.model_name, "mode": task.mode, "status": status,
              "rows": n_rows, **extra, **intervals.fields(), "predictions": str(ppath)}
    if outcome.error:
        result["error"] = outcome.error
    if outcome.failed_conversations:
        warnings.warn(f"{task.model_name} · {task.dataset}: {outcome.failed_conversations} conversation(s) ended "
                      "early on a failed request (recorded in the predictions); rerun the same command to retry "
                      "them", PromptweaveWarning, stacklevel=3)
    if outcome.failed_rows and status == "partial":
        how = "scored as wrong" if on_row_error == "wrong" else "left out of the metrics"
        warnings.warn(f"{task.model_name} · {task.dataset}: {outcome.failed_rows} row(s) failed and were {how}: "
                      f"{causes_text(outcome.causes)}; rerun the same command to retry only them",
                      RowsFailedWarning, stacklevel=3)
    if "truncated_prompts" not in result:  # forms whose rows do not record it (multi-turn): the model's count
        result["truncated_prompts"] = cut
        cut_warning(task, cut, n_rows, None)
    write_atomic(results_path(workdir, task), json.dumps(result, indent=2, ensure_ascii=False), root=workdir)
    return outcome


# -- ray helper: the same task execution split in two, so an executor can infer row ranges anywhere
# (infer_rows) and finish the task once on the merged rows (finish_task) through the local path's own
# journal, scoring and results code; execute_task above stays the local executor's single pass.
def infer_rows(task: Task, model: Any, cache: Any, progress: Callable[[int], None] | None = None, *,
               rows_per_batch: int = ROWS_PER_BATCH) -> tuple[list[dict[str, Any]], dict | None]:
    """The task's prediction rows for its records (any row range), failed rows with their ``error``; not scored.

    ``cache`` is anything with ResponseCache's ``get_many`` / ``put_many``. The second
    value is None, or what :func:`finish_task` needs for a form that scores its own rows (multi-turn).
    """
    got = form_for(task.mode).infer_rows(task, model, cache, progress)
    if got is not None:  # a form that gives its rows (and what scoring needs) at once
        return got
    if task.refused is not None:  # forms hook: refused at plan time (e.g. ppl on a chat API)
        raise task.refused
    out: list[dict[str, Any]] = []
    for batch in batches(task.records, rows_per_batch):
        out.extend(_rows(task, batch, model, cache, progress))
    return out, None


def task_failed(task: Task, workdir: Path, error: str) -> TaskOutcome:
    """Record a task that could not run (its results file says why)."""
    outcome = TaskOutcome(task.dataset, task.model_name, task.mode, task.rows, error=error)
    write_atomic(results_path(workdir, task), json.dumps(_failed_result(task, error), indent=2, ensure_ascii=False),
                 root=workdir)
    return outcome


def finish_task(task: Task, rows: list[dict[str, Any]], meta: dict | None, workdir: Path, *, cache: ResponseCache,
                sent: int = 0, truncated: int = 0, rows_total: int | None = None,
                on_row_error: str = "wrong") -> TaskOutcome:
    """Score the task's rows (all of them, in row order) and write its predictions and results, as
    :func:`execute_task` does; ``sent`` counts the calls made for ``rows`` (judge calls made here are added)."""
    _check_on_row_error(on_row_error)
    writes_before = cache.writes
    ppath = predictions_path(workdir, task)
    journal = ppath.with_name(ppath.name + ".partial")
    n_total = task.rows if rows_total is None else rows_total
    try:
        if meta is not None:  # the form scores its own rows
            extra = form_for(task.mode).score_rows(task, rows, meta)
            write_atomic(ppath, "".join(jsonl(r) for r in rows), root=workdir)
            n_rows = n_total
        else:
            state = _Journal(journal, workdir)
            state.open()
            try:
                state.add(rows)
            finally:
                state.close()
            extra, n_rows = _finish_journal(task, state, ppath, journal, on_row_error, cache, workdir)
    except NoSpaceError:
        raise
    except PromptweaveError as exc:
        out = _task_error(task, workdir, exc, ppath, journal)
        out.rows = n_total
        return out
    return _task_done(task, workdir, extra, n_rows, ppath, on_row_error, sent + cache.writes - writes_before,
                      truncated, n_total)


class _Journal:
    """A task's ``.partial`` journal being written: the rows' lines, and what scoring needs of them."""

    def __init__(self, path: Path, workdir: Path | None = None) -> None:
        self.path, self.workdir = path, workdir
        self.preds: list[Any] = []
        self.golds: list[Any] = []
        # compact columns (a task's rows are only ever appended): the run's memory grows by about 17
        # bytes a row here, not about 70
        self.failed = bytearray()
        self.indices = array("q")
        self.offsets = array("q")
        self.errors: list[dict[str, Any]] = []
        self.cut = 0  # rows whose prompt the model cut to fit max_seq_len
        self.cut_example: dict[str, Any] | None = None
        self.tokens = TokenTally()
        self.out: Any = None

    def open(self) -> None:
        # a fresh file, never a planted link's target; closed by close(), rows are added across batches
        self.out = safe_files.open_fresh(self.path, root=self.workdir)

    def close(self) -> None:
        with safe_files.space_checked(self.path):
            self.out.close()

    def add(self, rows: list[dict[str, Any]]) -> None:
        with safe_files.space_checked(self.path):
            self._add(rows)

    def _add(self, rows: list[dict[str, Any]]) -> None:
        for r in rows:
            self.offsets.append(self.out.tell())
            self.out.write(jsonl(r).encode("utf-8", "backslashreplace"))
            self.preds.append(r["prediction"])
            self.golds.append(r["gold"])
            self.indices.append(r["index"])
            self.failed.append("error" in r)
            if "error" in r:
                self.errors.append(r["error"])
            self.tokens.add(r)
            if "truncated" in r:
                self.cut += 1
                self.cut_example = self.cut_example or r["truncated"]
        self.out.flush()


def _stream_rows(task: Task, model: Any, cache: ResponseCache, progress: Callable[[int], None] | None,
                 ppath: Path, journal: Path, on_row_error: str, rows_per_batch: int,
                 workdir: Path) -> tuple[dict[str, Any], int]:
    """Infer batch by batch into the journal, score, then write the final predictions file; the result's fields.

    A scoring failure fails the task but keeps its (unscored) predictions.
    """
    if task.refused is not None:  # forms hook: refused at plan time (e.g. ppl on a chat API)
        raise task.refused
    state = _Journal(journal, workdir)
    state.open()
    try:
        for batch in batches(task.records, rows_per_batch):
            rows = _rows(task, batch, model, cache, progress)
            state.add(rows)
            del rows, batch
    finally:
        state.close()
    return _finish_journal(task, state, ppath, journal, on_row_error, cache, workdir)


def _finish_journal(task: Task, state: _Journal, ppath: Path, journal: Path, on_row_error: str,
                    cache: ResponseCache, workdir: Path) -> tuple[dict[str, Any], int]:
    """Score the journal's rows, then replace it by the final predictions file; the result's fields."""
    offsets, golds, errors = state.offsets, state.golds, state.errors
    try:
        extra, golds, correct, judges = _score(task, state.preds, golds, state.failed, on_row_error,
                                               partial(_JournalPrompts, journal, offsets),
                                               state.indices,
                                               cache, workdir)
        scoring_error = None
    except PromptweaveError as exc:
        extra, correct, judges, scoring_error = {"metrics": {}}, None, None, str(exc)
    state.preds = []
    # the final file: the journal's rows with the processed gold and the verdict, replaced at once
    with safe_files.atomic_writer(ppath, root=workdir, errors="backslashreplace") as dst, \
            open(journal, encoding="utf-8") as src:
        for n, line in enumerate(src):
            if correct is not None:
                row = json.loads(line)
                row["gold"] = golds[n]
                row["correct"] = correct[n]
                if judges is not None and judges[n] is not None:
                    row["judge"] = judges[n]
                line = jsonl(row)
            dst.write(line)
    journal.unlink()
    if scoring_error is not None:
        raise _ScoringFailed(scoring_error)
    if errors:
        extra.update(failed_rows=len(errors), on_row_error=on_row_error, row_errors=failure_summary(errors),
                     row_error_causes=failure_causes(errors))
    extra["truncated_prompts"] = state.cut  # on every run, cached or not: counted from the rows
    extra["tokens"] = state.tokens.result()
    cut_warning(task, state.cut, len(golds), state.cut_example)
    return extra, len(golds)


class _ScoringFailed(PromptweaveError):
    """Scoring failed after the predictions were written: the task fails, its predictions stay."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.text = message


def run_tasks(tasks: Sequence[Task], workdir: str | Path, *, limit: int | None = None, show_progress: bool = True,
              console: Any = None, on_row_error: str = "wrong", wait: bool = True,
              notify: Callable[[str], None] | None = None) -> list[TaskOutcome]:
    """Run every task (grouped by model, each model built once), writing into ``workdir``.

    The work dir is locked for the whole run (one writer at a time): a second run waits
    for the first (telling ``notify``) or, with ``wait=False``, raises
    :class:`~promptweave.errors.WorkdirLockedError`.
    """
    if on_row_error not in ON_ROW_ERROR:
        raise RunError("unknown --on-row-error", field="on_row_error", value=on_row_error,
                       expected=" / ".join(ON_ROW_ERROR))
    workdir = Path(workdir)
    tasks = [t.limited(limit) for t in tasks]
    order: dict[str, list[Task]] = {}
    for t in tasks:
        order.setdefault(t.model_name, []).append(t)
    outcomes: list[TaskOutcome] = []
    # the loaded config and data live for the whole run: keep the collector from walking them at every batch
    gc.collect()
    gc.freeze()
    try:
        _run_locked(tasks, order, workdir, outcomes, show_progress, console, on_row_error, wait, notify)
    finally:
        gc.unfreeze()
    return outcomes


def _run_locked(tasks: list[Task], order: dict[str, list[Task]], workdir: Path, outcomes: list[TaskOutcome],
                show_progress: bool, console: Any, on_row_error: str, wait: bool,
                notify: Callable[[str], None] | None) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with workdir_lock(workdir, wait=wait, notify=notify), ResponseCache(workdir / CACHE_FILE) as cache, Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=console, disable=not show_progress, transient=False) as bar:
        bars = {id(t): bar.add_task(f"{t.model_name} · {t.dataset}", total=t.calls) for t in tasks}
        for name, group in order.items():
            try:  # a model whose every task was refused at plan time is never loaded: each fails with its reason
                refused = all(t.refused is not None for t in group)
                model = None if refused else group[0].make_model()
            except PromptweaveError as exc:
                for t in group:  # each task says why it has no predictions
                    outcomes.append(TaskOutcome(t.dataset, name, t.mode, t.rows, error=str(exc)))
                    write_atomic(results_path(workdir, t), json.dumps(_failed_result(t, str(exc)), indent=2,
                                                                      ensure_ascii=False), root=workdir)
                continue
            for t in group:
                bid = bars[id(t)]
                outcomes.append(execute_task(t, model, workdir, cache,
                                             partial(bar.advance, bid), on_row_error=on_row_error))
            del model
            gc.collect()
        summary = [{**o.__dict__} for o in outcomes]
        write_atomic(workdir / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False, default=str),
                     root=workdir)


def summary_table(outcomes: Sequence[TaskOutcome]) -> Any:
    """A rich table of dataset × model results (a task whose every row failed shows no score)."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="promptweave results")
    for col in ("dataset", "model", "mode", "rows", "metric", "score", "95% CI", "status"):
        table.add_column(col, overflow="fold" if col in ("metric", "status") else "ellipsis")  # names and causes stay whole
    for o in outcomes:
        if o.ok:
            status = "done"
            if o.failed_conversations:
                status = f"[yellow]partial[/yellow]: {o.failed_conversations} conversation(s) failed"
            elif o.failed_rows:
                status = f"[yellow]partial[/yellow]: {o.failed_rows} row(s) failed: {escape(causes_text(o.causes))}"
            for metric, value in (o.metrics.items() or [("-", None)]):
                ci = o.ci95.get(metric)
                table.add_row(o.dataset, o.model, o.mode, str(o.rows), metric,
                              "-" if value is None else f"{value:.2f}",
                              f"{ci[0]:.2f} – {ci[1]:.2f}" if ci else "-", status)
        else:
            table.add_row(o.dataset, o.model, o.mode, str(o.rows), "-", "-", "-", "[red]failed[/red] (see below)")
    return table
