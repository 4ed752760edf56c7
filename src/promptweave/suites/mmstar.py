"""MMStar (vision-indispensable multiple choice, AISBench's TSV layout): its loader."""
from __future__ import annotations

import json
import string

from promptweave.data.loaders.base import LoadContext, Splits, rows
from promptweave.data.loaders.mm_tsv import is_missing, rows_with_images
from promptweave.prompt.multimodal import build_content


def mmstar(ctx: LoadContext, path: str) -> Splits:
    """MMStar TSV: the first image, then hint + question + lettered options; ``answer`` is a dict with the
    choices (JSON), the letter, split and categories, as the reference's evaluator reads it."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, r, paths in rows_with_images(ctx, f, "MMStar_images"):
        options = {c: r[c] for c in string.ascii_uppercase if c in r and not is_missing(r[c])}
        prompt = f"Hint: {r['hint']}\n" if not is_missing(r.get("hint")) else ""
        prompt += r["question"]
        if options:
            prompt += "Options:\n" + "".join(f"{k}. {v}\n" for k, v in options.items())
            prompt += "Please select the correct answer from the options above. \n"
        content = build_content([("image", paths[0]), ("text", prompt)])
        answer = {"choices": json.dumps(options), "answer": r.get("answer"), "split": r.get("split"),
                  "l2-category": r.get("l2-category"), "category": r.get("category")}
        items.append((loc, {"content": content, "answer": answer}))
    return rows(items, f)


LOADERS = {
    "MMStarDataset": mmstar,
}
