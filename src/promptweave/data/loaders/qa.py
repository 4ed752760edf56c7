"""Question answering: BBH / CHARM task JSON, SQuAD-style reading comprehension (CMRC, DRCD), DROP,
and open-domain QA (Natural Questions, TriviaQA) in their TSV and JSONL forms."""
from __future__ import annotations

from pathlib import Path

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    csv_records,
    json_file,
    jsonl,
    need,
    python_literal,
    rows,
)


def _examples(ctx: LoadContext, f: Path) -> Splits:
    data = json_file(f)
    if not isinstance(data, dict) or not isinstance(data.get("examples"), list):
        raise ctx.fail("expected a JSON object with an 'examples' list", file=f)
    items = []
    for i, ex in enumerate(data["examples"]):
        items.append((f"examples[{i}]", dict(need(ctx, ex, (), file=f, where=f"examples[{i}]"))))
    return rows(items, f)


def bbh(ctx: LoadContext, path: str, name: str) -> Splits:
    """``<path>/<name>.json`` holding ``{"examples": [{input, target}, ...]}``."""
    return _examples(ctx, ctx.member(ctx.find(path), f"{name}.json"))


def charm(ctx: LoadContext, path: str, name: str) -> Splits:
    """CHARM: the BBH layout, found as a local path."""
    return _examples(ctx, ctx.member(ctx.find(path, local_mode=True), f"{name}.json"))


def squad_like(ctx: LoadContext, path: str) -> Splits:
    """SQuAD-format JSON (``data[].paragraphs[].qas[]``): one row per question with its context and its distinct
    answer texts (first-seen order: the reference's set order varies from run to run)."""
    f = ctx.find(path)
    data = json_file(f)
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ctx.fail("expected SQuAD-format JSON with a 'data' list", file=f)
    items = []
    for i, doc in enumerate(data["data"]):
        for j, para in enumerate(need(ctx, doc, ("paragraphs",), file=f, where=f"data[{i}]")["paragraphs"]):
            where = f"data[{i}].paragraphs[{j}]"
            need(ctx, para, ("context", "qas"), file=f, where=where)
            for k, qa in enumerate(para["qas"]):
                need(ctx, qa, ("question", "answers"), file=f, where=f"{where}.qas[{k}]")
                answers = list(dict.fromkeys(a["text"] for a in qa["answers"]))
                items.append((f"{where}.qas[{k}]", {"context": para["context"], "question": qa["question"],
                                                   "answers": answers}))
    return rows(items, f)


def drop_openai(ctx: LoadContext, path: str) -> Splits:
    """simple-evals' DROP JSONL: ``context`` -> prompt, ``ref_text`` -> answers, as the validation split."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, data in jsonl(f):
        need(ctx, data, ("context", "ref_text"), file=f, where=loc)
        items.append((loc, {"prompt": data["context"], "answers": data["ref_text"]}))
    return {"validation": rows(items, f)}


def _qa_tsv(ctx: LoadContext, path: str, pattern: str, splits: tuple[str, str], first_in: str) -> Splits:
    out = {}
    for split, f in zip(splits, ctx.files(path, [pattern.format(split=s) for s in splits])):
        items = []
        for loc, rec in csv_records(f, delimiter="\t"):
            if len(rec) != 2:
                raise ctx.fail("expected two tab-separated fields (question, answers)", file=f, where=loc,
                               value=len(rec))
            answers = python_literal(rec[1], file=f, where=loc)
            if split == first_in:
                answers = answers[0]
            items.append((loc, {"question": rec[0], "answer": answers}))
        out[split] = rows(items, f)
    return out


def natural_question(ctx: LoadContext, path: str) -> Splits:
    """``nq-{dev,test}.qa.csv``: question TAB answer list (dev keeps only the first answer)."""
    return _qa_tsv(ctx, path, "nq-{split}.qa.csv", ("dev", "test"), "dev")


def triviaqa(ctx: LoadContext, path: str) -> Splits:
    """``trivia-{dev,test}.qa.csv``: question TAB answer list (test keeps only the first answer)."""
    return _qa_tsv(ctx, path, "trivia-{split}.qa.csv", ("dev", "test"), "test")


def _qa_jsonl(ctx: LoadContext, path: str, pattern: str, first_in: str | None) -> Splits:
    splits = ("validation", "train")
    out = {}
    for split, f in zip(splits, ctx.files(path, [pattern.format(split=s) for s in splits])):
        items = []
        for loc, doc in jsonl(f):
            row = dict(need(ctx, doc, ("answer",) if split == first_in else (), file=f, where=loc))
            if split == first_in:
                row["answer"] = row["answer"][0]
            items.append((loc, row))
        out[split] = rows(items, f)
    return out


def nq_open(ctx: LoadContext, path: str) -> Splits:
    """``nq-open-{validation,train}.jsonl`` (train keeps the first answer)."""
    return _qa_jsonl(ctx, path, "nq-open-{split}.jsonl", "train")


def triviaqa_v2(ctx: LoadContext, path: str) -> Splits:
    """``triviaqa-{validation,train}.jsonl``, rows as stored."""
    return _qa_jsonl(ctx, path, "triviaqa-{split}.jsonl", None)


def bbeh(ctx: LoadContext, path: str, name: str) -> Splits:
    """BIG-Bench Extra Hard: ``<path>/<name>/task.json`` holding ``{"examples": [...]}``."""
    return _examples(ctx, ctx.member(ctx.find(path), name, "task.json"))


def triviaqa_v3(ctx: LoadContext, path: str) -> Splits:
    """One JSONL file, rows as stored."""
    f = ctx.find(path)
    return rows(((loc, dict(need(ctx, r, (), file=f, where=loc))) for loc, r in jsonl(f)), f)


def multirc(ctx: LoadContext, path: str) -> Splits:
    """MultiRC JSONL (a local path): one row per candidate answer with its passage text, question and label."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, sample in jsonl(f, errors="ignore"):
        passage = need(ctx, need(ctx, sample, ("passage",), file=f, where=loc)["passage"], ("text", "questions"),
                       file=f, where=loc + ".passage")
        for q in passage["questions"]:
            for a in q["answers"]:
                items.append((loc, {"text": passage["text"], "question": q["question"], "answer": a["text"],
                                    "label": a["label"]}))
    return rows(items, f)


def record(ctx: LoadContext, path: str) -> Splits:
    """ReCoRD JSONL (a local path): ``@highlight`` markers removed from the passage, ``@placeholder`` in the query
    written as ``____``, the answer texts listed."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, sample in jsonl(f, errors="ignore"):
        need(ctx, sample, ("passage", "qas"), file=f, where=loc)
        text = sample["passage"]["text"].replace("@highlight", "")
        for qa in sample["qas"]:
            items.append((loc, {"text": text, "question": qa["query"].replace("@placeholder", "____"),
                                "answers": [a["text"] for a in qa["answers"]]}))
    return rows(items, f)
