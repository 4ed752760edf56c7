"""Tree-of-thought search (OpenCompass's ``ToTInferencer``): breadth-first over thought steps, the model its own judge.

Each row's prompt ``x`` (the filled template, a string) starts a search with one empty partial answer. At every
step each kept partial answer ``y`` is extended — ``propose``: one call to the propose prompt, each line of the
reply a new thought; ``sample``: the standard / cot prompt, each reply a continuation — and every candidate is
valued by the model (``value``: the value prompt of that candidate, its replies' last lines mapped to numbers) and
the ``n_select_sample`` best are kept (``greedy``; ``sample`` draws them in proportion to their values). After the
wrapper's ``steps`` the kept candidates, best first, are the row's answer.

Every call goes through the response cache, so an interrupted search resumes without re-sending what was answered,
and a request the search makes twice (the reference caches value prompts) is sent once. Rows are searched together
step by step, so the calls of one step go out concurrently. An HTTP model answers a prompt once per call, as the
reference's API models do whatever ``n_*_sample`` says; a local model is asked ``n`` times (each sample a cache key
of its own), where the reference would beam-search ``n`` sequences.

The prompt texts belong to the reference's prompt wrapper; they are read from the installed package's source
(never imported, never copied here), see ``suites/game24/wrapper.py``.
"""
from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from promptweave.errors import ReferenceTextMissingError, UnsupportedError
from promptweave.infer.cache import ResponseCache
from promptweave.infer.dispatch import CachedCaller, SampleCaller, is_remote
from promptweave.infer.failure import RowFailure
from promptweave.infer.records import RecordLike, is_messages
from promptweave.models.base import GenerationParams

REFERENCE_PACKAGE = "opencompass"
REFERENCE_PIN = "opencompass==0.5.4"


def _reference_constants(package: str, module: str) -> dict[str, Any] | None:
    from promptweave.compat.reference_index import references_hidden

    return None if references_hidden() else _installed_constants(package, module)


@lru_cache(maxsize=8)
def _installed_constants(package: str, module: str) -> dict[str, Any] | None:
    from promptweave.compat.reference_index import StaticPackage, module_constants, package_root

    root = package_root(package)
    if root is None:
        return None
    tree = StaticPackage(package, root).tree(module)
    return None if tree is None else module_constants(tree)


def reference_texts(module: str, names: Sequence[str], *, what: str, file: str | None = None,
                    field: str | None = None, package: str = REFERENCE_PACKAGE) -> dict[str, str]:
    """String constants of a reference module, read from its installed source; a typed error names what lacks."""
    consts = _reference_constants(package, module)
    missing = [n for n in names if not isinstance((consts or {}).get(n), str)]
    if consts is None or missing:
        where = f"{module} is not installed" if consts is None else f"{module} has no {', '.join(missing)}"
        raise ReferenceTextMissingError(
            f"{what} uses the reference's own prompt texts, read from its source at run time, but {where}",
            file=file, field=field, value=module,
            expected=f"the reference installed for reading: pip install --no-deps {REFERENCE_PIN}")
    return {n: consts[n] for n in names}


# a wrapper name -> its class, by module path (a benchmark's wrapper lives in its suite; imported when used)
WRAPPERS: dict[str, str] = {"Game24PromptWrapper": "promptweave.suites.game24.wrapper:Game24Wrapper"}


def wrapper_class(name: str) -> Any:
    """The prompt wrapper class ``name`` names (a key of :data:`WRAPPERS`), its module imported now."""
    module, _, attr = WRAPPERS[name].partition(":")
    return getattr(importlib.import_module(module), attr)

_CHOICES = {"method_generate": ("sample", "propose"), "method_evaluate": ("value", "vote"),
            "method_select": ("greedy", "sample"), "prompt_sample": ("standard", "cot")}


@dataclass(frozen=True)
class ToTSettings:
    wrapper: str = "Game24PromptWrapper"
    method_generate: str = "sample"
    method_evaluate: str = "value"
    method_select: str = "greedy"
    prompt_sample: str = "standard"
    n_generate_sample: int = 1
    n_evaluate_sample: int = 1
    n_select_sample: int = 1

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], *, file: str | None = None,
                      field: str = "infer_cfg.inferencer") -> ToTSettings:
        """The inferencer's search settings, each checked as the reference would use it."""
        pw = settings.get("prompt_wrapper") or {}
        wtype = pw.get("type") if isinstance(pw, Mapping) else None
        wname = str(getattr(wtype, "__name__", wtype) or "").rsplit(".", 1)[-1]
        if wname not in WRAPPERS:
            raise UnsupportedError("ToTInferencer needs a prompt wrapper promptweave knows", file=file,
                                   field=f"{field}.prompt_wrapper.type", value=wname or pw,
                                   expected=" or ".join(WRAPPERS))
        kw: dict[str, Any] = {"wrapper": wname}
        for key, allowed in _CHOICES.items():
            v = settings.get(key, getattr(cls, key))
            if v not in allowed:
                raise UnsupportedError(f"unknown ToTInferencer {key}", file=file, field=f"{field}.{key}", value=v,
                                       expected=" or ".join(repr(a) for a in allowed))
            kw[key] = v
        for key in ("n_generate_sample", "n_evaluate_sample", "n_select_sample"):
            v = settings.get(key, 1)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UnsupportedError(f"ToTInferencer {key} must be a positive whole number", file=file,
                                       field=f"{field}.{key}", value=v)
            kw[key] = v
        out = cls(**kw)
        if out.method_evaluate == "vote" and not wrapper_class(wname).has_vote:
            raise UnsupportedError(f"method_evaluate='vote' needs vote prompts, which {wname} has not (nor has it "
                                   "in the reference)", file=file, field=f"{field}.method_evaluate", value="vote",
                                   expected="'value'")
        return out

    def make_wrapper(self, *, file: str | None = None, field: str | None = None) -> Any:
        return wrapper_class(self.wrapper)(file=file, field=field)


@dataclass
class ToTResult:
    index: int
    prompt: Any
    shot_ids: list
    answers: list  # the kept candidates after the last step, best first
    steps: list = field(default_factory=list)  # per step: ys, new_ys, values, select_new_ys
    error: RowFailure | None = None


def row_text(record: Any) -> str:
    """The row's filled prompt as the search reads it (the reference does string operations on it)."""
    prompt = getattr(record, "prompt", None)
    if isinstance(prompt, str):
        return prompt
    rendered = record.rendered
    if isinstance(rendered, str):
        return rendered
    if is_messages(rendered) and len(rendered) == 1 and isinstance(rendered[0].get("content"), str):
        return rendered[0]["content"]
    raise UnsupportedError("ToTInferencer searches from a plain-text prompt: give the dataset a string "
                           "prompt_template (e.g. template='{input}')", field="infer_cfg.prompt_template",
                           value=type(prompt if prompt is not None else rendered).__name__)


class _Asker:
    """Asks the model for ``n`` answers to each prompt text, through the cache; a failure answers a RowFailure."""

    def __init__(self, model: Any, params: GenerationParams, cache: ResponseCache | None,
                 progress: Callable[[int], None] | None, chat: bool) -> None:
        self.model, self.params, self.cache, self.progress, self.chat = model, params, cache, progress, chat
        self.remote = is_remote(model)
        self.callers: dict[int, CachedCaller] = {}

    def _caller(self, k: int) -> CachedCaller:
        if k not in self.callers:
            self.callers[k] = SampleCaller(self.model, self.cache, self.progress, row_errors=True, sample=k, tag="tot")
        return self.callers[k]

    def ask(self, prompts: Sequence[str], n: int = 1) -> list[list[Any]]:
        if not prompts:
            return []
        n = 1 if self.remote else n  # an HTTP model returns one answer per call, as in the reference
        kind = "chat" if self.chat else "generate"
        reqs = [[{"role": "user", "content": p}] for p in prompts] if self.chat else list(prompts)
        out: list[list[Any]] = [[] for _ in prompts]
        for k in range(n):
            for i, v in enumerate(self._caller(k).call(kind, reqs, self.params)):
                out[i].append(v)
        return out


@dataclass
class _Search:
    x: str
    ys: list = field(default_factory=lambda: [""])
    steps: list = field(default_factory=list)
    error: RowFailure | None = None


def _failed(outputs: Sequence[Any]) -> RowFailure | None:
    return next((o for o in outputs if isinstance(o, RowFailure)), None)


def infer_tot(model: Any, records: Sequence[RecordLike], params: GenerationParams, settings: ToTSettings,
              wrapper: Any, cache: ResponseCache | None = None,
              progress: Callable[[int], None] | None = None, *, known: dict[str, float] | None = None,
              seed: int = 0) -> list[ToTResult]:
    """The tree-of-thought search for every record, row after row as the reference goes (its value cache makes
    a value depend on which row asked first); the calls of one step go out together. ``progress`` counts rows."""
    chat = any(is_messages(r.rendered) for r in records)
    asker = _Asker(model, params, cache, None, chat)
    known = {} if known is None else known  # value prompt -> value, over the whole task (the wrapper's value cache)
    rng = random.Random(seed)
    out = []
    for r in records:
        s = _Search(row_text(r))
        for step in range(wrapper.steps):
            if not _step(s, step, asker, settings, wrapper, known, rng):
                break
        out.append(ToTResult(r.index, r.rendered, list(r.shot_ids or []), list(s.ys) if s.error is None else [],
                             s.steps, s.error))
        if progress is not None:
            progress(1)
    return out


def _step(s: _Search, step: int, asker: _Asker, settings: ToTSettings, wrapper: Any, known: dict[str, float],
          rng: random.Random) -> bool:
    """One breadth-first step of one row's search; False when a call failed (the row then fails)."""
    if settings.method_generate == "propose":
        replies = asker.ask([wrapper.propose(s.x, y) for y in s.ys])
    else:
        make = wrapper.standard if settings.prompt_sample == "standard" else wrapper.cot
        replies = asker.ask([make(s.x, y) for y in s.ys], settings.n_generate_sample)
    new_ys: list[str] = []
    for y, outs in zip(s.ys, replies):
        s.error = _failed(outs)
        if s.error is not None:
            return False
        if settings.method_generate == "propose":
            new_ys += [y + line + "\n" for line in outs[0].split("\n")]
        else:
            new_ys += [y + o for o in outs]
    # evaluation: a candidate seen earlier in this step is worth 0; a value prompt asked before is not re-asked
    seen: set[str] = set()
    slots: list[Any] = []
    ask: dict[str, str] = {}  # value prompt -> the first candidate that asks it (its value is computed for that one)
    for y in new_ys:
        if y in seen:
            slots.append(0)
            continue
        seen.add(y)
        vp = wrapper.value(s.x, y)
        slots.append(vp)
        if vp not in known and vp not in ask:
            ask[vp] = y
    for (vp, y), outs in zip(ask.items(), asker.ask(list(ask), settings.n_evaluate_sample)):
        s.error = _failed(outs)
        if s.error is not None:
            return False
        known[vp] = wrapper.value_of(s.x, y, outs)
    values = [known[v] if isinstance(v, str) else v for v in slots]
    ids = list(range(len(new_ys)))
    if settings.method_select == "sample" and ids and sum(values) > 0:
        picked = rng.choices(ids, weights=values, k=settings.n_select_sample)
    else:  # greedy (stable: equal values keep their order), also when no candidate has a value to sample by
        picked = sorted(ids, key=lambda i: values[i], reverse=True)[:settings.n_select_sample]
    chosen = [new_ys[i] for i in picked]
    s.steps.append({"step": step, "ys": list(s.ys), "new_ys": new_ys, "values": values, "select_new_ys": chosen})
    s.ys = chosen
    return True
