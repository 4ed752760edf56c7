"""Build the exact prompt each model receives for each dataset row.

The general path fills the template into a Dialogue and renders it. For speed,
each distinct (shot ids, label) combination is also compiled into a *plan*: the
template is rendered once with marker values in every slot, the rendered text
is cut at the markers, and each later row is just a join of literals and its
own values. Rows are never scanned, so the plan and the general path give the
same bytes (tests check this).
"""
from __future__ import annotations

import gc
import operator
import re
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import partial
from itertools import chain, compress, count, repeat
from operator import eq, itemgetter, ne
from typing import Any

from promptweave.engine.compile import Block, compile_blocks, compile_fill, compile_shot_rows, positions
from promptweave.engine.spec import DatasetSpec, ModelSpec
from promptweave.errors import ConfigError, DataError, PromptweaveWarning, TemplateError
from promptweave.infer.records import RecordChunk
from promptweave.prompt.dialogue import Dialogue, SectionMark, Turn
from promptweave.prompt.ice import build_ice
from promptweave.prompt.multimodal import has_parts
from promptweave.prompt.template import Ice, TurnTemplate, fill_items
from promptweave.prompt.text import CompiledText
from promptweave.render.chat import render_chat
from promptweave.render.text import render_text
from promptweave.shots.base import Retriever
from promptweave.shots.basic import FixKRetriever, ZeroRetriever

_MARK_OPEN, _MARK_CLOSE = "\ue000", "\ue001"
_MARK_RE = re.compile("\ue000(\\d+)\ue001")
_MISSING = object()
_CHUNK = 4096  # rows built per call of a compiled plan: memory stays bounded while build_all is consumed
_SHOT_PLANS: dict[tuple, tuple] = {}  # per-row-example plans by the template objects they were probed from
# compiled row functions by the objects they were made from (kept with them, so their ids cannot be reused):
# a new builder over the same dataset and model skips the plan, its render and the code generation
_ROW_FNS: dict[tuple, tuple] = {}
_SHOT_RUNS: dict[tuple, tuple] = {}  # compiled per-row-example functions by the shared plans they were made from


_FIELDS = ("index", "mode", "label", "shot_ids", "prompt", "rendered", "dataset", "model", "ppl_context",
           "ppl_answer")


class PromptRecord(tuple):
    """One prompt as the model receives it, with where it came from.

    Fields: ``index``, ``mode``, ``label`` (ppl), ``shot_ids``, ``prompt`` (the filled str / Dialogue
    before the meta template, when asked for), ``rendered`` (str for a text model, list of messages for a
    chat model, or str/token-id segments), ``dataset``, ``model``, ``extra`` (a dict for callers' notes)
    and, for ppl with ``normalizing_str``, ``ppl_context``/``ppl_answer`` (the prompt split at the
    template's sep_token; ``rendered`` is their join).

    Read-only but for ``extra``. Underneath, a 4-tuple ``(index, prompts, pos, info)``: ``rendered`` is
    ``prompts[pos]``, ``prompts`` the list of the whole chunk's prompts (one list shared by a compiled
    chunk's records) and ``info`` the other fields (one tuple per plan, shared too). Compiled plans make a
    chunk's records in C (``tuple.__new__`` mapped over it), so a record costs one small object; and as it
    points at the shared list rather than at its own long string, the garbage collector's passes over kept
    records stay in cache (about 0.3x of the records' collector time). A record kept alone keeps its chunk's
    prompts alive. Records of one plan share their ``shot_ids`` list; treat it as read-only. Records compare
    by their fields.
    """

    def __new__(cls, index: int, mode: str, label: Any, shot_ids: list[int], prompt: Any, rendered: Any,  # noqa: PYI034
                dataset: str = "", model: str = "", extra: dict[str, Any] | None = None,
                ppl_context: str | None = None, ppl_answer: str | None = None) -> PromptRecord:
        self = tuple.__new__(cls, (index, (rendered,), 0, (mode, label, shot_ids, prompt, dataset, model,
                                                           ppl_context, ppl_answer)))
        if extra is not None:
            self.__dict__["_extra"] = extra
        return self

    index = property(itemgetter(0))
    rendered = property(lambda self: self[1][self[2]])
    mode = property(lambda self: self[3][0])
    label = property(lambda self: self[3][1])
    shot_ids = property(lambda self: self[3][2])
    prompt = property(lambda self: self[3][3])
    dataset = property(lambda self: self[3][4])
    model = property(lambda self: self[3][5])
    ppl_context = property(lambda self: self[3][6])
    ppl_answer = property(lambda self: self[3][7])

    @property
    def extra(self) -> dict[str, Any]:
        d = self.__dict__
        e = d.get("_extra")
        if e is None:
            e = d["_extra"] = {}
        return e

    def _key(self) -> tuple:
        return (self[0], self[1][self[2]], self[3])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PromptRecord):
            return NotImplemented
        return self._key() == other._key()

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, PromptRecord):
            return NotImplemented
        return self._key() != other._key()

    __hash__ = None  # type: ignore[assignment]  # shot_ids is a list, as before: records were never hashable

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={getattr(self, k)!r}" for k in _FIELDS)
        return f"PromptRecord({inner}, extra={self.extra!r})"

    def __reduce__(self) -> tuple:
        # alone, without the rest of its chunk
        return (_record, ((self[0], (self[1][self[2]],), 0, self[3]), self.__dict__.get("_extra")))


def _record(fields: tuple, extra: dict[str, Any] | None) -> PromptRecord:
    rec = tuple.__new__(PromptRecord, fields)
    if extra is not None:
        rec.__dict__["_extra"] = extra
    return rec


class _Plan:
    """Literals with value slots: ``parts[pos] = str(row[name])`` then join."""

    __slots__ = ("parts", "slots")

    def __init__(self, text: str, names: Sequence[str]) -> None:
        parts: list[str] = []
        slots: list[tuple[int, str]] = []
        pos = 0
        for m in _MARK_RE.finditer(text):
            if m.start() > pos:
                parts.append(text[pos:m.start()])
            slots.append((len(parts), names[int(m.group(1))]))
            parts.append("")
            pos = m.end()
        if pos < len(text):
            parts.append(text[pos:])
        self.parts = parts
        self.slots = slots

    def fill(self, row: Mapping[str, Any]) -> str:
        parts = self.parts[:]
        for pos, name in self.slots:
            v = row.get(name, _MISSING)
            parts[pos] = ("{" + name + "}") if v is _MISSING else (v if type(v) is str else str(v))
        return "".join(parts)


class PromptBuilder:
    """Builds prompts for one dataset × model in one mode (``gen`` or ``ppl``)."""

    def __init__(self, dataset: DatasetSpec, model: ModelSpec, mode: str | None = None,
                 *, use_plans: bool = True, plan_cache: int = 4096) -> None:
        if model.kind == "api" and (dataset.template.kind_name == "RawPromptTemplate"
                                    or getattr(dataset.template, "raw_messages", False)):
            from promptweave.render.meta import with_api_roles  # raw messages keep their roles

            model = with_api_roles(model)
        self.dataset = dataset
        self.model = model
        self.mode = mode or dataset.inferencer.mode
        if self.mode not in ("gen", "ppl"):
            raise TemplateError("mode must be 'gen' or 'ppl'", value=self.mode)
        self.template = dataset.template
        self.output = dataset.reader.output_column
        self.use_plans = use_plans
        self._plans: OrderedDict[tuple, Any] = OrderedDict()
        self._plan_cache = plan_cache
        self._ice_cache: OrderedDict[tuple, Ice] = OrderedDict()
        self._shot_plans: dict[Any, Any] = {}
        self._pieces: dict[tuple, dict[int, str]] = {}
        self._ids: list[list[int]] | None = None
        self._row_ids: dict[int, list[int]] = {}
        self._seen_labels: list[Any] | None = None
        self._names = sorted(self.template.placeholder_names())
        self._unused_ice_warned = False
        self._plans_ok = use_plans and not _has_marker_literals(dataset, model)
        if self._plans_ok and getattr(self.template, "expand_columns", list)():  # turns from the row
            self._plans_ok = False
        if getattr(self.template, "per_row", False):  # a turn's text computed from the row's values
            self._plans_ok = False
        if model.meta is not None and self.mode == "gen" and model.kind == "lm":
            model.meta.warn_if_no_generate(file=model.file)

    # ------------------------------------------------------------------ shots
    def ids_for(self, index: int) -> list[int]:
        """The retrieved example ids of one test row (without searching every row where the retriever allows)."""
        if self._ids is not None:
            return self._ids[index]
        hit = self._row_ids.get(index)
        if hit is None:
            self.prefetch([index])
            hit = self._row_ids.get(index)
            if hit is None:
                return self.shot_ids[index]
        return hit

    def prefetch(self, indices: Sequence[int]) -> None:
        """Retrieve examples for just these rows, when the retriever chooses per row independently."""
        retriever = self.dataset.retriever
        if self._ids is not None or type(retriever).select_rows is Retriever.select_rows:
            return
        todo = [i for i in dict.fromkeys(indices) if i not in self._row_ids]
        if not todo:
            return
        for i in todo:
            self._test_row(i)
        got = retriever.select_rows(self.dataset.train, self.dataset.test, todo, same_split=self._same_split())
        self._row_ids.update(zip(todo, got))

    def _same_split(self) -> bool:
        same = self.dataset.same_split
        return self.dataset.train is self.dataset.test if same is None else same

    @property
    def shot_ids(self) -> list[list[int]]:
        if self._ids is None:
            self._ids = self.dataset.retriever.select(self.dataset.train, self.dataset.test,
                                                      same_split=self._same_split())
        return self._ids

    def labels(self) -> list[Any]:
        """Labels scored in ppl mode, in the reference's order."""
        inf = self.dataset.inferencer
        if inf.labels is not None:
            return list(inf.labels)
        pt, it = self.dataset.prompt_template, self.dataset.ice_template
        if pt is not None and pt.is_label_dict:
            return pt.labels()
        if it is not None and it.ice_token is not None and it.is_label_dict:
            return it.labels()
        if self._seen_labels is None:  # a scan of the test split, done once (build_row asks per row)
            seen: dict[Any, None] = {}
            for row in self.dataset.test:
                seen.setdefault(row.get(self.output), None)
            self._seen_labels = list(seen)
        return list(self._seen_labels)

    def _ice_strip(self) -> tuple[str, ...]:
        # generation drops the prompt template's sep token from the examples' glue too
        pt = self.dataset.prompt_template or self.dataset.ice_template
        return (pt.sep_token,) if (self.mode == "gen" and pt.sep_token) else ()

    def _ice(self, ids: Sequence[int]) -> Ice:
        key = tuple(ids)
        hit = self._ice_cache.get(key)
        if hit is not None:
            return hit
        strip = self._ice_strip()
        r = self.dataset.retriever
        ice = build_ice(self.dataset.ice_template, self.dataset.train, ids, output_column=self.output,
                        separator=r.ice_separator, eos=r.ice_eos_token, strip=strip)
        self._ice_cache[key] = ice
        if len(self._ice_cache) > self._plan_cache:
            self._ice_cache.popitem(last=False)
        return ice

    # ------------------------------------------------------------------ filling
    def _compiled(self, label: Any) -> Any:
        tpl = self.template
        if self.mode == "gen":
            key, raw = tpl.raw_for(label, first_if_missing=True)
            return tpl.compiled(key, raw, ice=False, ice_token=tpl.ice_token,
                                strip_after=(tpl.sep_token,) if tpl.sep_token else ())
        key, raw = tpl.raw_for(label)
        keep_sep = self.dataset.inferencer.normalizing_str is not None
        strip = (tpl.sep_token,) if tpl.sep_token and not keep_sep else ()
        return tpl.compiled(key, raw, ice=False, ice_token=tpl.ice_token, strip_before=strip)

    def _checked(self, label: Any, ids: Sequence[int]) -> Any:
        compiled = self._compiled(label)
        if ids and not self._unused_ice_warned and not _mentions_ice(compiled):
            # The references fill such a template as it is: the retrieved examples are simply not shown.
            self._unused_ice_warned = True
            where = f"{self.dataset.file}: " if self.dataset.file else ""
            warnings.warn(f"{where}{self.template.field}: {len(ids)} in-context examples were retrieved but the "
                          f"template has no {self.template.ice_token or 'ice_token'} to put them in, so the prompt "
                          "is built without them (as OpenCompass does); use ZeroRetriever, or put the ice_token "
                          "in the template", PromptweaveWarning, stacklevel=4)
        return compiled

    def _row(self, row: Mapping[str, Any]) -> Mapping[str, Any]:
        if self.mode == "gen" and self.output is not None and self.output in row:
            row = dict(row)
            row[self.output] = self.dataset.inferencer.gen_field_replace_token
        return row

    def fill(self, index: int, label: Any = None, ids: Sequence[int] | None = None) -> Any:
        """The filled prompt (str or Dialogue) before the model's meta template."""
        row = self._test_row(index)
        ids = self.ids_for(index) if ids is None else ids
        try:
            return fill_items(self._checked(label, ids), self._row(row), self._ice(ids), field=self.template.field)
        except DataError as exc:  # name the row (multimodal content is checked while filling)
            if exc.field and not exc.field.startswith("test["):
                raise exc.at(file=self.dataset.file, prefix=f"test[{index}]") from None
            raise

    def render(self, prompt: Any) -> Any:
        return render_prompt(prompt, self.model, self.mode)

    def _test_row(self, index: int) -> Mapping[str, Any]:
        try:
            return self.dataset.test[index]
        except IndexError:
            raise DataError(f"row {index} is out of range: the test split has {len(self.dataset.test)} rows",
                            field=f"{self.dataset.abbr}.test", value=index) from None

    # ------------------------------------------------------------------ plans
    # A plan is made per (label, shot ids) the first time they are asked for, and compiled to code
    # (engine/compile.py) once it is used again or is about to serve a run of rows.
    def _entry(self, label: Any, ids: Sequence[int]) -> list:
        """[plan or None, shot id list, compiled record function or None, uses] for (label, ids)."""
        key = (label if self.mode == "ppl" else None, tuple(ids))
        entry = self._plans.get(key)
        if entry is None:
            entry = [self._make_plan(label, ids), list(ids), None, 0]
            self._plans[key] = entry
            if len(self._plans) > self._plan_cache:
                self._plans.popitem(last=False)
        return entry

    def _block(self, label: Any, entry: list) -> Block:
        plan, ids = entry[0], entry[1]
        lab = label if self.mode == "ppl" else None
        if plan is None:
            return Block("call", lambda i: self._general(i, label, ids), lab)
        kind, body = plan
        return Block(kind, body, lab, body.fill if kind == "str" else partial(_run_plan, plan))

    def _compile(self, blocks: list[Block], ids: list[int], records: bool = True) -> Any:
        return compile_blocks(blocks, record=PromptRecord, mode=self.mode, ids=ids, dataset=self.dataset.abbr,
                              model=self.model.abbr, records=records)

    def _record_fn(self, label: Any, ids: Sequence[int]) -> Any:
        """``f(index, row) -> PromptRecord`` for (label, ids), or None where the general path is needed."""
        entry = self._entry(label, ids)
        if entry[0] is None:
            return None
        run = entry[2]
        if run is None:
            entry[3] += 1
            if entry[3] < 2:  # used once (e.g. per-row BM25 examples): interpret, do not compile
                info = (self.mode, label if self.mode == "ppl" else None, entry[1], None, self.dataset.abbr,
                        self.model.abbr, None, None)
                return lambda i, row: _record((i, (_run_plan(entry[0], row),), 0, info), None)
            run = entry[2] = self._compile([self._block(label, entry)], entry[1])
        return lambda i, row: run((i,), (row,))[0]

    def _rows_fn(self, ids: Sequence[int], labels: Sequence[Any], records: bool = True) -> Any:
        """``run(indices, rows)``: every record (or rendered prompt) of those rows, all labels in ppl mode;
        None where the general path is needed."""
        key = ("*rows", records, tuple(labels), tuple(ids))
        run = self._plans.get(key)
        if run is None:
            shared = self._shared_key(key, ids)
            hit = _ROW_FNS.get(shared[0])
            if hit is not None and hit[0] == shared[1]:
                run = self._plans[key] = hit[1]
                return run
            labs = labels or (None,)
            entries = [self._entry(lab, ids) for lab in labs]
            if self.mode == "gen" and entries[0][0] is None:
                return None
            blocks = [self._block(lab, e) for lab, e in zip(labs, entries)]
            run = self._compile(blocks, entries[0][1], records)
            self._plans[key] = run
            if all(b.kind != "call" for b in blocks):  # a "call" block is this builder's general path
                _ROW_FNS[shared[0]] = (shared[1], run)
                if len(_ROW_FNS) > 64:
                    _ROW_FNS.pop(next(iter(_ROW_FNS)))
        return run

    def _shared_key(self, key: tuple, ids: Sequence[int]) -> tuple[tuple, tuple]:
        """(lookup key, what must still hold) for a compiled row function shared by builders: the same
        template and meta template objects and settings, and the examples' rows equal to those it was made
        from."""
        ds, model, r = self.dataset, self.model, self.dataset.retriever
        train = ds.train
        # the split itself is not kept (it may be large): the examples' rows are, as values, and the
        # plan depends on nothing else of it
        objs = (ds.template, ds.ice_template, model.meta)
        try:
            shots = tuple(dict(train[j]) for j in ids)
        except Exception:  # noqa: BLE001 - an id the general path reports: nothing is shared
            shots = (object(),)
        lookup = (key, tuple(map(id, objs)), id(train), model.kind, model.dialect, self.mode, r.ice_separator,
                  r.ice_eos_token, self.output, ds.inferencer.gen_field_replace_token, ds.inferencer.normalizing_str,
                  ds.abbr, model.abbr, self._plans_ok)
        return lookup, (objs, shots)

    def _make_plan(self, label: Any, ids: Sequence[int]) -> Any:
        ice = self._ice(ids)
        if _ice_has_marker(ice):
            return None
        names = self._names
        probe = {n: f"{_MARK_OPEN}{i}{_MARK_CLOSE}" for i, n in enumerate(names)}
        if self.mode == "gen" and self.output is not None:
            probe[self.output] = self.dataset.inferencer.gen_field_replace_token
        compiled = self._checked(label, ids)
        if not isinstance(compiled, CompiledText) and any(type(t) is TurnTemplate and t.mm is not None
                                                          for t in compiled):
            return None  # multimodal parts come from the row's content, not from slots
        filled = fill_items(compiled, probe, ice, field=self.template.field)
        if isinstance(filled, Dialogue):
            if any(type(t) is Turn and t.parts is not None for t in filled.items):
                return None  # multimodal parts are not plain text
            if self.model.meta is None and _emptiness_depends_on_data(filled):
                return None
        rendered = self.render(filled)
        if isinstance(rendered, str):
            return ("str", _Plan(rendered, names))
        if isinstance(rendered, list) and all(isinstance(m, dict) for m in rendered):
            msgs = []
            for m in rendered:
                if isinstance(m.get("prompt"), str) and _MARK_OPEN in m["prompt"]:
                    msgs.append((m, _Plan(m["prompt"], names)))
                elif _MARK_OPEN in repr(m):
                    return None
                else:
                    msgs.append((m, None))
            return ("msgs", msgs)
        return None  # token-id segments: take the general path

    # ------------------------------------------------------------------ per-row examples
    # Rows with examples of their own (BM25, random): the template is rendered with 1, 2 and 3 probe
    # examples whose values are markers, and cut where each example's first value starts. If every
    # example's piece (its text up to the next example's first value) is the same template, and the head
    # and the last piece do not depend on how many examples come before, a row's prompt is
    # ``head(row) + piece(train[j]) for j in ids[:-1] + last(train[ids[-1]], row)``: pieces are made
    # once per train row, and a row costs one join. Anything else keeps the general path.
    def _shot_plan(self, label: Any) -> Any:
        """(head, piece, last) item lists for ``label``, or None. Items: str, ("row", name), ("shot", name)."""
        key = label if self.mode == "ppl" else None
        if key in self._shot_plans:
            return self._shot_plans[key]
        # The probe renders the template three times through the general path (about a third of a
        # 2,000-row W4 build): builders over the same template objects share its result.
        ds, model, r = self.dataset, self.model, self.dataset.retriever
        objs = (ds.template, ds.ice_template, model.meta)
        shared = (tuple(map(id, objs)), model.kind, model.dialect, self.mode, repr(key), r.ice_separator,
                  r.ice_eos_token, self.output, ds.inferencer.gen_field_replace_token, ds.inferencer.normalizing_str,
                  self._plans_ok)
        hit = _SHOT_PLANS.get(shared)
        if hit is not None and all(map(operator.is_, hit[0], objs)):
            plan = hit[1]
        else:
            try:
                plan = self._probe_shots(label)
            except Exception:  # noqa: BLE001 - a probe the template refuses: the general path reports it per row
                plan = None
            _SHOT_PLANS[shared] = (objs, plan)  # the objects kept with it: their ids cannot be reused meanwhile
            if len(_SHOT_PLANS) > 64:
                _SHOT_PLANS.pop(next(iter(_SHOT_PLANS)))
        self._shot_plans[key] = plan
        return plan

    def _probe_shots(self, label: Any) -> Any:
        it = self.dataset.ice_template
        if it is None or it.is_label_dict or not self._plans_ok:
            return None
        names = self._names
        fields = sorted(it.placeholder_names())
        if not fields:
            return None
        nt, nf = len(names), len(fields)
        probe = {n: f"{_MARK_OPEN}{i}{_MARK_CLOSE}" for i, n in enumerate(names)}
        if self.mode == "gen" and self.output is not None:
            probe[self.output] = self.dataset.inferencer.gen_field_replace_token
        train = [{f: f"{_MARK_OPEN}{nt + k * nf + i}{_MARK_CLOSE}" for i, f in enumerate(fields)} for k in range(3)]
        r = self.dataset.retriever
        cuts = []
        for n in (1, 2, 3):
            ice = build_ice(it, train, range(n), output_column=self.output, separator=r.ice_separator,
                            eos=r.ice_eos_token, strip=self._ice_strip())
            compiled = self._compiled(label)
            if not isinstance(compiled, CompiledText) and any(type(t) is TurnTemplate and t.mm is not None
                                                              for t in compiled):
                return None
            filled = fill_items(compiled, probe, ice, field=self.template.field)
            if isinstance(filled, Dialogue):
                if any(type(t) is Turn and t.parts is not None for t in filled.items):
                    return None
                if self.model.meta is None and _emptiness_depends_on_data(filled):
                    return None
            rendered = self.render(filled)
            if not isinstance(rendered, str):
                return None  # chat messages and token ids: the general path
            items: list = []
            pos = 0
            for m in _MARK_RE.finditer(rendered):
                if m.start() > pos:
                    items.append(rendered[pos:m.start()])
                j = int(m.group(1))
                items.append(("row", names[j]) if j < nt else ((j - nt) // nf, fields[(j - nt) % nf]))
                pos = m.end()
            if pos < len(rendered):
                items.append(rendered[pos:])
            starts = []
            for k in range(n):
                at = [x for x, v in enumerate(items) if type(v) is tuple and v[0] == k]
                if not at:
                    return None  # an example with no values in the prompt: nothing to cut at
                starts.append(at[0])
            chunks = [items[:starts[0]]] + [items[a:b] for a, b in zip(starts, starts[1:] + [len(items)])]
            cuts.append([[("shot", v[1]) if type(v) is tuple and v[0] != "row" else v for v in c] for c in chunks])
            for k, chunk in enumerate(chunks, -1):  # the head holds no example's values, each piece its own
                if any(type(v) is tuple and v[0] not in ("row", k) for v in chunk):
                    return None
        one, two, three = cuts
        head, last = one[0], one[1]
        piece = two[1]
        if (two[0], three[0]) != (head, head) or (two[2], three[3]) != (last, last) or three[1:3] != [piece, piece]:
            return None
        if any(type(v) is tuple and v[0] == "row" for v in piece):
            return None
        if last[:len(piece)] == piece and not any(type(v) is tuple and v[0] == "shot" for v in last[len(piece):]):
            # the last example's text is a piece too: every example comes from the piece cache
            return [*head, ("pieces",), *last[len(piece):]], piece, None
        return head, piece, last

    def _general(self, index: int, label: Any, ids: Sequence[int], with_prompt: bool = False) -> PromptRecord:
        """Fill the template into a str / Dialogue and render it: the path every plan must agree with."""
        prompt = self.fill(index, label, ids)
        return PromptRecord(index, self.mode, label if self.mode == "ppl" else None, list(ids),
                            prompt if with_prompt else None, self.render(prompt), self.dataset.abbr,
                            self.model.abbr)

    # ------------------------------------------------------------------ public
    def build(self, index: int, label: Any = None, *, ids: Sequence[int] | None = None,
              with_prompt: bool = False) -> PromptRecord:
        """The prompt for test row ``index`` (and ``label`` in ppl mode).

        ``ids`` overrides the retrieved in-context examples (e.g. the ones kept to fit ``max_seq_len``).
        """
        ids = self.ids_for(index) if ids is None else ids
        if self.mode == "ppl" and self.dataset.inferencer.normalizing_str is not None:
            context, answer = self.split_at_sep(index, label, ids)
            prompt = context + answer
            return PromptRecord(index, self.mode, label, list(ids), prompt if with_prompt else None,
                                self.render(prompt), self.dataset.abbr, self.model.abbr,
                                ppl_context=context, ppl_answer=answer)
        if self._plans_ok and not with_prompt:
            fn = self._record_fn(label, ids)
            if fn is not None:
                return fn(index, self._test_row(index))
        return self._general(index, label, ids, with_prompt)

    def build_row(self, index: int, *, ids: Sequence[int] | None = None,
                  with_prompt: bool = False) -> list[PromptRecord]:
        """All prompts for one row: one in gen mode, one per label in ppl mode (all with the same examples)."""
        if self.mode == "gen":
            return [self.build(index, ids=ids, with_prompt=with_prompt)]
        return [self.build(index, label, ids=ids, with_prompt=with_prompt) for label in self.labels()]

    def build_all(self, indices: Sequence[int] | None = None, *, with_prompt: bool = False,
                  compiled: bool = True) -> Iterator[PromptRecord]:
        """Every prompt of these rows (all by default), row by row, lazily.

        Runs of rows with the same examples go through the plan's compiled function;
        ``compiled=False`` (or ``with_prompt``) takes the general path for every row.
        """
        return chain.from_iterable(self._runs(indices, with_prompt, self._fast(compiled and not with_prompt)))

    def record_chunks(self, indices: Sequence[int] | None = None) -> Iterator[Sequence[PromptRecord]]:
        """``build_all``'s records as the chunks they are made in: what a run feeds its inferencers, batch by
        batch. A compiled chunk (at most 4,096 rows) is a :class:`RecordChunk` of columns (``prompts``,
        ``indices``, ``labels``, ``shot_ids``) whose record objects are made only if it is read as records;
        the general path's are lists of records."""
        for recs in self._runs(indices, False, self._fast(True)):
            yield recs if isinstance(recs, (list, RecordChunk)) else list(recs)
            del recs  # not alive while the next chunk is built: a streamed task holds one chunk, not two

    def prompts(self, indices: Sequence[int] | None = None) -> Iterator[Any]:
        """What the model receives for these rows, in ``build_all``'s order: each record's ``rendered`` only.

        The leanest form (no record objects), for callers that track rows and labels themselves.
        """
        return chain.from_iterable(self._runs(indices, False, self._fast(True), records=False))

    def _fast(self, compiled: bool) -> bool:
        return (compiled and self._plans_ok
                and not (self.mode == "ppl" and self.dataset.inferencer.normalizing_str is not None))

    def _runs(self, indices: Sequence[int] | None, with_prompt: bool, fast: bool,
              records: bool = True) -> Iterator[Any]:
        test = self.dataset.test
        n = len(test)
        if indices is None:
            indices = range(n)
        else:
            indices = list(indices)
            if indices and not (-n <= min(indices) and max(indices) < n):
                for i in indices:
                    self._test_row(i)  # raises, naming the row
            self.prefetch(indices)
        labels = self.labels() if self.mode == "ppl" else ()
        if not fast:
            normalizing = self.mode == "ppl" and self.dataset.inferencer.normalizing_str is not None
            for i in indices:
                if normalizing:
                    recs = self.build_row(i, with_prompt=with_prompt)
                else:
                    ids = self.ids_for(i)
                    recs = [self._general(i, lab, ids, with_prompt) for lab in (labels or (None,))]
                yield recs if records else [r.rendered for r in recs]
            return
        if not indices:
            return
        retriever = self.dataset.retriever
        if self._ids is None and type(retriever) in (ZeroRetriever, FixKRetriever):
            # the same examples for every row: ask for one row's, not a list per row
            runs = [(0, len(indices), retriever.select(self.dataset.train, [test[indices[0]]])[0])]
        else:
            if self._ids is not None or type(retriever).select_rows is Retriever.select_rows:
                ids_of = self.shot_ids.__getitem__
            else:
                ids_of = self.ids_for
            ids_list = list(map(ids_of, indices))
            first = ids_list[0]
            if all(map(eq, repeat(first), ids_list)):
                runs = [(0, len(indices), first)]
            else:
                starts = [0, *compress(count(1), map(ne, ids_list[1:], ids_list)), len(indices)]
                if len(starts) > 2 and 2 * (len(starts) - 1) > len(indices):  # mostly examples of each row's own
                    shots = [self._shot_plan(lab) for lab in (labels or (None,))]
                    if all(p is not None for p in shots):
                        yield from self._shot_runs(indices, ids_list, shots, labels, records,
                                                   isinstance(indices, range) and indices.step == 1
                                                   and isinstance(test, list))
                        return
                runs = [(a, b, ids_list[a]) for a, b in zip(starts, starts[1:])]
        sliceable = isinstance(indices, range) and indices.step == 1 and isinstance(test, list)
        for a, b, ids in runs:
            part = indices[a:b]
            if b - a == 1:  # examples of this row only (BM25, random): a plan would serve one row
                i = part[0]
                recs = [self._general(i, lab, ids) for lab in (labels or (None,))]
                yield recs if records else [r.rendered for r in recs]
                continue
            run = self._rows_fn(ids, labels, records)
            if run is None:
                recs = (r for i in part for r in self.build_row(i, ids=ids))
                yield recs if records else (r.rendered for r in recs)
                continue
            for c in range(0, len(part), _CHUNK):
                sub = part[c:c + _CHUNK]
                rows = test[sub.start:sub.stop] if sliceable else map(test.__getitem__, sub)
                # A chunk only allocates new, acyclic objects that all stay referenced: the collector
                # has nothing to find in it, yet would run every 700 of them (half the build time when a
                # task's prompts are kept). It is paused for the chunk and runs once after it.
                paused = gc.isenabled()
                if paused:
                    gc.disable()
                try:
                    out = run(sub, rows)
                finally:
                    if paused:
                        gc.enable()
                yield out
                del out  # (see record_chunks)

    def _shot_runs(self, indices: Sequence[int], ids_list: list, shots: list, labels: Sequence[Any],
                   records: bool, sliceable: bool) -> Iterator[list]:
        """Chunks of rows with examples of their own, through per-row-example plans (see ``_shot_plan``)."""
        test, train = self.dataset.test, self.dataset.train
        labs = labels or (None,)
        key = ("*shots", tuple(labs))
        pieces = [self._pieces.setdefault(tuple(piece), {}) for _, piece, _ in shots]
        run = self._plans.get(key)
        if run is None:
            # the compiled functions depend on the (shared) plans alone: builders over them share them too
            sid = tuple(map(id, shots))
            hit = _SHOT_RUNS.get(sid)
            if hit is not None and all(map(operator.is_, hit[0], shots)):
                compiled, fills = hit[1]
            else:
                compiled = compile_shot_rows([(head, last) for head, _, last in shots])
                fills = [compile_fill(piece, partial(_fill_items, piece)) for _, piece, _ in shots]
                _SHOT_RUNS[sid] = (tuple(shots), (compiled, fills))
                if len(_SHOT_RUNS) > 64:
                    _SHOT_RUNS.pop(next(iter(_SHOT_RUNS)))
            slow = tuple((lambda i, ids, lab=lab: self._general(i, lab, ids).rendered) for lab in labs)
            run = self._plans[key] = (partial(compiled, TRAIN=train, P=tuple(p.__getitem__ for p in pieces),
                                              S=slow), fills)
        run, fills = run
        n_train = len(train)
        mode, ds, model = self.mode, self.dataset.abbr, self.model.abbr
        for c in range(0, len(indices), _CHUNK):
            sub = indices[c:c + _CHUNK]
            idss = ids_list[c:c + _CHUNK]
            need = set(chain.from_iterable(idss))
            for fill, got in zip(fills, pieces):
                # an id out of range gets no piece: its row goes to the general path, which names the error
                todo = [j for j in need.difference(got) if type(j) is int and 0 <= j < n_train]
                got.update(zip(todo, fill(map(train.__getitem__, todo))))
            rows = test[sub.start:sub.stop] if sliceable else map(test.__getitem__, sub)
            paused = gc.isenabled()
            if paused:
                gc.disable()
            try:
                out = run(sub, rows, idss)
                if records:
                    out = RecordChunk.from_columns(partial(_shot_records, mode, labs, sub, idss, out, ds, model), out,
                                                   sub, labs if self.mode == "ppl" else (None,), idss, True)
            finally:
                if paused:
                    gc.enable()
            yield out
            del out  # (see record_chunks)

    # ------------------------------------------------------------------ normalizing_str
    def split_at_sep(self, index: int, label: Any, ids: Sequence[int] | None = None) -> tuple[str, str]:
        """(context, answer) of a ppl prompt, cut at the template's own ``sep_token`` (which is dropped).

        OpenCompass's ``normalizing_str`` scores the answer after its context. The cut is
        made in the template text, not by searching the filled prompt, so a sep token
        inside an in-context example or a row value cannot move it.
        """
        ids = self.ids_for(index) if ids is None else ids
        tpl = self.template
        sep = tpl.sep_token
        if sep is None:
            raise ConfigError("normalizing_str needs the prompt template's sep_token to know where the answer "
                              "starts", file=self.dataset.file, field=tpl.field.rsplit(".", 1)[0] + ".sep_token",
                              expected="sep_token='</S>' (and the token in the template before the answer)")
        compiled = self._checked(label, ids)
        if not isinstance(compiled, CompiledText):
            raise TemplateError("normalizing_str works on string templates only (the answer must be a text "
                                "span)", file=self.dataset.file, field=tpl.field, expected="a string template")
        segs = compiled.segments
        for i, seg in enumerate(segs):
            if type(seg) is str and sep in seg:
                head, tail = seg.split(sep, 1)
                before = segs[:i] + ((head,) if head else ())
                rest = ((tail,) if tail else ()) + segs[i + 1:]
                # later sep tokens in the template text go too, as in every ppl prompt
                after = tuple(s.replace(sep, "") if type(s) is str else s for s in rest)
                break
        else:
            raise TemplateError(f"sep_token {sep!r} does not occur in the template text for label {label!r}",
                                file=self.dataset.file, field=tpl.field, value=compiled.source,
                                expected="the sep_token just before the answer")
        row, ice = self._row(self._test_row(index)), self._ice(ids)
        try:
            return (CompiledText(compiled.source, before).fill(row, ice),
                    CompiledText(compiled.source, after).fill(row, ice))
        except DataError as exc:
            raise exc.at(file=self.dataset.file, prefix=f"test[{index}]") from None

    # ------------------------------------------------------------------ token budget
    def ice_glue(self) -> tuple[str, str]:
        """(separator, eos) between and after string in-context examples, as this builder writes them."""
        strip = self._ice_strip()
        r = self.dataset.retriever
        it = self.dataset.ice_template
        sep, eos = (("", "") if it is not None and it.is_dialogue_shape else (r.ice_separator, r.ice_eos_token))
        for t in strip:
            sep, eos = sep.replace(t, ""), eos.replace(t, "")
        return sep, eos

    def example_piece(self, train_id: int) -> Any:
        """What one in-context example adds to a prompt, without the block's closing ``eos``.

        A str (the example's text; the separator is not included) or a Dialogue
        (the example's items plus its separator item, if any), ready to be measured.
        """
        ice = self._ice((train_id,))
        if isinstance(ice, Dialogue):
            return Dialogue(ice.items[:-1])  # build_ice always closes with the eos item
        _, eos = self.ice_glue()
        return ice[:len(ice) - len(eos)] if eos and ice.endswith(eos) else ice


def _shot_records(mode: str, labs: Sequence[Any], sub: Sequence[int], idss: list, out: list, ds: str,
                  model: str) -> Iterable[PromptRecord]:
    """The records of a chunk of rows with examples of their own (``_shot_runs``), pointing into ``out``."""
    if len(labs) == 1:
        lab = labs[0] if mode == "ppl" else None
        infos: Any = zip(repeat(mode), repeat(lab), idss, repeat(None), repeat(ds), repeat(model), repeat(None),
                         repeat(None))
        each: Any = sub
    else:
        infos = ((mode, lab, ids, None, ds, model, None, None) for ids in idss for lab in labs)
        each = chain.from_iterable(map(repeat, sub, repeat(len(labs))))
    return map(tuple.__new__, repeat(PromptRecord), zip(each, repeat(out), positions(), infos))


def _run_plan(plan: Any, row: Mapping[str, Any]) -> Any:
    """A plan filled from one row by its interpreter (rows the compiled body cannot take)."""
    kind, body = plan
    if kind == "str":
        return body.fill(row)
    out = []
    for m, p in body:
        if p is None:
            out.append(m if "prompt" not in m else dict(m))
        else:
            d = dict(m)
            d["prompt"] = p.fill(row)
            out.append(d)
    return out


def render_prompt(prompt: Any, model: ModelSpec, mode: str = "gen") -> Any:
    """What ``model`` receives for a filled prompt (str or Dialogue)."""
    if model.kind == "api":
        return render_chat(prompt, model.meta, mode, dialect=model.dialect)
    if isinstance(prompt, Dialogue) and has_parts(prompt):
        prompt = model.media_text().apply(prompt, model=model.abbr)
    return render_text(prompt, model.meta, mode)


def _mentions_ice(compiled: Any) -> bool:
    if isinstance(compiled, CompiledText):
        return compiled.has_ice
    for it in compiled:
        t = type(it)
        if t is CompiledText and it.has_ice:
            return True
        if t is TurnTemplate and it.prompt is not None and it.prompt.has_ice:
            return True
    return False


def _ice_has_marker(ice: Ice) -> bool:
    if isinstance(ice, str):
        return _MARK_OPEN in ice or _MARK_CLOSE in ice
    for it in ice.items:
        t = type(it)
        if t is SectionMark:
            continue  # section names are ours
        text = it if t is str else (it.prompt or "") if (t is Turn and not it.extra and it.parts is None) else repr(it)
        if _MARK_OPEN in text or _MARK_CLOSE in text:
            return True
    return False


def _has_marker_literals(dataset: DatasetSpec, model: ModelSpec) -> bool:
    text = repr(dataset.template.template) + repr(getattr(dataset.ice_template, "template", "")) + repr(model.meta)
    return _MARK_OPEN in text or _MARK_CLOSE in text


def _fill_items(items: Sequence[Any], row: Mapping[str, Any]) -> str:
    """Fill a cut plan's items (str, or a ``(kind, name)`` slot) from one row, as the general path writes values."""
    out = []
    for v in items:
        if type(v) is str:
            out.append(v)
        else:
            x = row.get(v[1], _MISSING)
            out.append("{" + v[1] + "}" if x is _MISSING else (x if type(x) is str else str(x)))
    return "".join(out)


def _emptiness_depends_on_data(filled: Dialogue) -> bool:
    """Without a meta template, empty items change separators: a text made only of slots may be empty."""
    for it in filled.items:
        t = type(it)
        if t is SectionMark:
            continue
        text = it if t is str else (it.prompt or "")
        if _MARK_OPEN in text and not _MARK_RE.sub("", text):
            return True
    return False
