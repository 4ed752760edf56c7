"""Short-form classification and multiple-choice sets whose reference loader only reads rows and relabels a gold
column: AdvGLUE, ANLI, TNEWS, AFQMC, SuperGLUE WSC and AX, SummEdits, CrowS-Pairs (zh), CommonsenseQA (zh), XStoryCloze,
FinanceIQ and Anthropic's model-written evals (AI risk, persona, sycophancy).

Where the reference builds a ``datasets.Dataset`` from a list of dicts, its columns are the first row's keys: a key
only later rows hold is dropped and a key a later row lacks reads as None. :func:`table` keeps that rule so that
templates see the same columns.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, json_file, jsonl, need
from promptweave.data.sources import Split


def table(items: Iterable[tuple[str, Mapping[str, Any]]], file: Path | str) -> Split:
    """Rows as ``Dataset.from_list`` keeps them: the first row's keys, in its order, for every row."""
    items = list(items)
    keys = list(items[0][1]) if items else []
    return Split([{k: r.get(k) for k in keys} for _, r in items], str(file), [loc for loc, _ in items])


def json_records(ctx: LoadContext, f: Path) -> list[tuple[str, dict[str, Any]]]:
    return [(loc, dict(need(ctx, r, (), file=f, where=loc))) for loc, r in jsonl(f)]


def mapped(ctx: LoadContext, f: Path, key: str, mapping: Mapping[Any, str], loc: str, value: Any) -> str:
    try:
        return mapping[value]
    except (KeyError, TypeError):
        raise ctx.fail(f"{key} must be one of " + ", ".join(map(repr, mapping)), file=f, where=loc,
                       value=value) from None


# -- AdvGLUE: adversarial rows, then the same rows with their original text (AccDropEvaluator compares halves) ----

_ADV_SUBSETS = {
    "AdvSst2Dataset": ("sst2", ("original_sentence",)),
    "AdvQqpDataset": ("qqp", ("original_question1", "original_question2")),
    "AdvMnliDataset": ("mnli", ("original_premise", "original_hypothesis")),
    "AdvMnliMMDataset": ("mnli-mm", ("original_premise", "original_hypothesis")),
    "AdvQnliDataset": ("qnli", ("original_question", "original_sentence")),
    "AdvRteDataset": ("rte", ("original_sentence1", "original_sentence2")),
}


def adv_glue(ctx: LoadContext, path: str) -> Splits:
    """``dev_ann.json``: a dict of subset -> rows. Rows with no original text are dropped; the adversarial rows
    come first, then copies with each present ``original_<x>`` written over ``<x>`` and ``type='original'``;
    ``label_option`` is the label as a letter (0 = A)."""
    subset, keys = _ADV_SUBSETS[ctx.loader]
    f = ctx.find(path)
    data = json_file(f)
    if not isinstance(data, Mapping) or not isinstance(data.get(subset), list) or not data[subset]:
        raise ctx.fail(f"expected a JSON object whose {subset!r} entry is a non-empty list of rows", file=f,
                       where=subset)
    src = [(f"{subset}[{i}]", dict(need(ctx, r, ("label",), file=f, where=f"{subset}[{i}]")))
           for i, r in enumerate(data[subset])]
    for k in keys:  # the reference adds the original-text keys to the first row so every row keeps them
        src[0][1].setdefault(k, None)
    adv = table(src, f)
    kept = [(w, r) for w, r in zip(adv.where, adv.rows) if any(r.get(k) for k in keys)]
    originals = []
    for w, r in kept:
        o = dict(r)
        for k in keys:
            if o.get(k):
                o[k.split("original_")[-1]] = o[k]
                o["type"] = "original"
        originals.append((w + " (original)", o))
    both = kept + originals
    columns = list(dict.fromkeys(k for _, r in both for k in r))  # concatenation fills a missing column with None
    out = []
    for w, r in both:
        row = {k: r.get(k) for k in columns}
        label = row["label"]
        if not isinstance(label, int) or isinstance(label, bool) or label < 0:
            raise ctx.fail("label must be a class index (0, 1, ...)", file=f, where=w, value=label)
        row["label_option"] = chr(ord("A") + label)
        out.append(row)
    return Split(out, str(f), [w for w, _ in both])


def ax_v2(ctx: LoadContext, path: str) -> Splits:
    """SuperGLUE AX-b / AX-g JSONL: ``label`` entailment / not_entailment -> A / B."""
    f = ctx.find(path)
    items = []
    for loc, r in json_records(ctx, f):
        need(ctx, r, ("label",), file=f, where=loc)
        r["label"] = mapped(ctx, f, "label", {"entailment": "A", "not_entailment": "B"}, loc, r["label"])
        items.append((loc, r))
    return table(items, f)


def each_row(got: Splits, fn) -> Splits:
    def one(part: Split) -> Split:
        return Split([fn(dict(r), part.locate(i)) for i, r in enumerate(part.rows)], part.file, list(part.where))

    return one(got) if isinstance(got, Split) else {k: one(v) for k, v in got.items()}


# -- Anthropic's model-written evals: ``load_dataset('json', data_files=path)`` --------------------------------


def _anthropic(ctx: LoadContext, path: str, fix) -> Splits:
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, r in json_records(ctx, f):
        need(ctx, r, ("answer_matching_behavior",), file=f, where=loc)
        r["answer_matching_behavior"] = fix(r["answer_matching_behavior"])
        items.append((loc, r))
    return {"train": table(items, f)}


def _first_letter(letters: str):
    def fix(answer: Any) -> Any:
        # the stored answer reads " (A)": the first option letter found in it, else unchanged
        return next((c for c in letters if c in str(answer)), answer)

    return fix


def airisk(ctx: LoadContext, path: str) -> Splits:
    """``answer_matching_behavior`` " (X)" -> X (A-H)."""
    return _anthropic(ctx, path, _first_letter("ABCDEFGH"))


def sycophancy(ctx: LoadContext, path: str) -> Splits:
    """``answer_matching_behavior`` " (X)" -> X (A-G)."""
    return _anthropic(ctx, path, _first_letter("ABCDEFG"))


def persona(ctx: LoadContext, path: str) -> Splits:
    """``answer_matching_behavior`` " Yes" -> A, anything else -> B."""
    return _anthropic(ctx, path, lambda a: "A" if a == " Yes" else "B")
