"""Sets whose reference loader only reads files and renames or relabels columns: SuperGLUE CB and WiC (v2), and the
helpers the suites of such sets share (Xiezhi, FewCLUE, COPA, CrowS-Pairs, Jigsaw, FLORES, HumanEval-X are in
``suites/``).

Each function returns the rows, in the columns and order, that OpenCompass 0.5.4's class of the same name builds
from the same files.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, jsonl, need
from promptweave.data.loaders.classify import table
from promptweave.data.sources import Split, read_text
from promptweave.errors import DataError

# -- one JSONL file, the gold column turned into an option letter (SuperGLUE CB / COPA, FewCLUE EPRSTMT v2) --------


def relabelled(ctx: LoadContext, path: str, mapping: dict[Any, str], keep: tuple[str, ...] | None = None) -> Split:
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, r in jsonl(f):
        r = dict(need(ctx, r, ("label", *(keep or ())), file=f, where=loc))
        value = r["label"]
        if isinstance(value, bool) or value not in mapping:
            raise ctx.fail("label must be one of " + ", ".join(map(repr, mapping)), file=f, where=loc, value=value)
        r["label"] = mapping[value]
        items.append((loc, {k: r[k] for k in keep} | {"label": r["label"]} if keep else r))
    return table(items, f)


def csv_rows(f: Path) -> list[tuple[str, list[str]]]:
    # the reference opens the files in text mode (newlines translated) and keeps empty records out of zip's way
    text = read_text(f).replace("\r\n", "\n").replace("\r", "\n")
    reader = csv.reader(io.StringIO(text, newline=""))
    out = []
    while True:
        start = reader.line_num + 1
        try:
            rec = next(reader)
        except StopIteration:
            return out
        except csv.Error as exc:
            raise DataError(f"malformed CSV: {exc}", file=str(f), field=f"line {start}") from None
        out.append((f"line {start}", rec))
