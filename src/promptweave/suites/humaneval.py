"""HumanEval and HumanEval-X: their loaders and the completion postprocessors (the scoring runs in the code sandbox, evaluate/code_exec.py)."""
from __future__ import annotations

import gzip
import json
import re
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, regular, rows
from promptweave.data.loaders.classify import table
from promptweave.errors import DataError

# -- HumanEval-X: one gzipped JSONL file per language -----------------------------------------------------------

_HUMANEVALX_LANGS = ("cpp", "go", "java", "js", "python", "rust")


def humaneval(ctx: LoadContext, path: str, num_repeats: int = 1, local_mode: bool = False) -> Splits:
    """JSONL of problems, each repeated ``num_repeats`` times in place."""
    f = ctx.find(path, local_mode=local_mode)
    items = []
    for loc, line in jsonl(f):
        need(ctx, line, (), file=f, where=loc)
        items.extend((loc, dict(line)) for _ in range(int(num_repeats)))
    return rows(items, f)


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


# -- code -------------------------------------------------------------------------------------------------------


def humaneval_postprocess_v2(text: str) -> str:
    """The first fenced code block (or the text), left-stripped."""
    blocks = re.findall(r"```\w*\n(.*?)```", text, re.DOTALL)
    if blocks:
        text = blocks[0]
    return text.lstrip()


def humaneval_postprocess_v3(text: str) -> str:
    blocks = re.findall(r"```\w*\n(.*?)```", text, re.DOTALL)
    if blocks:
        text = blocks[-1]
    return text.lstrip()


def humaneval_internal_v2_postprocess(text: str) -> str:
    """The indented function body a base model continued with, up to the first unindented line."""
    if text.startswith("   ") and not text.startswith("    "):
        text = " " + text
    pred = text.split("\n\n\n")[0].split("\n```")[0]
    kept = []
    for line in pred.split("\n"):
        if line and line[0] != " ":
            break
        kept.append(line)
    return "\n".join(kept)


LOADERS = {
    "HumanevalDataset": humaneval,
    "HumanevalXDataset": humanevalx,
}


POSTPROCESSORS = {
    "humaneval_postprocess_v2": humaneval_postprocess_v2,
    "humaneval_postprocess_v3": humaneval_postprocess_v3,
    "humaneval_internal_v2_postprocess": humaneval_internal_v2_postprocess,
}
