"""AdvGLUE (adversarial GLUE): its loader (the adversarial rows, then the same rows with their original text)."""
from __future__ import annotations

from collections.abc import Mapping

from promptweave.data.loaders.base import LoadContext, Splits, json_file, need
from promptweave.data.loaders.classify import table
from promptweave.data.sources import Split

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


LOADERS = {
    "AdvSst2Dataset": adv_glue,
    "AdvQqpDataset": adv_glue,
    "AdvMnliDataset": adv_glue,
    "AdvMnliMMDataset": adv_glue,
    "AdvQnliDataset": adv_glue,
    "AdvRteDataset": adv_glue,
}
