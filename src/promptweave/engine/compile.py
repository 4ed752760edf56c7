"""Compile a prompt plan to a specialised Python function.

A plan (see :mod:`promptweave.engine.builder`) is a rendered prompt cut into
literal text and row-value slots: a string, or a list of chat messages whose
``prompt`` strings are cut that way. Here each plan becomes one generated
function ``run(indices, rows) -> [PromptRecord, ...]`` (one record per block,
e.g. per ppl label, per row) whose loop body is a single ``''.join`` of literals
and row values per record.

The generated source holds no user text at all: literals, column names,
message dicts and labels travel in a constants tuple that the generated factory
unpacks into closure variables, and the source only names them by position
(``k3``, ``n1``, ...). So the source depends on the plan's *shape* alone, and
one compiled code object serves every plan of that shape (e.g. each BM25 row's
different examples); it is cached by a hash of the shape.

A row the fast body cannot handle (a missing column, a non-string value) goes
to the plan's interpreter for that row, which writes ``str(value)`` or keeps
``{name}``, as the general path does.
"""
from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache, partial
from itertools import chain, count, cycle, repeat
from typing import Any

from promptweave.infer.records import RecordChunk

__all__ = ["Block", "compile_blocks", "compile_fill", "compile_shot_rows", "positions"]

_tuple_new = tuple.__new__


class Block:
    """One record's worth of plan: how its ``rendered`` value is made, and the record's fixed fields.

    ``kind`` is ``"str"`` (``body`` is a :class:`Plan`-like object with ``parts``/``slots``/``fill``),
    ``"msgs"`` (``body`` is a list of ``(message dict, plan or None)``) or ``"call"`` (``body`` is a
    callable ``index -> record``: the general path, for what a plan cannot express).
    ``slow`` renders one row through the plan's interpreter (used for rows the fast body rejects).
    """

    __slots__ = ("body", "kind", "label", "slow")

    def __init__(self, kind: str, body: Any, label: Any = None, slow: Callable[[Any], Any] | None = None) -> None:
        self.kind, self.body, self.label, self.slow = kind, body, label, slow


class _Gen:
    """Source lines and constants for one generated function."""

    def __init__(self) -> None:
        self.consts: list = []
        self.var_of: dict[str, str] = {}  # column -> local variable
        self.fetch_of: dict[str, str] = {}  # local variable -> the subscript that reads it
        self.rendered: dict[str, str] = {}  # "r<b>" -> the expression of block b's rendered value
        self.info: Callable[[Block], tuple] = lambda block: ()  # a block's record fields shared by its rows

    def const(self, value: Any) -> str:
        self.consts.append(value)
        return f"k{len(self.consts) - 1}"

    def fetch(self, plan: Any, lines: list[str]) -> None:
        new = [c for c in dict.fromkeys(name for _, name in plan.slots) if c not in self.var_of]
        for c in new:
            self.var_of[c] = f"v{len(self.var_of)}"
        for c in new:  # plain subscripts: cheaper than one itemgetter call and its tuple
            self.fetch_of[self.var_of[c]] = f"row[{self.const(c)}]"
            lines.append(f"{self.var_of[c]} = {self.fetch_of[self.var_of[c]]}")

    def join(self, plan: Any) -> str:
        slot_at = dict(plan.slots)
        items: list[str] = []
        for pos, part in enumerate(plan.parts):
            if pos in slot_at:
                items.append(self.var_of[slot_at[pos]])
            elif part:
                items.append(self.const(part))
        if not plan.slots:
            return items[0] if len(items) == 1 else ("''" if not items else self.const("".join(plan.parts)))
        return "join((" + ", ".join(items) + ",))"

    def block(self, block: Block, b: int, lines: list[str], slows: list[str], records: bool) -> str:
        """Append the lines computing block ``b``'s rendered value; return its record (or rendered) expression.

        Row values are fetched once per row function and shared by its blocks (the labels of a ppl row).
        """
        if block.kind == "call":
            return f"{self.const(block.body)}(i)" + ("" if records else ".rendered")
        if block.kind == "str":
            self.fetch(block.body, lines)
            self.rendered[f"r{b}"] = self.join(block.body)
            lines.append(f"r{b} = {self.rendered[f'r{b}']}")
        else:
            msgs: list[str] = []
            for m, plan in block.body:
                if plan is None:
                    k = self.const(m)
                    msgs.append(f"{{**{k}}}" if "prompt" in m else k)
                    continue
                self.fetch(plan, lines)
                expr = self.join(plan)
                if list(m) == ["role", "prompt"]:
                    msgs.append(f"{{'role': {self.const(m['role'])}, 'prompt': {expr}}}")
                else:
                    msgs.append(f"{{**{self.const(m)}, 'prompt': {expr}}}")
            self.rendered[f"r{b}"] = "[" + ", ".join(msgs) + "]"
            lines.append(f"r{b} = {self.rendered[f'r{b}']}")
        slows.append(f"r{b} = {self.const(block.slow)}(row)")
        if not records:
            return f"r{b}"
        return f"new(R, (i, (r{b},), 0, {self.const(self.info(block))}))"


def _inline(gen: _Gen, recs: list[str]) -> str:
    """The records as expressions of ``row`` alone: block values inlined, each column read once (``:=``)."""
    text = " \x00 ".join(_R_VAR.sub(lambda m: gen.rendered[m.group(0)], rec) for rec in recs)
    seen: set[str] = set()
    uses = Counter(_V_VAR.findall(text))

    def first_read(m: re.Match) -> str:
        var = m.group(0)
        if uses[var] == 1:
            return gen.fetch_of[var]
        if var in seen:
            return var
        seen.add(var)
        return f"({var} := {gen.fetch_of[var]})"

    return _V_VAR.sub(first_read, text)


_R_VAR = re.compile(r"\br\d+\b")
_V_VAR = re.compile(r"\bv\d+\b")


def _source(blocks: Sequence[Block], consts: list, records: bool = True,
            info: Callable[[Block], tuple] = lambda b: ()) -> str:
    gen = _Gen()
    gen.info = info
    lines: list[str] = []
    slows: list[str] = []
    recs = [gen.block(block, b, lines, slows, records) for b, block in enumerate(blocks)]
    body: list[str] = []
    if any("row" in ln for ln in lines):
        # a row the one-join body cannot take (missing column, non-str value) goes through the interpreters
        body.append("try:")
        body.extend("    " + ln for ln in lines)
        body.append("except ERR:")
        body.extend("    " + ln for ln in slows)
    else:
        body.extend(lines)
    body.extend(f"add({rec})" for rec in recs)
    items = _inline(gen, recs).split(" \x00 ")
    uses_i = records or any(block.kind == "call" for block in blocks)
    target, source = ("i, row", "zip(idx, rows)") if uses_i else ("row", "rows")
    if len(items) == 1:
        fast = [f"return [{items[0]} for {target} in {source}]"]
    else:
        # several prompts per row (ppl labels): an unrolled loop appending each, about 0.7x the time of
        # a comprehension of per-row tuples chained flat (no tuple per row, no second pass)
        fast = ["out = []", "add = out.append", f"for {target} in {source}:",
                *("    " + ln for ln in lines), *(f"    add({rec})" for rec in recs), "return out"]
    consts.extend(gen.consts)
    names = ", ".join(["new", "R", "join", "zip", "LIST", "CHAIN", "ERR"]
                      + [f"k{j}" for j in range(len(consts))])
    # The whole chunk as one comprehension (no Python call per row, every name a local); a chunk
    # with a row it cannot take (a missing column, a non-str value) is redone row by row, each
    # such row going through the plan's interpreter.
    return ("def factory(K):\n"
            + "    def run(idx, rows):\n"
            + f"        {names}, = K\n"
            + "        rows = LIST(rows)\n"
            + "        try:\n"
            + "".join(f"            {ln}\n" for ln in fast)
            + "        except ERR:\n"
            + "            pass\n"
            + "        out = []\n"
            + "        add = out.append\n"
            + "        for i, row in zip(idx, rows):\n"
            + "\n".join("            " + ln for ln in body) + "\n"
            + "        return out\n"
            + "    return run\n")


@lru_cache(maxsize=512)
def _factory(source: str) -> Callable[..., Callable]:
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    namespace: dict[str, Any] = {"__builtins__": {}}
    # our own generated text only: every user string is a constant passed in through K
    exec(compile(source, f"<promptweave plan {digest}>", "exec"), namespace)  # noqa: S102
    return namespace["factory"]


def compile_blocks(blocks: Sequence[Block], *, record: type, mode: str, ids: list, dataset: str,
                   model: str, records: bool = True) -> Callable[[Iterable[int], Iterable[Any]], Any]:
    """``run(indices, rows)``: the records of those rows, one per block per row, in row order, as a
    :class:`~promptweave.infer.records.RecordChunk` (``records=False``: a list of what each record's
    ``rendered`` would be).

    A record is ``(index, prompts, pos, info)``: ``prompts[pos]`` is its rendered value, ``prompts`` the
    chunk's list, ``info`` the fields its block shares with every row (see
    :class:`promptweave.engine.builder.PromptRecord`): one tuple per block, not per record.
    """
    infos = {id(b): (mode, b.label, ids, None, dataset, model, None, None) for b in blocks}
    consts: list = []
    fixed = (_tuple_new, record, "".join, zip, list, chain.from_iterable, _ERRORS)
    if not records or any(b.kind == "call" for b in blocks):
        source = _source(blocks, consts, records, lambda b: infos[id(b)])
        return _factory(source)(fixed + tuple(consts))
    # The prompts alone, then the records around them in one C-level pass (map over zip: no
    # Python frame per record, and zip reuses its tuple), about half the cost of making each
    # record inside the comprehension.
    render = _factory(_source(blocks, consts, False))(fixed + tuple(consts))
    return _with_records(render, record, tuple(infos[id(b)] for b in blocks))


_ERRORS = (KeyError, TypeError, IndexError)
# A record's position in its chunk, from ints made once: a chunk's records allocate no int of their own
# (ints past 256 are objects; 16,384 covers a 4,096-row chunk of 4 ppl labels), larger chunks count on.
_POS = tuple(range(1 << 14))


def positions() -> Iterable[int]:
    """0, 1, 2, ... as shared int objects where it can."""
    return chain(_POS, count(len(_POS)))


def _with_records(render: Callable, record: type, infos: tuple) -> Callable:
    """A chunk's prompts as a :class:`RecordChunk` of columns; its records, made only when it is read as
    records, each point into the chunk's prompt list."""
    new, per_row = _tuple_new, len(infos)
    labels, ids = tuple(info[1] for info in infos), infos[0][2]
    if per_row == 1:
        info = infos[0]

        def make(idx: Any, out: list) -> Iterable[Any]:
            return map(new, repeat(record), zip(idx, repeat(out), positions(), repeat(info)))
    else:
        def make(idx: Any, out: list) -> Iterable[Any]:
            each = chain.from_iterable(map(repeat, idx, repeat(per_row)))
            return map(new, repeat(record), zip(each, repeat(out), positions(), cycle(infos)))

    def run(idx: Any, rows: Any) -> RecordChunk:
        out = render(idx, rows)
        return RecordChunk.from_columns(partial(make, idx, out), out, idx, labels, ids)
    return run


def plan_source(blocks: Sequence[Block], records: bool = True) -> str:
    """The generated source for these blocks (for tests and curious readers)."""
    return _source(blocks, [], records)


def compile_shot_rows(plans: Sequence[tuple]) -> Callable[..., list]:
    """``run(indices, rows, ids_per_row, train, piece_ofs, slows)``: rendered prompts for rows with examples of
    their own, one per plan (ppl label) per row; ``train`` holds the examples' rows.

    Each plan is ``(head, last)``: item lists (literal str, ``("row", column)``, ``("shot", column)`` of the
    row's last example). ``piece_ofs[n](train_id)`` gives an example's finished text for plan ``n``, and
    ``slows[n](index, ids)`` renders a row the one-join body cannot take (a missing column, a non-str value, no
    examples). ``last=None``: every example is a piece and ``head`` holds ``("pieces",)`` where they go, with
    the row's values after them. What depends on one builder (its pieces, its general path) comes in as
    arguments, so builders over the same plans share the function.
    """
    consts: list = []

    def const(v: Any) -> str:
        consts.append(v)
        return f"k{len(consts) - 1}"

    exprs = []
    uses_t = False
    for n, (head, last) in enumerate(plans):
        items = []
        for v in head:
            if type(v) is str:
                if v:
                    items.append(const(v))
            elif v[0] == "pieces":
                items.append(f"*MAP(P{n}, ids)")
            else:
                items.append(f"row[{const(v[1])}]")
        if last is not None:
            uses_t = True
            items.append(f"*MAP(P{n}, ids[:-1])")
            items += [const(v) if type(v) is str else f"{'t' if v[0] == 'shot' else 'row'}[{const(v[1])}]"
                      for v in last if v != ""]
        # a list display with the pieces unpacked into it goes to join as it is (a tuple display would be
        # built as a list, then copied into the tuple)
        exprs.append("join([" + ", ".join(items) + "])")
    loop = "for row, ids in zip(rows, idss)" + (" for t in (TRAIN[ids[-1]],)" if uses_t else "")
    if len(exprs) == 1:
        comp = f"[{exprs[0]} {loop}]"
    else:
        comp = f"LIST(CHAIN([({', '.join(exprs)},) {loop}]))"
    names = ", ".join(["join", "zip", "LIST", "CHAIN", "ERR", "MAP", "LENF", "ALL"]
                      + [f"k{j}" for j in range(len(consts))])
    lines = ["            t = TRAIN[ids[-1]] if ids and -LEN <= ids[-1] < LEN else {}"]
    for n, e in enumerate(exprs):
        lines += ["            try:", "                if not ids:", "                    raise ERR[0]",
                  f"                add({e})", "            except ERR:", f"                add(S{n}(i, ids))"]
    per = "".join(f"P{n}, " for n in range(len(exprs)))
    sls = "".join(f"S{n}, " for n in range(len(exprs)))
    source = ("def factory(K):\n"
              + "    def run(idx, rows, idss, TRAIN, P, S):\n"
              + f"        {names}, = K\n"
              + f"        {per}= P\n"
              + f"        {sls}= S\n"
              + "        LEN = LENF(TRAIN)\n"
              + "        rows = LIST(rows)\n"
              + "        if ALL(idss):  # a row with no examples is the general path's\n"
              + "            try:\n"
              + f"                return {comp}\n"
              + "            except ERR:\n"
              + "                pass\n"
              + "        out = []\n"
              + "        add = out.append\n"
              + "        for i, row, ids in zip(idx, rows, idss):\n"
              + "\n".join(lines) + "\n"
              + "        return out\n"
              + "    return run\n")
    fixed = ("".join, zip, list, chain.from_iterable, _ERRORS, map, len, all)
    return _factory(source)(fixed + tuple(consts))


def compile_fill(items: Sequence[Any], slow: Callable[[Any], str]) -> Callable[[Iterable[Any]], list]:
    """``fill(rows)``: one string per row from items (literal str or ``(kind, column)``); a row the
    one-join body cannot take (a missing column, a non-str value) goes through ``slow(row)``."""
    consts: list = [slow]
    parts = []
    for v in items:
        if v == "":
            continue
        consts.append(v if type(v) is str else v[1])
        parts.append(f"k{len(consts) - 1}" if type(v) is str else f"row[k{len(consts) - 1}]")
    expr = "join((" + ", ".join(parts) + ",))"
    names = ", ".join(["join", "ERR"] + [f"k{j}" for j in range(len(consts))])
    source = ("def factory(K):\n"
              + "    def fill(rows):\n"
              + f"        {names}, = K\n"
              + "        out = []\n"
              + "        add = out.append\n"
              + "        for row in rows:\n"
              + "            try:\n"
              + f"                add({expr})\n"
              + "            except ERR:\n"
              + "                add(k0(row))\n"
              + "        return out\n"
              + "    return fill\n")
    return _factory(source)(("".join, _ERRORS) + tuple(consts))
