"""Jigsaw Multilingual (toxic comment classification): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.plain_sets import csv_rows
from promptweave.data.sources import Split

# -- Jigsaw multilingual: a text CSV and a label CSV read side by side -------------------------------------------

_JIGSAW_LANGS = ("es", "fr", "it", "pt", "ru", "tr")


def jigsaw_multilingual(ctx: LoadContext, path: str, label: str, lang: str) -> Splits:
    """Rows of ``path`` (id, comment_text, lang) whose language is ``lang``, paired by position with ``label``
    (id, toxic): ``idx`` counts the kept rows, ``label`` is the toxic flag, ``choices`` no / yes."""
    if lang not in _JIGSAW_LANGS:
        raise ctx.fail("lang must be one of " + ", ".join(_JIGSAW_LANGS), where="lang", value=lang)
    texts_file = ctx.find(path, local_mode=True)
    labels_file = ctx.find(label, local_mode=True, field="label")
    out, where = [], []
    for (loc, text), (label_loc, target) in zip(csv_rows(texts_file), csv_rows(labels_file)):
        if len(text) < 3 or text[2] != lang:
            if len(text) < 3:
                raise ctx.fail("each text record needs id, comment_text and lang", file=texts_file, where=loc,
                               value=text)
            continue
        if len(target) < 2 or target[0] != text[0]:
            raise ctx.fail(f"the label file's record here must be (id, toxic) for id {text[0]!r}", file=labels_file,
                           where=label_loc, value=target)
        try:
            flag = int(target[1])
        except ValueError:
            raise ctx.fail("toxic must be an integer", file=labels_file, where=label_loc,
                           value=target[1]) from None
        out.append({"idx": len(out), "text": text[1], "label": flag, "choices": ["no", "yes"]})
        where.append(loc)
    return {"test": Split(out, str(texts_file), where)}


LOADERS = {
    "JigsawMultilingualDataset": jigsaw_multilingual,
}
