"""Summarisation and exam-paper sets: XSum JSONL, LCSTS's parallel text files, GAOKAO-Bench JSON papers."""
from __future__ import annotations

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    json_file,
    jsonl,
    need,
    rows,
)
from promptweave.data.sources import text_lines


def xsum(ctx: LoadContext, path: str) -> Splits:
    """The first 1,000 JSONL lines; rows whose dialogue or summary is a float (NaN in the export) are dropped.
    OpenCompass names the file; AISBench names its folder, holding ``dev.jsonl``."""
    f = ctx.find(path)
    if f.is_dir():
        f = ctx.member(f, "dev.jsonl")
    items = []
    for i, (loc, sample) in enumerate(jsonl(f, errors="ignore")):
        if i == 1000:
            break
        need(ctx, sample, ("dialogue", "summary"), file=f, where=loc)
        if isinstance(sample["dialogue"], float) or isinstance(sample["summary"], float):
            continue
        items.append((loc, {"dialogue": sample["dialogue"], "summary": sample["summary"]}))
    return rows(items, f)


def lcsts(ctx: LoadContext, path: str) -> Splits:
    """``test.src.txt`` and ``test.tgt.txt``, line by line: content and abst (stripped)."""
    src_f, tgt_f = ctx.files(path, ["test.src.txt", "test.tgt.txt"])
    src, tgt = text_lines(src_f), text_lines(tgt_f)
    return rows(((f"line {i + 1}", {"content": s.strip(), "abst": t.strip()})
                 for i, (s, t) in enumerate(zip(src, tgt))), src_f)


def gaokao_bench(ctx: LoadContext, path: str, filename: str, name: str) -> Splits:
    """``<path><filename>`` (plain concatenation, as the reference joins them): a JSON paper whose
    ``example`` list holds the questions."""
    f = ctx.concat(path, filename)
    data = json_file(f)
    if not isinstance(data, dict) or not isinstance(data.get("example"), list):
        raise ctx.fail("expected a JSON object with an 'example' list", file=f)
    return rows(((f"example[{i}]", dict(need(ctx, ex, (), file=f, where=f"example[{i}]")))
                 for i, ex in enumerate(data["example"])), f)
