"""Multiple-choice layouts: JSONL question files (ARC, RACE, MathBench, WikiBench, OpenBookQA, ChemBench, Earth
Silver) and the helpers the multiple-choice suites share (MMLU, C-Eval, GPQA, PIQA, SIQA ... are in ``suites/``)."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    json_file,
    jsonl,
    need,
    rows,
)
from promptweave.data.loaders.hub import read_folder
from promptweave.data.sources import Split

ABCD = "ABCD"


def chembench(ctx: LoadContext, path: str, name: str) -> Splits:
    """``<path>/{dev,test}/<name>_benchmark.json``: lists of {question, A-D, answer} -> input, A-D, target."""
    root = ctx.find(path)
    out = {}
    for split in ("dev", "test"):
        f = ctx.member(root, split, f"{name}_benchmark.json")
        data = json_file(f)
        if not isinstance(data, list):
            raise ctx.fail("expected a JSON list of questions", file=f)
        items = []
        for i, item in enumerate(data):
            need(ctx, item, ("question", "A", "B", "C", "D", "answer"), file=f, where=f"[{i}]")
            items.append((f"[{i}]", {"input": item["question"], **{k: item[k] for k in ABCD},
                                     "target": item["answer"]}))
        out[split] = rows(items, f)
    return out


def earth_silver_mcq(ctx: LoadContext, path: str, prompt_mode: str = "zero-shot", **_: Any) -> Splits:
    """The ``multiple_choice`` split of the Earth-Silver dataset (question, answer kept as they are)."""
    if prompt_mode != "zero-shot":
        raise ctx.fail("only prompt_mode='zero-shot' exists (the reference has no few-shot form either)",
                       where="prompt_mode", value=prompt_mode)
    got = read_folder(ctx, ctx.find(path))
    if not isinstance(got, dict) or "multiple_choice" not in got:
        raise ctx.fail("the dataset needs a 'multiple_choice' split", file=ctx.find(path))
    return got["multiple_choice"]


def arc(ctx: LoadContext, path: str, name: str | None = None) -> Splits:
    """OpenCompass: one JSONL file (``name`` unused). AISBench: a folder of ``<name>-Dev.jsonl`` and
    ``<name>-Test.jsonl`` (splits Dev / Test). Questions without exactly 4 choices are dropped; the answer key
    becomes a letter A-D."""
    found = ctx.find(path)
    if found.is_dir():
        if not name:
            raise ctx.fail("ARCDataset over a folder needs name (e.g. 'ARC-c')", where="name")
        return {split: _arc_file(ctx, ctx.member(found, f"{name}-{split}.jsonl")) for split in ("Dev", "Test")}
    return _arc_file(ctx, found)


def _arc_file(ctx: LoadContext, f: Path) -> Split:
    items = []
    for loc, item in jsonl(f, errors="ignore"):
        need(ctx, item, ("question", "answerKey"), file=f, where=loc)
        q = need(ctx, item["question"], ("stem", "choices"), file=f, where=loc + ".question")
        choices = q["choices"]
        if len(choices) != 4:
            continue
        labels = [c["label"] for c in choices]
        if item["answerKey"] not in labels:
            raise ctx.fail("answerKey is not one of the choice labels", file=f, where=loc, value=item["answerKey"])
        items.append((loc, {"question": q["stem"], "answerKey": ABCD[labels.index(item["answerKey"])],
                            **{f"text{ABCD[i]}": choices[i]["text"] for i in range(4)}}))
    return rows(items, f)


def race(ctx: LoadContext, path: str, name: str) -> Splits:
    """``<path>/{validation,test}/<name>.jsonl`` (name: ``high`` / ``middle``)."""
    root = ctx.find(path)
    out = {}
    for split in ("validation", "test"):
        f = ctx.member(root, split, f"{name}.jsonl")
        items = []
        for loc, line in jsonl(f):
            need(ctx, line, ("article", "question", "options", "answer"), file=f, where=loc)
            opts = line["options"]
            items.append((loc, {"article": line["article"], "question": line["question"],
                                **{ABCD[i]: opts[i] for i in range(4)}, "answer": line["answer"]}))
        out[split] = rows(items, f)
    return out


def _labelled(ctx: LoadContext, root: Path, stem: str) -> tuple[Path, list[tuple[str, dict[str, Any], int]]]:
    """``<stem>.jsonl`` beside ``<stem>-labels.lst`` (one integer label per line), zipped."""
    data_f, label_f = ctx.member(root, f"{stem}.jsonl"), ctx.member(root, f"{stem}-labels.lst")
    data = jsonl(data_f)
    labels = [ln for ln in _lines(label_f) if ln.strip()]
    if len(data) != len(labels):
        raise ctx.fail(f"{len(data)} questions but {len(labels)} labels", file=label_f)
    out = []
    for (loc, item), label in zip(data, labels):
        try:
            value = int(label.strip())
        except ValueError:
            raise ctx.fail("a label must be an integer", file=label_f, value=label) from None
        out.append((loc, dict(need(ctx, item, (), file=data_f, where=loc)), value))
    return data_f, out


def labelled_splits(ctx: LoadContext, path: str, convert) -> Splits:
    """train/dev ``.jsonl`` + ``-labels.lst`` pairs (dev -> validation), each row made by ``convert(f, loc, row, label)``."""
    root = ctx.find(path)
    out = {}
    for split, stem in (("train", "train"), ("validation", "dev")):
        f, items = _labelled(ctx, root, stem)
        out[split] = rows([(loc, convert(f, loc, row, label)) for loc, row, label in items], f)
    return out


def _lines(f: Path) -> list[str]:
    from promptweave.data.sources import text_lines

    return text_lines(f)


def obqa(ctx: LoadContext, path: str, name: str = "main") -> Splits:
    """OpenBookQA JSONL: A-D choice texts, ``question_stem``, ``answerKey``, and ``fact1`` when present."""
    f = ctx.find(path)
    items = []
    for loc, line in jsonl(f):
        need(ctx, line, ("question", "answerKey"), file=f, where=loc)
        q = need(ctx, line["question"], ("stem", "choices"), file=f, where=loc + ".question")
        item = {**{ABCD[i]: q["choices"][i]["text"] for i in range(4)}, "question_stem": q["stem"],
                "answerKey": line["answerKey"]}
        if "fact1" in line:
            item["fact1"] = line["fact1"]
        items.append((loc, item))
    return rows(items, f)


def wikibench(ctx: LoadContext, path: str, filename: str, name: str) -> Splits:
    """``<path><filename>`` (joined by plain concatenation, as the reference does): cloze rows keep
    question/answer, ``circular`` ones become four rotated copies, others get numbered options appended."""
    f = ctx.concat(path, filename)
    items = []
    for n, (loc, entry) in enumerate(jsonl(f)):
        need(ctx, entry, ("question", "answer"), file=f, where=loc)
        if "cloze" in name:
            items.append((loc, {"question": entry["question"].strip(), "answer": entry["answer"].strip()}))
        elif "circular" in name:
            items.extend(_circular(ctx, entry, n, f, loc))
        else:
            need(ctx, entry, ("options",), file=f, where=loc)
            row = dict(entry)
            row["question"] = entry["question"].strip() + "\n" + _numbered(entry["options"])
            items.append((loc, row))
    return rows(items, f)


def _circular(ctx: LoadContext, entry: Any, n: int, f: Path, loc: str) -> list[tuple[str, dict[str, Any]]]:
    need(ctx, entry, ("options",), file=f, where=loc)
    out = []
    for pattern in ("ABCD", "BCDA", "CDAB", "DABC"):
        line = copy.deepcopy(entry)
        line["options"] = [entry["options"][ord(pattern[i]) - ord("A")] for i in range(4)]
        letter = {pattern[i]: ABCD[i] for i in range(4)}.get(entry["answer"])
        if letter is None:
            raise ctx.fail("a circular single-choice answer must be one of A-D", file=f, where=loc,
                           value=entry["answer"])
        line["answer"] = f"{n}--{letter}--{pattern}"
        line["question"] = entry["question"].strip() + "\n" + _numbered(line["options"])
        out.append((f"{loc} ({pattern})", line))
    return out


def _numbered(options: list[Any]) -> str:
    return "".join(f"{chr(ord('A') + i)}. {opt}\n" for i, opt in enumerate(options))


def mathbench(ctx: LoadContext, path: str, name: str, with_circular: bool = True) -> Splits:
    """``<path>/<name>.jsonl``. Cloze subsets keep question/answer; single-choice ones become four rotated
    copies (answer ``<id>--<letter>--<pattern>``) with ``with_circular``, else one row with numbered options."""
    f = ctx.member(ctx.find(path, local_mode=True), f"{name}.jsonl")
    items = []
    for n, (loc, entry) in enumerate(jsonl(f)):
        need(ctx, entry, ("question", "answer"), file=f, where=loc)
        if "cloze" in name:
            items.append((loc, {"question": entry["question"].strip(), "answer": entry["answer"].strip()}))
        elif with_circular:
            items.extend(_circular(ctx, entry, n, f, loc))
        else:
            need(ctx, entry, ("options",), file=f, where=loc)
            items.append((loc, {"question": entry["question"].strip() + "\n" + _numbered(entry["options"]),
                                "answer": entry["answer"].strip()}))
    return rows(items, f)


__all__ = [
    "Split",
    "arc",
    "mathbench",
    "race",
    "wikibench",
]
