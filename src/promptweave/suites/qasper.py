"""QASPER (questions on NLP papers): its loader."""
from __future__ import annotations

from collections.abc import Mapping

from promptweave.data.loaders.base import LoadContext, Splits, json_file, need
from promptweave.data.loaders.classify import table


def qasper(ctx: LoadContext, path: str) -> Splits:
    """``qasper-dev-v0.3.json``: per question with extractive answers, ``answer`` (all spans), ``question`` and
    ``evidence`` (every section's name and paragraphs); the ``dev`` split."""
    f = ctx.member(ctx.find(path, local_mode=True), "qasper-dev-v0.3.json")
    data = json_file(f)
    if not isinstance(data, Mapping):
        raise ctx.fail("expected a JSON object of articles", file=f)
    items = []
    for article_id, article in data.items():
        need(ctx, article, ("full_text", "qas"), file=f, where=str(article_id))
        text = "\n".join((s.get("section_name") or "") + "\n" + "\n".join(s["paragraphs"]) + "\n"
                         for s in article["full_text"])
        for k, qa in enumerate(article["qas"]):
            spans = [span for a in qa["answers"] for span in a["answer"]["extractive_spans"]]
            if spans:
                items.append((f"{article_id}.qas[{k}]", {"answer": spans, "question": qa["question"],
                                                          "evidence": text}))
    return {"dev": table(items, f)}


LOADERS = {
    "QASPERDataset": qasper,
}
