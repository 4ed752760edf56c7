"""A planned unit of work: one dataset's prompts on one model."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from promptweave.errors import PromptweaveError
from promptweave.evaluate import Evaluation
from promptweave.infer.records import RecordChunk, RecordLike
from promptweave.models.base import GenerationParams


class LazyRecords:
    """A task's prompt records, built on demand ``chunk`` rows at a time and never all kept.

    Iterating yields the records in row order (a row's PPL labels together) as
    ``build(indices)`` makes them, so a task of any size streams through
    ``execute_task`` with only a batch of prompts alive at once.
    """

    def __init__(self, build: Callable[[Sequence[int]], Iterable[Any]], indices: Sequence[int],
                 per_row: int = 1, chunk: int = 4096,
                 chunks: Callable[[Sequence[int]], Iterable[list]] | None = None) -> None:
        self.build = build
        self.indices = list(indices)
        self.per_row = per_row
        self.chunk = max(1, chunk)
        self.chunks = chunks  # the builder's record lists (PromptBuilder.record_chunks), for batches()

    def __iter__(self) -> Iterator[Any]:
        # chained in C (perf): a generator here would add a Python frame switch per record
        chunks = (self.indices[s:s + self.chunk] for s in range(0, len(self.indices), self.chunk))
        return chain.from_iterable(map(self.build, chunks))

    def batches(self, rows: int) -> Iterator[RecordChunk]:
        """The records in lists of at most ``rows`` rows (a row's labels together), each with its ``prompts``.

        A batch that is one compiled chunk comes as the builder made it: no pass over its records.
        """
        rows = max(1, rows)
        for s in range(0, len(self.indices), rows):
            part = self.indices[s:s + rows]
            got = list(self.chunks(part)) if self.chunks is not None else [list(self.build(part))]
            if len(got) == 1 and isinstance(got[0], RecordChunk):
                yield got[0]
            else:
                yield RecordChunk(chain.from_iterable(got))
            del got

    def __len__(self) -> int:
        return len(self.indices) * self.per_row

    @property
    def rows(self) -> int:
        return len(self.indices)

    def select_rows(self, start: int, stop: int | None = None) -> LazyRecords:
        """The records of rows ``start:stop`` (by position among this task's rows)."""
        return LazyRecords(self.build, self.indices[start:stop], self.per_row, self.chunk, self.chunks)


@dataclass
class Task:
    """Dataset × model. ``make_model`` builds the backend lazily (shared by tasks with the same model name).

    ``mode`` names its form (``forms/registry.py``). Gold answers come from ``golds`` (row index → gold) or
    else from ``record.row[gold_column]``; a multi-turn task's from each turn's answer. A
    multi-turn task has one :class:`ConversationRecord` per row and its ``multiturn``
    inferencer; ``score_per`` / ``conversation_reduce`` choose its headline figure.
    """

    dataset: str
    model_name: str
    make_model: Callable[[], Any]
    records: Sequence[Any] | LazyRecords  # RecordLike or ConversationRecords, or records built as the task runs
    mode: str = "gen"
    params: GenerationParams = field(default_factory=GenerationParams)
    evaluation: Evaluation = field(default_factory=Evaluation)
    golds: dict | None = None
    gold_column: str | None = None
    choices: Sequence[str] = ()
    normalizing_str: str | None = None
    multiturn: Any = None
    score_per: str = "turn"
    conversation_reduce: str = "all"
    # what the form needs beyond params, from its dataset_settings (sc_size; each row's 'cont')
    settings: dict = field(default_factory=dict)
    # why this task cannot run (a ppl form on a chat API, code without --allow-code-exec): raised when it runs,
    # shown by a dry run and lint; the other tasks of the plan still run
    refused: PromptweaveError | None = None

    @property
    def rows(self) -> int:
        if isinstance(self.records, LazyRecords):
            return self.records.rows
        return len({r.index for r in self.records})

    @property
    def calls(self) -> int:
        """Model calls the task makes (a conversation makes one per BOT turn)."""
        if isinstance(self.records, LazyRecords):
            return len(self.records)
        return sum(getattr(r, "requests", 1) for r in self.records)

    def limited(self, limit: int | None) -> Task:
        """The same task restricted to its first ``limit`` rows (all labels of a kept row stay)."""
        if limit is None:
            return self
        if isinstance(self.records, LazyRecords):
            return Task(**{**self.__dict__, "records": self.records.select_rows(0, limit)})
        keep: list[int] = []
        for r in self.records:
            if r.index not in keep:
                if len(keep) == limit:
                    continue
                keep.append(r.index)
        kept = set(keep)
        return Task(**{**self.__dict__, "records": [r for r in self.records if r.index in kept]})

    def gold(self, record: RecordLike) -> Any:
        if self.golds is not None:
            return self.golds.get(record.index)
        row = getattr(record, "row", None) or {}
        if self.gold_column is not None:
            return row.get(self.gold_column)
        return None


@dataclass
class ConversationRecord:
    """A multi-turn row in a plan: its index and how many model calls it takes."""

    index: int
    requests: int
    shot_ids: list = field(default_factory=list)
    rendered: Any = None


@dataclass
class TaskOutcome:
    dataset: str
    model: str
    mode: str
    rows: int
    metrics: dict = field(default_factory=dict)
    sent: int = 0
    error: str | None = None
    predictions_path: str | None = None
    failed_conversations: int = 0
    failed_rows: int = 0
    ci95: dict = field(default_factory=dict)  # metric -> [lo, hi] (evaluate/intervals.py)
    causes: list = field(default_factory=list)  # failed rows grouped by kind (work/output.failure_causes)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def complete(self) -> bool:
        """Done with nothing left to retry (no failed row, no conversation ended by a failed request)."""
        return self.ok and not self.failed_conversations and not self.failed_rows
