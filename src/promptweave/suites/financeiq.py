"""FinanceIQ (Chinese finance exam multiple choice): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, csv_records
from promptweave.data.loaders.classify import table

# -- FinanceIQ: <path>/{dev,test}/<name>.csv --------------------------------------------------------------------


def financeiq(ctx: LoadContext, path: str, name: str) -> Splits:
    """Per split one CSV with a header and seven columns: (id, question, A, B, C, D, answer)."""
    splits = ("dev", "test")
    out = {}
    for split, f in zip(splits, ctx.files(path, [f"{s}/{name}.csv" for s in splits], local_mode=True)):
        items = []
        for loc, rec in csv_records(f)[1:]:
            if len(rec) != 7:
                raise ctx.fail("a FinanceIQ row has seven columns (id, question, A, B, C, D, answer)", file=f,
                               where=loc, value=len(rec))
            items.append((loc, dict(zip(("question", "A", "B", "C", "D", "answer"), rec[1:]))))
        out[split] = table(items, f)
    return out


LOADERS = {
    "FinanceIQDataset": financeiq,
}
