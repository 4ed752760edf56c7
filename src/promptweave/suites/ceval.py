"""C-Eval (Chinese exam multiple choice): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, csv_records, rows


def ceval(ctx: LoadContext, path: str, name: str, local_mode: bool = False) -> Splits:
    """``<path>/{dev,val,test}/<name>_<split>.csv`` with a header; ``explanation``/``answer`` default to ''."""
    splits = ("dev", "val", "test")
    out = {}
    for split, f in zip(splits, ctx.files(path, [f"{s}/{name}_{s}.csv" for s in splits], local_mode=local_mode)):
        recs = csv_records(f)
        header = recs[0][1] if recs else []
        items = []
        for loc, r in recs[1:]:
            item = dict(zip(header, r))
            item.setdefault("explanation", "")
            item.setdefault("answer", "")
            items.append((loc, item))
        out[split] = rows(items, f)
    return out


LOADERS = {
    "CEvalDataset": ceval,
}
