"""SuperGLUE (BoolQ, CB, COPA, MultiRC, ReCoRD, WiC, WSC and the AX diagnostics): their loaders."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    jsonl,
    need,
    rows,
)
from promptweave.data.loaders.classify import each_row, json_records, mapped, table
from promptweave.data.loaders.generic import relabel
from promptweave.data.loaders.hub import binary_answer, hf_dataset, map_rows
from promptweave.data.loaders.plain_sets import relabelled


def wsc_v2(ctx: LoadContext, path: str) -> Splits:
    """WSC JSONL (a local path): span1 / span2 from ``target``, text, label true/false -> A/B."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, line in jsonl(f):
        need(ctx, line, ("target", "text", "label"), file=f, where=loc)
        t = need(ctx, line["target"], ("span1_text", "span2_text"), file=f, where=loc + ".target")
        if line["label"] not in ("true", "false"):
            raise ctx.fail("label must be 'true' or 'false'", file=f, where=loc, value=line["label"])
        items.append((loc, {"span1": t["span1_text"], "span2": t["span2_text"], "text": line["text"],
                            "label": {"true": "A", "false": "B"}[line["label"]]}))
    return rows(items, f)


def _wsc_target(ctx: LoadContext, row: Mapping[str, Any], loc: str) -> Mapping[str, Any]:
    t = row.get("target")
    if not isinstance(t, Mapping) or not all(k in t for k in ("span1_text", "span2_text", "span1_index",
                                                               "span2_index")):
        raise ctx.fail("target must hold span1_text, span2_text, span1_index and span2_index", where=loc, value=t)
    return t


def wsc(ctx: LoadContext, **kwargs: Any) -> Splits:
    """SuperGLUE WSC through ``load_dataset(**kwargs)``: ``new_text`` = the words with the pronoun (``span2``)
    replaced by its candidate referent; ``answer`` 1 / 0 from ``label``; ``span1`` / ``span2``; ``target`` dropped."""
    def prep(row: dict[str, Any], loc: str) -> dict[str, Any]:
        t = _wsc_target(ctx, row, loc)
        words = str(row.get("text", "")).split(" ")
        i = t["span2_index"]
        if not isinstance(i, int) or not 0 <= i < len(words):
            raise ctx.fail("target.span2_index is not a word position of text", where=loc, value=i)
        words[i] = t["span1_text"]
        row["new_text"] = " ".join(words)
        row["answer"] = 1 if row.get("label") == "true" else 0
        row["span1"], row["span2"] = t["span1_text"], t["span2_text"]
        del row["target"]
        return row

    return each_row(hf_dataset(ctx, **kwargs), prep)


def wsc_v3(ctx: LoadContext, path: str) -> Splits:
    """WSC JSONL: ``text`` with the candidate (span1) marked ``* ... *`` and the pronoun (span2) ``# ... #``
    where they stand in the words; ``label`` true / false -> A / B."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, r in json_records(ctx, f):
        need(ctx, r, ("text", "target", "label"), file=f, where=loc)
        t = _wsc_target(ctx, r, loc)
        spans = []
        for n, mark in ((1, "*"), (2, "#")):
            start = t[f"span{n}_index"]
            if not isinstance(start, int):
                raise ctx.fail(f"target.span{n}_index must be a word position", file=f, where=loc, value=start)
            text = t[f"span{n}_text"]
            spans.append((start, start + len(text.split(" ")), f"{mark} {text} {mark}"))
        out = []
        for i, word in enumerate(r["text"].split(" ")):
            inside = [(s, marked) for s, e, marked in spans if s <= i < e]
            if not inside:
                out.append(word)
            elif i == inside[0][0]:
                out.append(inside[0][1])
        items.append((loc, {"span1": t["span1_text"], "span2": t["span2_text"], "text": " ".join(out),
                            "label": mapped(ctx, f, "label", {"true": "A", "false": "B"}, loc, r["label"])}))
    return table(items, f)


def boolq_v2(ctx: LoadContext, path: str) -> Splits:
    """JSONL with ``label`` 'true'/'false', mapped to A/B."""
    return relabel(ctx, ctx.find(path), {"true": "A", "false": "B"})


def boolq(ctx: LoadContext, **kwargs: Any) -> Splits:
    """SuperGLUE BoolQ through ``load_dataset``: ``answer`` 1 / 0 from ``label`` 'true' / other."""
    return map_rows(hf_dataset(ctx, **kwargs), binary_answer)


def copa_v2(ctx: LoadContext, path: str) -> Splits:
    """COPA JSONL, every field kept: ``label`` 0 / 1 -> A / B."""
    return relabelled(ctx, path, {0: "A", 1: "B"})


def multirc(ctx: LoadContext, path: str) -> Splits:
    """MultiRC JSONL (a local path): one row per candidate answer with its passage text, question and label."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, sample in jsonl(f, errors="ignore"):
        passage = need(ctx, need(ctx, sample, ("passage",), file=f, where=loc)["passage"], ("text", "questions"),
                       file=f, where=loc + ".passage")
        for q in passage["questions"]:
            for a in q["answers"]:
                items.append((loc, {"text": passage["text"], "question": q["question"], "answer": a["text"],
                                    "label": a["label"]}))
    return rows(items, f)


def ax_v2(ctx: LoadContext, path: str) -> Splits:
    """SuperGLUE AX-b / AX-g JSONL: ``label`` entailment / not_entailment -> A / B."""
    f = ctx.find(path)
    items = []
    for loc, r in json_records(ctx, f):
        need(ctx, r, ("label",), file=f, where=loc)
        r["label"] = mapped(ctx, f, "label", {"entailment": "A", "not_entailment": "B"}, loc, r["label"])
        items.append((loc, r))
    return table(items, f)


def cb_v2(ctx: LoadContext, path: str) -> Splits:
    """CB JSONL, every field kept: ``label`` contradiction / entailment / neutral -> A / B / C."""
    return relabelled(ctx, path, {"contradiction": "A", "entailment": "B", "neutral": "C"})


def wic_v2(ctx: LoadContext, path: str) -> Splits:
    """WiC JSONL, every field kept: ``label`` 'true' / 'false' -> A / B."""
    return relabelled(ctx, path, {"true": "A", "false": "B"})


def wic(ctx: LoadContext, **kwargs: Any) -> Splits:
    """WiC through ``load_dataset``: ``answer`` 1 / 0 from ``label`` 'true' / other."""
    return map_rows(hf_dataset(ctx, **kwargs), binary_answer)


def record(ctx: LoadContext, path: str) -> Splits:
    """ReCoRD JSONL (a local path): ``@highlight`` markers removed from the passage, ``@placeholder`` in the query
    written as ``____``, the answer texts listed."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, sample in jsonl(f, errors="ignore"):
        need(ctx, sample, ("passage", "qas"), file=f, where=loc)
        text = sample["passage"]["text"].replace("@highlight", "")
        for qa in sample["qas"]:
            items.append((loc, {"text": text, "question": qa["query"].replace("@placeholder", "____"),
                                "answers": [a["text"] for a in qa["answers"]]}))
    return rows(items, f)


LOADERS = {
    "ReCoRDDataset": record,
    "WiCDataset": wic,
    "AXDatasetV2": ax_v2,
    "CBDatasetV2": cb_v2,
    "WiCDatasetV2": wic_v2,
    "WSCDatasetV2": wsc_v2,
    "MultiRCDataset": multirc,
    "BoolQDatasetV2": boolq_v2,
    "BoolQDataset": boolq,
    "WSCDataset": wsc,
    "WSCDatasetV3": wsc_v3,
    "COPADatasetV2": copa_v2,
}
