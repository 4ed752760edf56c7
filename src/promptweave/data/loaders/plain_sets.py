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
from promptweave.data.loaders.hub import hf_dataset
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


# -- FewCLUE CSL v2 ----------------------------------------------------------------------------------------------


def csl_v2(ctx: LoadContext, path: str) -> Splits:
    """CSL JSONL: ``abst``, the ``keyword`` list joined by a full-width comma, ``label`` 0 / 1 -> A / B."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, r in jsonl(f):
        need(ctx, r, ("abst", "keyword", "label"), file=f, where=loc)
        if not isinstance(r["keyword"], list) or not all(isinstance(k, str) for k in r["keyword"]):
            raise ctx.fail("keyword must be a list of strings", file=f, where=loc, value=r["keyword"])
        try:
            label = "AB"[int(r["label"])]
        except (ValueError, TypeError, IndexError):
            raise ctx.fail("label must be 0 or 1", file=f, where=loc, value=r["label"]) from None
        items.append((loc, {"abst": r["abst"], "keywords": "，".join(r["keyword"]), "label": label}))
    return table(items, f)


# -- one JSONL file, the gold column turned into an option letter (SuperGLUE CB / COPA, FewCLUE EPRSTMT v2) --------


def _relabelled(ctx: LoadContext, path: str, mapping: dict[Any, str], keep: tuple[str, ...] | None = None) -> Split:
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
    return _relabelled(ctx, path, {"contradiction": "A", "entailment": "B", "neutral": "C"})


def copa_v2(ctx: LoadContext, path: str) -> Splits:
    """COPA JSONL, every field kept: ``label`` 0 / 1 -> A / B."""
    return _relabelled(ctx, path, {0: "A", 1: "B"})


def eprstmt_v2(ctx: LoadContext, path: str) -> Splits:
    """EPRSTMT JSONL: ``sentence`` and ``label`` Positive / Negative -> A / B."""
    return _relabelled(ctx, path, {"Positive": "A", "Negative": "B"}, keep=("sentence",))


def wic_v2(ctx: LoadContext, path: str) -> Splits:
    """WiC JSONL, every field kept: ``label`` 'true' / 'false' -> A / B."""
    return _relabelled(ctx, path, {"true": "A", "false": "B"})


def cluewsc_v2(ctx: LoadContext, path: str) -> Splits:
    """CLUEWSC JSONL: the two spans of ``target``, ``text`` and ``label`` 'true' / 'false' -> A / B."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, r in jsonl(f):
        need(ctx, r, ("target", "text", "label"), file=f, where=loc)
        target = need(ctx, r["target"], ("span1_text", "span2_text"), file=f, where=f"{loc}: target")
        if r["label"] not in ("true", "false"):
            raise ctx.fail("label must be 'true' or 'false'", file=f, where=loc, value=r["label"])
        items.append((loc, {"span1": target["span1_text"], "span2": target["span2_text"], "text": r["text"],
                            "label": "A" if r["label"] == "true" else "B"}))
    return table(items, f)


def chid_v2(ctx: LoadContext, path: str) -> Splits:
    """CHID JSONL: ``content`` with ``#idiom#`` as a blank, the candidates as columns A, B, ..., ``answer`` (an
    index) as a letter."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, r in jsonl(f):
        need(ctx, r, ("content", "candidates", "answer"), file=f, where=loc)
        if not isinstance(r["content"], str) or not isinstance(r["candidates"], list) or len(r["candidates"]) > 26:
            raise ctx.fail("content must be text and candidates a list of idioms", file=f, where=loc,
                           value=r["candidates"])
        answer = r["answer"]
        if isinstance(answer, bool) or not isinstance(answer, int) or not 0 <= answer < 7:
            raise ctx.fail("answer must be a candidate index 0-6", file=f, where=loc, value=answer)
        item = {"content": r["content"].replace("#idiom#", "______")}
        item.update({chr(ord("A") + i): c for i, c in enumerate(r["candidates"])})
        item["answer"] = "ABCDEFG"[answer]
        items.append((loc, item))
    return table(items, f)


# -- CrowS-Pairs (English) through load_dataset: every label 0 (the stereotypical sentence is the first choice) --


def crowspairs(ctx: LoadContext, **kwargs: Any) -> Splits:
    def zero(part: Split) -> Split:
        return Split([{**r, "label": 0} for r in part.rows], part.file, list(part.where))

    got = hf_dataset(ctx, **kwargs)
    return zero(got) if isinstance(got, Split) else {k: zero(v) for k, v in got.items()}


# -- Jigsaw multilingual: a text CSV and a label CSV read side by side -------------------------------------------

_JIGSAW_LANGS = ("es", "fr", "it", "pt", "ru", "tr")


def _csv_rows(f: Path) -> list[tuple[str, list[str]]]:
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


def jigsaw_multilingual(ctx: LoadContext, path: str, label: str, lang: str) -> Splits:
    """Rows of ``path`` (id, comment_text, lang) whose language is ``lang``, paired by position with ``label``
    (id, toxic): ``idx`` counts the kept rows, ``label`` is the toxic flag, ``choices`` no / yes."""
    if lang not in _JIGSAW_LANGS:
        raise ctx.fail("lang must be one of " + ", ".join(_JIGSAW_LANGS), where="lang", value=lang)
    texts_file = ctx.find(path, local_mode=True)
    labels_file = ctx.find(label, local_mode=True, field="label")
    out, where = [], []
    for (loc, text), (label_loc, target) in zip(_csv_rows(texts_file), _csv_rows(labels_file)):
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
    "CslDatasetV2": csl_v2,
    "EprstmtDatasetV2": eprstmt_v2,
    "CBDatasetV2": cb_v2,
    "COPADatasetV2": copa_v2,
    "WiCDatasetV2": wic_v2,
    "CluewscDatasetV2": cluewsc_v2,
    "CHIDDatasetV2": chid_v2,
    "CrowspairsDataset": crowspairs,
    "JigsawMultilingualDataset": jigsaw_multilingual,
    "HumanevalXDataset": humanevalx,
}
"""The reference's loader class names this module reads (compat/loaders.py registers them in one line)."""
