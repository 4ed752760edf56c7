"""Sets whose reference loader only reads files and renames or relabels columns: Xiezhi, FewCLUE CSL, EPRSTMT,
CHID and CLUEWSC (v2), SuperGLUE CB, COPA and WiC (v2), CrowS-Pairs (English, PPL), Jigsaw multilingual toxicity, FLORES (first 100) and
HumanEval-X.

Each function returns the rows, in the columns and order, that OpenCompass 0.5.4's class of the same name builds
from the same files; the names are registered in one line in compat/loaders.py (:data:`CLASSES`).
"""
from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, regular
from promptweave.data.loaders.classify import table
from promptweave.data.sources import Split, read_text
from promptweave.errors import DataError

# -- Xiezhi: one JSON object per line, four options in one newline-separated string ----------------------------


def _xiezhi_file(ctx: LoadContext, f: Path, chinese: bool) -> Split:
    label_key = "labels" if chinese else "label"
    items = []
    for loc, r in jsonl(f):
        need(ctx, r, ("question", "options", "answer", label_key), file=f, where=loc)
        options = r["options"]
        if not isinstance(options, str):
            raise ctx.fail("options must be one string, an option per line", file=f, where=loc, value=options)
        if options.endswith('"\n'):  # some records end in a stray quote and newline; the reference cuts both
            options = options[:-2]
        parts = options.split("\n")
        if len(parts) != 4:  # the reference keeps only four-option questions
            continue
        if r["answer"] not in parts:
            raise ctx.fail("answer must be one of the four options", file=f, where=loc, value=r["answer"])
        labels = r[label_key]
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise ctx.fail(f"{label_key} must be a list of category names", file=f, where=loc, value=labels)
        items.append((loc, {
            "question": r["question"],
            "A": parts[0], "B": parts[1], "C": parts[2], "D": parts[3],
            "labels": sorted(labels, key=len, reverse=True),  # longest (finest) category first, as XiezhiRetriever reads
            "answer": "ABCD"[parts.index(r["answer"])],
        }))
    return table(items, f)


def xiezhi(ctx: LoadContext, path: str, name: str) -> Splits:
    """``<path>/<name>/xiezhi.v1.json`` as test; the Chinese or English training set (``xiezhi_train_chn`` /
    ``xiezhi_train_eng``, by whether ``name`` contains ``chn``) as train."""
    if not isinstance(name, str) or not name:
        raise ctx.fail("XiezhiDataset needs name (a subset folder such as 'xiezhi_spec_chn')", where="name",
                       value=name)
    root = ctx.find(path, local_mode=True)
    chinese = "chn" in name
    train = root / ("xiezhi_train_chn" if chinese else "xiezhi_train_eng") / "xiezhi.v1.json"
    return {"train": _xiezhi_file(ctx, train, chinese), "test": _xiezhi_file(ctx, root / name / "xiezhi.v1.json",
                                                                             chinese)}


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


def cb_v2(ctx: LoadContext, path: str) -> Splits:
    """CB JSONL, every field kept: ``label`` contradiction / entailment / neutral -> A / B / C."""
    return relabelled(ctx, path, {"contradiction": "A", "entailment": "B", "neutral": "C"})


def wic_v2(ctx: LoadContext, path: str) -> Splits:
    """WiC JSONL, every field kept: ``label`` 'true' / 'false' -> A / B."""
    return relabelled(ctx, path, {"true": "A", "false": "B"})


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


# -- HumanEval-X: one gzipped JSONL file per language -----------------------------------------------------------

_HUMANEVALX_LANGS = ("cpp", "go", "java", "js", "python", "rust")


def humanevalx(ctx: LoadContext, path: str, language: str, **_ignored: Any) -> Splits:
    """``<path>/humanevalx_<language>.jsonl.gz``, every non-blank line one problem, columns as the first row's."""
    if language not in _HUMANEVALX_LANGS:
        raise ctx.fail("language must be one of " + ", ".join(_HUMANEVALX_LANGS), where="language", value=language)
    f = regular(ctx.find(path, local_mode=True) / f"humanevalx_{language}.jsonl.gz")
    try:
        text = gzip.decompress(f.read_bytes()).decode("utf-8")
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise DataError(f"not a readable gzip file ({exc})", file=str(f)) from None
    except UnicodeDecodeError as exc:
        raise DataError(f"not valid UTF-8 after decompression ({exc.reason})", file=str(f)) from None
    items = []
    # the reference iterates the text stream: lines end at \n, \r\n or \r only
    for lineno, line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"malformed JSON: {exc.msg}", file=str(f), field=f"line {lineno}") from None
        items.append((f"line {lineno}", dict(need(ctx, r, (), file=f, where=f"line {lineno}"))))
    return table(items, f)


CLASSES = {
    "XiezhiDataset": xiezhi,
    "CBDatasetV2": cb_v2,
    "WiCDatasetV2": wic_v2,
    "HumanevalXDataset": humanevalx,
}
"""The reference's loader class names this module reads (compat/loaders.py registers them in one line)."""
