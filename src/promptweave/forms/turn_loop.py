"""Run multi-turn conversations against any model: one call per BOT turn, predictions per turn.

The model is a *generate* callable: it takes a list of rendered prompts (a
string for a text model, a message list for a chat model) and returns one reply
per prompt, or ``None`` (or the exception) where that request failed. :func:`as_generate` wraps a
:class:`~promptweave.models.base.ChatModel` or
:class:`~promptweave.models.base.TextModel`.

Conversations advance in waves: request *k* of every row still running goes
to the model in one batch, since in ``every`` mode it depends on reply *k-1*.
A failed request ends its row, as in AISBench.

This module owns the conversation loop and only calls down: the template
(``prompt/multiturn``) gives each request's dialogue, the engine renders it, and
:class:`CachedGenerate` sends it through the response cache (``infer/dispatch``).
``forms/multiturn`` turns the results into prediction rows and scores; nothing here
calls back up into the run.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from promptweave.engine.builder import render_prompt
from promptweave.engine.spec import DatasetSpec, ModelSpec
from promptweave.errors import ModelError, TemplateError
from promptweave.infer.dispatch import CachedCaller
from promptweave.infer.records import is_messages
from promptweave.models.base import ChatModel, GenerationParams, TextModel
from promptweave.prompt.dialogue import Dialogue
from promptweave.prompt.multiturn import (
    Conversation,
    MultiTurnPromptTemplate,
    check_mode,
)
from promptweave.render.chat import to_openai_messages
from promptweave.safe_files import atomic_writer

Generate = Callable[[list[Any]], Sequence[Any]]


class StopRun(ModelError):
    """Raised by a generate callable when no further request can succeed (say, a rejected API key).

    It stops the whole run, where any other error fails only its requests.
    """

    code = "PW430"


@dataclass
class TurnResult:
    """One model call of a conversation."""

    index: int
    turn_id: int
    success: bool
    prediction: str
    gold: Any = None
    prompt: Any = None  # what the model received
    error: str | None = None

    def reference_record(self) -> dict[str, Any]:
        """The record AISBench writes for a request: ``{turn_id, success, prediction}``."""
        return {"turn_id": self.turn_id, "success": self.success, "prediction": self.prediction}


@dataclass
class ConversationResult:
    index: int
    turns: list[TurnResult] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return all(t.success for t in self.turns)


@dataclass
class TurnView:
    """One request's prompt, for viewing: the filled dialogue and what the model receives."""

    turn_id: int
    prompt: Dialogue
    rendered: Any
    gold: Any = None


# a rejection no request can get past (key or model wrong) stops the task instead of failing one conversation
FATAL_STATUS = frozenset({401, 403, 404})


class CachedGenerate:
    """A generate callable (prompts → replies) that reads and writes the response cache.

    Each call is looked up in the cache first, so a resumed run re-sends only calls
    that never finished: in ``every`` mode call *k* holds the model's earlier replies,
    which on resume come from the cache, so the request (and its key) is the same.
    A batch that raises is sent again one request at a time (finished calls come
    from the cache, so only unfinished ones go out again), so each failure is told
    apart and returned as that request's exception.
    """

    def __init__(self, model: Any, params: GenerationParams, cache: Any,
                 progress: Callable[[int], None] | None = None) -> None:
        self.caller = CachedCaller(model, cache, progress)
        self.cache = cache
        self.params = params

    def __call__(self, prompts: list[Any]) -> list[Any]:
        out: list[Any] = [None] * len(prompts)
        kinds = ["chat" if is_messages(p) else "generate" for p in prompts]
        for kind in ("chat", "generate"):
            idx = [i for i, k in enumerate(kinds) if k == kind]
            if not idx:
                continue
            try:
                got = self.caller.call(kind, [prompts[i] for i in idx], self.params)
            except Exception as exc:  # noqa: BLE001 - one request's failure must not end the others
                self._stop_if_fatal(exc)
                got = [exc] if len(idx) == 1 else self._one_by_one(kind, [prompts[i] for i in idx])
            for i, v in zip(idx, got):
                out[i] = v
        return out

    def _one_by_one(self, kind: str, prompts: Sequence[Any]) -> list[Any]:
        keys = [self.caller.key(kind, p, self.params) for p in prompts]
        found = self.cache.get_many(keys) if self.cache is not None else {}  # finished in the failed batch
        out: list[Any] = []
        for p, key in zip(prompts, keys):
            if key in found:
                out.append(found[key])
                continue
            try:
                out.append(self.caller.call(kind, [p], self.params)[0])
            except Exception as exc:  # noqa: BLE001
                self._stop_if_fatal(exc)
                out.append(exc)
        return out

    @staticmethod
    def _stop_if_fatal(exc: BaseException) -> None:
        if isinstance(exc, ModelError) and getattr(exc, "status", None) in FATAL_STATUS:
            raise StopRun(exc.message, field=exc.field, value=exc.value) from exc


# --------------------------------------------------------------------------- model adapters
def as_generate(model: Any, params: GenerationParams | None = None) -> Generate:
    """A generate callable for a ChatModel, a TextModel or a plain callable (returned as is)."""
    params = params or GenerationParams()
    if isinstance(model, ChatModel):
        def chat(prompts: list[Any]) -> Sequence[str | None]:
            return model.chat([to_openai_messages(p) for p in prompts], params)

        return chat
    if isinstance(model, TextModel):
        def text(prompts: list[Any]) -> Sequence[str | None]:
            for p in prompts:
                if not isinstance(p, str):
                    raise ModelError("a text model needs string prompts; this meta template yields token ids or "
                                     "messages", value=type(p).__name__)
            return model.generate(prompts, params)

        return text
    if callable(model):
        return model
    raise ModelError("the model must be a ChatModel, a TextModel or a callable(prompts) -> replies",
                     value=type(model).__name__)


# --------------------------------------------------------------------------- the inferencer
class MultiTurnGenInferencer:
    """Multi-turn generation for one dataset × model.

    ``infer_mode`` is ``every`` (history holds the model's replies),
    ``every_with_gt`` (history holds the ground truth) or ``last`` (one call,
    ground truth up to the last answer); by default the dataset's
    ``inferencer.infer_mode``, else ``every``. Works for chat APIs and for
    local text models (through the text renderer).
    """

    def __init__(self, dataset: DatasetSpec, model: ModelSpec, generate: Any = None, *,
                 infer_mode: str | None = None, batch_size: int = 16, strict: bool = False,
                 params: GenerationParams | None = None, template: Any = None) -> None:
        # template: another source of requests with the same interface (ChatInferencer's row chats,
        # forms/chat_loop.py), so one loop runs every kind of conversation
        tpl = dataset.template if template is None else template
        if template is None and not isinstance(tpl, MultiTurnPromptTemplate):
            raise TemplateError("MultiTurnGenInferencer needs a MultiTurnPromptTemplate", file=dataset.file,
                                field=f"{dataset.field}.infer_cfg.prompt_template.type",
                                value=getattr(tpl, "kind_name", type(tpl).__name__),
                                expected="MultiTurnPromptTemplate")
        self.dataset = dataset
        self.model = model
        self.template: MultiTurnPromptTemplate = tpl  # type: ignore[assignment]  # or a source with its interface
        mode = infer_mode or dataset.inferencer.settings.get("infer_mode") or ("every" if template is None else "last")
        self.infer_mode = check_mode(mode)
        self.generate = None if generate is None else as_generate(generate, params)
        if batch_size < 1:
            raise TemplateError("batch_size must be at least 1", field="batch_size", value=batch_size)
        self.batch_size = batch_size
        self.strict = strict

    # ------------------------------------------------------------------ prompts
    def conversation(self, index: int) -> Conversation:
        try:
            row = self.dataset.test[index]
        except IndexError:
            from promptweave.errors import DataError

            raise DataError(f"row {index} is out of range: the test split has {len(self.dataset.test)} rows",
                            file=self.dataset.file, field="test", value=index) from None
        return self.template.conversation(row, index=index, file=self.dataset.file, strict=self.strict)

    def gold(self, conv: Conversation, k: int) -> Any:
        """The ground truth request ``k`` of ``conv`` is judged against."""
        if self.infer_mode == "last":
            return conv.answers[-1] if len(conv) else None
        return conv.answers[k // self.template.bots_per_round]

    def dialogue(self, conv: Conversation, k: int, replies: Sequence[str] | None = None) -> Dialogue:
        if self.infer_mode == "last":
            return self.template.last_prompt(conv)
        return self.template.prompt(conv, k, replies if self.infer_mode == "every" else None)

    def render(self, prompt: Dialogue) -> Any:
        return render_prompt(prompt, self.model, "gen")

    def turn_prompts(self, index: int, replies: Sequence[str] | None = None) -> list[TurnView]:
        """Each request's prompt for row ``index`` (for ``view``).

        In ``every`` mode the history needs the model's replies: pass them, or
        each missing one shows as ``<model reply to turn k>``.
        """
        conv = self.conversation(index)
        n = self.template.n_requests(conv, self.infer_mode)
        if self.infer_mode == "every":
            got = list(replies or [])
            replies = got + [f"<model reply to turn {j}>" for j in range(len(got), n)]
        out = []
        for k in range(n):
            d = self.dialogue(conv, k, replies)
            out.append(TurnView(k, d, self.render(d), self.gold(conv, k)))
        return out

    # ------------------------------------------------------------------ running
    def _call(self, prompts: list[Any]) -> list[tuple[str | None, str | None]]:
        if self.generate is None:
            raise ModelError("no model to run: pass generate= (a ChatModel, TextModel or callable)")
        out: list[tuple[str | None, str | None]] = []
        for start in range(0, len(prompts), self.batch_size):
            chunk = prompts[start:start + self.batch_size]
            try:
                replies = list(self.generate(chunk))
            except StopRun:
                raise
            except Exception as exc:  # a failed call fails its requests; the run goes on
                out.extend((None, f"{type(exc).__name__}: {exc}") for _ in chunk)
                continue
            if len(replies) != len(chunk):
                raise ModelError(f"the model returned {len(replies)} replies for {len(chunk)} prompts",
                                 value=len(replies), expected=str(len(chunk)))
            for r in replies:
                if isinstance(r, Exception):
                    out.append((None, f"{type(r).__name__}: {r}"))
                    continue
                if r is not None and not isinstance(r, str):
                    raise ModelError("a reply must be a string (or None for a failed request)",
                                     value=type(r).__name__)
                out.append((r, None if r is not None else "request failed"))
        return out

    def run_cached(self, model: Any, cache: Any, params: GenerationParams, indices: Sequence[int],
                   progress: Callable[[int], None] | None = None) -> list[ConversationResult]:
        """Run these conversations on ``model`` through the response cache (a wave is one batch)."""
        self.generate = CachedGenerate(model, params, cache, progress)
        self.batch_size = max(1, len(indices))  # the cached caller splits a wave for the backend
        return self.run(indices)

    def run(self, indices: Iterable[int] | None = None) -> list[ConversationResult]:
        """Run every conversation (or those in ``indices``); results per row, predictions per turn."""
        idx = list(range(len(self.dataset.test)) if indices is None else indices)
        convs = {i: self.conversation(i) for i in idx}
        results = {i: ConversationResult(i) for i in idx}
        replies: dict[int, list[str]] = {i: [] for i in idx}
        todo = {i: self.template.n_requests(convs[i], self.infer_mode) for i in idx}
        active = [i for i in idx if todo[i] > 0]
        k = 0
        while active:
            prompts = [self.render(self.dialogue(convs[i], k, replies[i])) for i in active]
            answers = self._call(prompts)
            still = []
            for i, prompt, (reply, err) in zip(active, prompts, answers):
                ok = reply is not None
                results[i].turns.append(TurnResult(i, k, ok, reply or "", self.gold(convs[i], k), prompt,
                                                   err))
                if reply is not None:
                    replies[i].append(reply)
                    if k + 1 < todo[i]:
                        still.append(i)
            active = still
            k += 1
        return [results[i] for i in idx]


# --------------------------------------------------------------------------- predictions and scores
def write_predictions(results: Iterable[ConversationResult], path: str | Path) -> int:
    """Write one JSON line per turn (``index``, ``turn_id``, ``success``, ``prediction``, ``gold``, ``prompt``).

    Returns the number of lines written.
    """
    n = 0
    with atomic_writer(Path(path)) as fh:  # never through a link planted at that name
        for conv in results:
            for t in conv.turns:
                rec = asdict(t)
                if rec.get("error") is None:
                    rec.pop("error")
                fh.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
                n += 1
    return n


def read_predictions(path: str | Path) -> list[ConversationResult]:
    """Read what :func:`write_predictions` wrote, grouped back into conversations."""
    convs: dict[int, ConversationResult] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                convs.setdefault(rec["index"], ConversationResult(rec["index"])).turns.append(TurnResult(**rec))
    return list(convs.values())


def score(results: Sequence[ConversationResult], metric: Callable[[str, Any], float], *, per: str = "turn",
          reduce: str = "mean") -> dict[str, Any]:
    """Score predictions against each turn's ground truth.

    ``per="turn"``: the mean over all turns, and per ``turn_id``.
    ``per="conversation"``: each conversation is reduced first (``mean`` of its
    turns, or ``all``: 1 only if every turn scores 1), then averaged. A failed
    request scores 0.
    """
    if per not in ("turn", "conversation"):
        raise TemplateError("per must be 'turn' or 'conversation'", field="per", value=per)
    if reduce not in ("mean", "all"):
        raise TemplateError("reduce must be 'mean' or 'all'", field="reduce", value=reduce)
    per_turn: dict[int, list[float]] = {}
    per_conv: list[float] = []
    for conv in results:
        vals = [float(metric(t.prediction, t.gold)) if t.success else 0.0 for t in conv.turns]
        for t, v in zip(conv.turns, vals):
            per_turn.setdefault(t.turn_id, []).append(v)
        if vals:
            per_conv.append(sum(vals) / len(vals) if reduce == "mean" else float(all(v >= 1.0 for v in vals)))
    if per == "turn":
        flat = [v for vs in per_turn.values() for v in vs]
        return {"score": sum(flat) / len(flat) if flat else 0.0, "n": len(flat),
                "by_turn": {k: sum(v) / len(v) for k, v in sorted(per_turn.items())}}
    return {"score": sum(per_conv) / len(per_conv) if per_conv else 0.0, "n": len(per_conv), "reduce": reduce}


def turn_prompts(dataset: DatasetSpec, model: ModelSpec, index: int, *, infer_mode: str | None = None,
                 replies: Sequence[str] | None = None) -> list[TurnView]:
    """Each request's rendered prompt for row ``index`` (what ``promptweave view`` shows per turn)."""
    return MultiTurnGenInferencer(dataset, model, infer_mode=infer_mode).turn_prompts(index, replies)


def scripted(replies: Sequence[str | None], received: list[Any] | None = None) -> Generate:
    """A model double for tests and conformance: returns ``replies`` in request order.

    ``None`` (or running out of replies) is a failed request; every prompt is
    appended to ``received``.
    """
    it = iter(list(replies))
    sink = received if received is not None else []

    def generate(prompts: list[Any]) -> list[str | None]:
        sink.extend(prompts)
        return [next(it, None) for _ in prompts]

    return generate


__all__ = [
    "CachedGenerate",
    "ConversationResult",
    "MultiTurnGenInferencer",
    "StopRun",
    "TurnResult",
    "TurnView",
    "as_generate",
    "read_predictions",
    "score",
    "scripted",
    "turn_prompts",
    "write_predictions",
]
