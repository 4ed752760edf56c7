"""Medical multiple choice: MedMCQA, Medbullets and NEJM AI Bench (OpenCompass's ``medmcqa`` / ``Medbullets`` /
``nejm_ai_benchmark`` configs).

Both loaders append the lettered options to ``question`` and keep ``options``, ``label`` (the gold letter),
``prompt_mode`` and the letter range (``start`` / ``end``). Their evaluators read the first stand-alone option
letter of the reply (after dropping phrases such as "A through D"); a reply with none scores wrong. ``accuracy`` is
the share of right rows ×100, unrounded. The LLM-judge configs grade with the judge-output postprocessors in
``evaluate/judge.py`` (``medmcqa_llmjudge_postprocess`` / ``medbullets_llmjudge_postprocess``).
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.classify import table
from promptweave.data.loaders.hub import hf_dataset, read_folder
from promptweave.data.sources import Split, read_hf_named
from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths


def _with_options(row: dict[str, Any], keys: Sequence[str], prompt_mode: str) -> dict[str, Any]:
    options = [row.get(k, "") for k in keys]
    row["options"] = options
    row["question"] = f"{row.get('question', '')}\n" + "\n".join(f"{chr(65 + i)}. {o}" for i, o in enumerate(options))
    row["prompt_mode"] = prompt_mode
    row["start"], row["end"] = "A", chr(64 + len(options))
    return row


def medmcqa(ctx: LoadContext, path: str, prompt_mode: str = "zero-shot", **_: Any) -> Splits:
    """The validation split (a local dataset folder, or the name in the local Hugging Face cache); zero-shot rows
    get options A-D from ``opa``..``opd``, ``label`` from ``cop`` (0 = A), ``subject_name`` with spaces."""
    got = hf_dataset(ctx, path=path, split="validation")
    assert isinstance(got, Split)
    if prompt_mode != "zero-shot":
        return got
    out = []
    for i, r in enumerate(got.rows):
        row = _with_options(dict(r), ("opa", "opb", "opc", "opd"), prompt_mode)
        cop = r.get("cop")
        if not isinstance(cop, int) or isinstance(cop, bool):
            raise ctx.fail("cop must be the gold option's index (0 = A)", file=got.file, where=got.locate(i),
                           value=cop)
        row["label"] = chr(65 + cop)
        row["subject_name"] = str(row.get("subject_name", "")).replace("_", " ")
        out.append(row)
    return Split(out, got.file, list(got.where))


def csv_rows(ctx: LoadContext, path: str) -> tuple[Any, Split]:
    """One CSV read with pandas' type inference, empty cells as ``''`` (the reference's ``fillna('')``)."""
    f = ctx.find(path)
    got = read_hf_named("csv", data_files={"train": str(f)}) if f.is_file() else read_folder(ctx, f)
    part = got["train"] if isinstance(got, dict) and "train" in got else got
    if not isinstance(part, Split):
        raise ctx.fail("expected one CSV file", file=f)
    rows = [{k: ("" if v is None or (isinstance(v, float) and v != v) else v) for k, v in r.items()}
            for r in part.rows]
    return f, Split(rows, part.file, list(part.where))


def medbullets(ctx: LoadContext, path: str, prompt_mode: str = "zero-shot", **_: Any) -> Splits:
    """One CSV (types inferred as pandas does, empty cells as ``''``); zero-shot rows get options from
    ``opa``..``opd`` (and ``ope`` when not empty), ``label`` = ``answer_idx``."""
    f, part = csv_rows(ctx, path)
    items = []
    for i, row in enumerate(part.rows):
        if prompt_mode == "zero-shot":
            keys = ["opa", "opb", "opc", "opd"] + (["ope"] if row.get("ope", "") != "" else [])
            row = _with_options(row, keys, prompt_mode)
            row["label"] = row.get("answer_idx")
        items.append((part.locate(i), row))
    return table(items, f)


_OPTION_PREFIX = re.compile(r"^[A-Z]\.\s*")


def nejmaibench(ctx: LoadContext, path: str, prompt_mode: str = "zero-shot", **_: Any) -> Splits:
    """One CSV; zero-shot rows split ``Choices`` into its non-empty lines (their ``X.`` prefixes dropped) as
    ``options``, ``question`` = ``Question`` with the options lettered anew, ``label`` = ``Answer``."""
    f, part = csv_rows(ctx, path)
    items = []
    for i, row in enumerate(part.rows):
        if prompt_mode == "zero-shot":
            lines = [ln.strip() for ln in str(row.get("Choices", "")).strip().splitlines() if ln.strip()]
            options = [_OPTION_PREFIX.sub("", ln) for ln in lines]
            row["options"] = options
            row["question"] = f"{row.get('Question')}\n" + "\n".join(f"{chr(65 + k)}. {o}"
                                                                     for k, o in enumerate(options))
            row["label"] = row.get("Answer")
            row["prompt_mode"] = prompt_mode
            row["start"], row["end"] = "A", chr(64 + len(options))
        items.append((part.locate(i), row))
    return table(items, f)


_NOISE = ("I understand", "A through J", "A through E", "A through D")


def first_option_letter(reply: Any, n_options: int) -> str | None:
    """The first stand-alone letter among the row's options, after dropping the phrases the reference drops."""
    text = "" if reply is None else str(reply)
    for phrase in _NOISE:
        text = text.replace(phrase, "")
    letters = "|".join(chr(65 + i) for i in range(n_options))
    m = re.search(rf"\b({letters})\b", text) if n_options else None
    return m.group(1) if m else None


class _MedChoice(Evaluator):
    """Right when the reply's first option letter is the gold letter; the details keep the row's categories."""

    categories: tuple[str, ...] = ()
    needs = frozenset({"rows"})

    def score(self, predictions: Any, references: Any, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        rows = list(ctx.rows) if ctx is not None else []
        if len(rows) != len(predictions):
            raise EvaluationError(f"{self.name} needs the test rows (their options)", field="evaluator")
        correct, details = [], []
        for pred, ref, row in zip(predictions, references, rows):
            opts = row.get("options") if isinstance(row, Mapping) else None
            got = first_option_letter(pred, len(opts) if isinstance(opts, (list, tuple)) else 0)
            ok = got is not None and got == ref
            correct.append(ok)
            details.append({"pred": got if got is not None else [], "answer": ref, "correct": ok,
                            **{k: row.get(k) for k in self.categories}})
        acc = 100 * sum(correct) / len(correct) if correct else 0.0
        return Scores({"accuracy": acc}, correct, details)


class MedmcqaEvaluator(_MedChoice):
    name = "MedmcqaEvaluator"
    categories = ("subject_name", "topic_name", "choice_type")


class MedbulletsEvaluator(_MedChoice):
    name = "MedbulletsEvaluator"
    categories = ("question_type",)


class NejmaibenchEvaluator(_MedChoice):
    name = "NejmaibenchEvaluator"
    categories = ("Subject",)


# the suite's entries in the compat registries (compat/suites.py)
LOADERS = {"MedmcqaDataset": medmcqa, "MedbulletsDataset": medbullets, "NejmaibenchDataset": nejmaibench}
EVALUATORS = {"MedmcqaEvaluator": MedmcqaEvaluator, "MedbulletsEvaluator": MedbulletsEvaluator,
              "NejmaibenchEvaluator": NejmaibenchEvaluator}
