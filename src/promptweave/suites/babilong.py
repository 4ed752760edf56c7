"""BABILong (bAbI facts hidden in long distractor text, ten tasks, lengths 0k to 1m): its loader, as OpenCompass
defines it (rewritten from its observable behaviour); and its scoring rule, ``BabiLongEvaluator``.

Data: ``opencompass/babilong`` (``./data/babilong/data/``) holds ``<task>/<length>.json``, a JSON list of records
with ``input`` (the long context), ``question`` and ``target``. Each row's ``prompt`` is the task's instruction,
in-context examples and post-prompt, then the context (stripped) in ``<context>`` tags and the question, laid out
by the reference's template and stripped; ``prompt`` and ``answer`` are one-item lists, as the reference keeps
them (its templates put ``{prompt}`` into the message as the list's text).

The instructions, examples and templates are OpenCompass's own texts (``opencompass/datasets/babilong/prompts.py``):
they are read from the installed reference's source at load time, as data, never imported or copied; without it
the load stops with ``[PW250]`` naming what to install.
"""
from __future__ import annotations

import ast
from functools import lru_cache
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, json_file, need, rows
from promptweave.errors import ReferenceTextMissingError
from promptweave.evaluate.context import Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths, pct

TASKS = tuple(f"qa{i}" for i in range(1, 11))
LENGTHS = ("0k", "1k", "2k", "4k", "8k", "16k", "32k", "64k", "128k", "256k", "512k", "1m")
_MODULE = "opencompass/datasets/babilong/prompts.py"
_PIN = "opencompass==0.5.4"


def _eval_text(node: ast.expr, known: dict[str, Any]) -> Any:
    """A literal, or an f-string made only of literals and names of strings already read (the template)."""
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                out.append(part.value)
            elif (isinstance(part, ast.FormattedValue) and part.conversion == -1 and part.format_spec is None
                  and isinstance(part.value, ast.Name) and isinstance(known.get(part.value.id), str)):
                out.append(known[part.value.id])
            else:
                raise ValueError("not a plain template")
        return "".join(out)
    return ast.literal_eval(node)


@lru_cache(maxsize=2)
def _texts_from(path: str) -> dict[str, Any]:
    from pathlib import Path

    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    known: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                known[node.targets[0].id] = _eval_text(node.value, known)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
    return known


def reference_prompts(*, file: str | None) -> tuple[dict[str, Any], str]:
    """``DEFAULT_PROMPTS`` and ``DEFAULT_TEMPLATE`` from the installed OpenCompass's source."""
    from promptweave.compat.reference_tables import package_root, references_hidden

    root = None if references_hidden() else package_root("opencompass")
    src = root.parent / _MODULE if root is not None else None
    texts = _texts_from(str(src)) if src is not None and src.is_file() else {}
    prompts, template = texts.get("DEFAULT_PROMPTS"), texts.get("DEFAULT_TEMPLATE")
    ok = isinstance(prompts, dict) and all(
        isinstance(prompts.get(t), dict) and all(isinstance(prompts[t].get(k), str)
                                                 for k in ("instruction", "examples", "post_prompt"))
        for t in TASKS) and isinstance(template, str)
    if not ok:
        where = "it is not installed" if src is None or not src.is_file() else "its texts are not as expected"
        raise ReferenceTextMissingError(
            f"BabiLongDataset builds its prompts from OpenCompass's own texts ({_MODULE}), read from its source "
            f"at load time, but {where}", file=file, field="type", value="BabiLongDataset",
            expected=f"the reference installed for reading: pip install --no-deps {_PIN}")
    return prompts, template  # type: ignore[return-value]


def babilong(ctx: LoadContext, path: str, task: str, split_name: str, use_instruction: bool = True,
             use_examples: bool = True, use_post_prompt: bool = True) -> Splits:
    if task not in TASKS:
        raise ctx.fail("task must be one of qa1 ... qa10", where="task", value=task)
    if split_name not in LENGTHS:
        raise ctx.fail("split_name must be a BABILong length (" + ", ".join(LENGTHS) + ")", where="split_name",
                       value=split_name)
    f = ctx.member(ctx.find(path), task, f"{split_name}.json")
    prompts, template = reference_prompts(file=ctx.file)
    texts = prompts[task]
    parts = {"instruction": texts["instruction"] if use_instruction else "",
             "examples": texts["examples"] if use_examples else "",
             "post_prompt": texts["post_prompt"] if use_post_prompt else ""}
    data = json_file(f)
    if not isinstance(data, list):
        raise ctx.fail("the task file must be a JSON list of records", file=f, value=type(data).__name__)
    items = []
    for i, rec in enumerate(data):
        loc = f"[{i}]"
        rec = need(ctx, rec, ("input", "question", "target"), file=f, where=loc)
        text = template.format(context=str(rec["input"]).strip(), question=rec["question"], **parts).strip()
        items.append((loc, {"prompt": [text], "answer": [rec["target"]]}))
    return rows(items, f)


class BabiLongEvaluator(Evaluator):
    """BABILong: the gold's first item, lower-cased, inside the reply's first sentence (before any <context> or
    <example> the model starts); ``score`` ×100 rounded to 2 places."""

    name = "BabiLongEvaluator"

    @staticmethod
    def match(target: str, output: str) -> bool:
        out = output.lower().split(".")[0].split("<context>")[0].split("<example>")[0]
        return target.lower() in out

    def score(self, predictions, references, ctx=None) -> Scores:
        check_lengths(predictions, references, self.name)
        ok = []
        for p, r in zip(predictions, references):
            first = r[0] if isinstance(r, (list, tuple)) and r else r
            ok.append(self.match(str(first), str(p)))
        return Scores({"score": round(pct(sum(ok), len(ok)), 2)}, ok)


LOADERS: dict[str, Any] = {"BabiLongDataset": babilong}
EVALUATORS: dict[str, type] = {"BabiLongEvaluator": BabiLongEvaluator}
