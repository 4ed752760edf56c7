"""CommonsenseQA and its Chinese version: their loaders."""
from __future__ import annotations

from collections.abc import Mapping

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows
from promptweave.data.loaders.classify import json_records, table
from promptweave.data.sources import Split


def commonsenseqa(ctx: LoadContext, path: str) -> Splits:
    """``train_rand_split.jsonl`` -> train, ``dev_rand_split.jsonl`` -> validation; five choices A-E."""
    out = {}
    for split, f in zip(("train", "validation"), ctx.files(path, ["train_rand_split.jsonl", "dev_rand_split.jsonl"])):
        items = []
        for loc, line in jsonl(f):
            need(ctx, line, ("question", "answerKey"), file=f, where=loc)
            q = need(ctx, line["question"], ("stem", "choices"), file=f, where=loc + ".question")
            items.append((loc, {"question": q["stem"], **{"ABCDE"[i]: q["choices"][i]["text"] for i in range(5)},
                                "answerKey": line["answerKey"]}))
        out[split] = rows(items, f)
    return out



def commonsenseqa_cn(ctx: LoadContext, path: str) -> Splits:
    """Chinese CommonsenseQA JSONL, read as both train and validation: ``choices.text`` spread over columns A-E;
    ``question_concept``, ``id`` and ``choices`` dropped."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, r in json_records(ctx, f):
        need(ctx, r, ("choices",), file=f, where=loc)
        texts = r["choices"].get("text") if isinstance(r["choices"], Mapping) else None
        if not isinstance(texts, list) or len(texts) < 5:
            raise ctx.fail("choices.text must list five options", file=f, where=loc, value=r["choices"])
        row = {k: v for k, v in r.items() if k not in ("question_concept", "id", "choices")}
        row.update({chr(ord("A") + i): texts[i] for i in range(5)})
        items.append((loc, row))
    one = table(items, f)
    return {"train": one, "validation": Split(list(one.rows), one.file, list(one.where))}


LOADERS = {
    "commonsenseqaDataset": commonsenseqa,
    "CommonsenseQADataset_CN": commonsenseqa_cn,
}
