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
from functools import lru_cache
from itertools import chain
from typing import Any

__all__ = ["Block", "compile_blocks"]

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
        return f"new(R, (i, MODE, {self.const(block.label)}, IDS, None, r{b}, DS, MODEL, None, None))"


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


def _source(blocks: Sequence[Block], consts: list, records: bool = True) -> str:
    gen = _Gen()
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
        comp = f"[{items[0]} for {target} in {source}]"
    else:
        comp = f"LIST(CHAIN([({', '.join(items)},) for {target} in {source}]))"
    consts.extend(gen.consts)
    names = ", ".join(["new", "R", "join", "zip", "LIST", "CHAIN", "ERR", "MODE", "IDS", "DS", "MODEL"]
                      + [f"k{j}" for j in range(len(consts))])
    # The whole chunk as one comprehension (no Python call per row, every name a local); a chunk
    # with a row it cannot take (a missing column, a non-str value) is redone row by row, each
    # such row going through the plan's interpreter.
    return ("def factory(K):\n"
            + "    def run(idx, rows):\n"
            + f"        {names}, = K\n"
            + "        rows = LIST(rows)\n"
            + "        try:\n"
            + f"            return {comp}\n"
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
                   model: str, records: bool = True) -> Callable[[Iterable[int], Iterable[Any]], list]:
    """``run(indices, rows)``: the records of those rows, one per block per row, in row order
    (``records=False``: only what each record's ``rendered`` would be)."""
    consts: list = []
    source = _source(blocks, consts, records)
    fixed = (_tuple_new, record, "".join, zip, list, chain.from_iterable, (KeyError, TypeError, IndexError), mode, ids, dataset, model)
    return _factory(source)(fixed + tuple(consts))


def plan_source(blocks: Sequence[Block], records: bool = True) -> str:
    """The generated source for these blocks (for tests and curious readers)."""
    return _source(blocks, [], records)
