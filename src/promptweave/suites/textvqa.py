"""TextVQA (questions on text in images, AISBench): its loader (its scoring rules are AISBench's, in the aisbench suite)."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, json_file, jsonl, need, rows
from promptweave.data.loaders.multimodal import media_b64
from promptweave.prompt.multimodal import CONTENT_TAG, MARKERS


def textvqa(ctx: LoadContext, path: str, image_type: str) -> Splits:
    """Questions JSONL; gold answers by ``question_id`` from ``<stem>_annotations.json`` beside it; ``image_url``
    is the image path (``image_path``) or its base64 (``image_base64``); ``content`` = image then question."""
    if image_type not in ("image_path", "image_base64"):
        raise ctx.fail("image_type must be 'image_path' or 'image_base64'", where="image_type", value=image_type)
    f = ctx.find(path, local_mode=True)
    ann = f.parent / (f.name.split(".")[0] + "_annotations.json")
    if not ann.exists():
        raise ctx.fail(f"the gold answers file {ann.name} is missing beside the questions", file=ann)
    data = json_file(ann)
    if not isinstance(data, dict) or not isinstance(data.get("annotations"), list):
        raise ctx.fail("expected a JSON object with an 'annotations' list", file=ann)
    gold = {a.get("question_id"): a.get("answers") for a in data["annotations"] if isinstance(a, dict)}
    items = []
    for loc, line in jsonl(f):
        row = dict(need(ctx, line, ("question_id", "question", "image"), file=f, where=loc))
        if row["question_id"] not in gold:
            raise ctx.fail("no gold answer for this question_id in the annotations file", file=f, where=loc,
                           value=row["question_id"])
        row["answer"] = gold[row["question_id"]]
        url = row["image"] if image_type == "image_path" else media_b64(ctx, row["image"], loc, f)
        row["image_url"] = url
        row["content"] = MARKERS["image"] + url + CONTENT_TAG + MARKERS["text"] + row["question"] + CONTENT_TAG
        items.append((loc, row))
    return rows(items, f)


LOADERS = {
    "TEXTVQADataset": textvqa,
}
