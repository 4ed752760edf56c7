"""CLUE and FewCLUE (Chinese language understanding: AFQMC, TNEWS, CLUEWSC, CHID, CSL, EPRSTMT, CMNLI, C3, and the
SQuAD-shaped CMRC / DRCD reading sets): their loaders."""
from __future__ import annotations

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
from promptweave.data.loaders.classify import each_row, json_records, mapped, table
from promptweave.data.loaders.generic import relabel
from promptweave.data.loaders.hub import hf_dataset, map_rows
from promptweave.data.loaders.plain_sets import relabelled

# TNEWS categories in the reference's letter order, with the Chinese descriptions its PPL prompts use
_TNEWS = {
    "news_agriculture": "农业新闻", "news_travel": "旅游新闻", "news_game": "游戏新闻",
    "news_tech": "科技类别公司新闻", "news_sports": "体育类别新闻", "news_edu": "初升高教育新闻",
    "news_entertainment": "娱乐圈新闻", "news_finance": "投资资讯", "news_military": "军事类别常识",
    "news_car": "车辆新闻", "news_house": "楼市新闻", "news_world": "环球不含中国类别新闻",
    "news_culture": "书籍文化历史类别新闻", "news_story": "故事类别新闻", "news_stock": "股票市场类别新闻",
}


def c3(ctx: LoadContext, path: str) -> Splits:
    """C3 JSON: one row per question with its passage, the choices padded to four with the first, and the
    answer's index as label. (The reference opens ``path`` as written; the usual search finds it there too.)"""
    f = ctx.find(path, local_mode=True)
    data = json_file(f)
    if not isinstance(data, list):
        raise ctx.fail("expected a JSON list of [paragraphs, questions] pairs", file=f)
    items = []
    for i, doc in enumerate(data):
        content = " ".join("".join(p) for p in doc[0])
        for j, q in enumerate(doc[1]):
            where = f"[{i}][1][{j}]"
            need(ctx, q, ("question", "choice", "answer"), file=f, where=where)
            choices = list(q["choice"])
            if q["answer"] not in choices:
                raise ctx.fail("the answer is not one of the choices", file=f, where=where, value=q["answer"])
            label = choices.index(q["answer"])
            choices += [choices[0]] * max(0, 4 - len(choices))
            items.append((where, {"content": content, "question": q["question"],
                                  **{f"choice{k}": choices[k] for k in range(4)}, "choices": choices,
                                  "label": label}))
    return rows(items, f)


def afqmc_v2(ctx: LoadContext, path: str, local_mode: bool = False) -> Splits:
    """AFQMC JSONL: ``label`` 0 / 1 (number or text) -> A / B."""
    f = ctx.find(path, local_mode=local_mode)
    items = []
    for loc, r in json_records(ctx, f):
        need(ctx, r, ("label",), file=f, where=loc)
        try:
            r["label"] = "AB"[int(r["label"])]
        except (ValueError, TypeError, IndexError):
            raise ctx.fail("label must be 0 or 1", file=f, where=loc, value=r["label"]) from None
        items.append((loc, r))
    return table(items, f)


def tnews_v2(ctx: LoadContext, path: str) -> Splits:
    """TNEWS JSONL: ``sentence`` and ``label_desc2``, the category as a letter A-O."""
    f = ctx.find(path, local_mode=True)
    letters = {k: chr(ord("A") + i) for i, k in enumerate(_TNEWS)}
    items = []
    for loc, r in json_records(ctx, f):
        need(ctx, r, ("sentence", "label_desc"), file=f, where=loc)
        items.append((loc, {"sentence": r["sentence"],
                            "label_desc2": mapped(ctx, f, "label_desc", letters, loc, r["label_desc"])}))
    return table(items, f)


def tnews(ctx: LoadContext, **kwargs: Any) -> Splits:
    """TNEWS through ``load_dataset(**kwargs)``: ``label_desc2`` the Chinese description of ``label_desc``."""
    def prep(row: dict[str, Any], loc: str) -> dict[str, Any]:
        row["label_desc2"] = mapped(ctx, Path(str(kwargs.get("data_files"))), "label_desc", _TNEWS, loc,
                                     row.get("label_desc"))
        return row

    return each_row(hf_dataset(ctx, **kwargs), prep)


def cluewsc(ctx: LoadContext, **kwargs: Any) -> Splits:
    """CLUEWSC: the pronoun (``span2_index``) replaced by its referent in ``new_text``; ``answer`` 1/0 from
    ``label``; ``span1`` / ``span2`` taken out of ``target``."""
    got = hf_dataset(ctx, **kwargs)

    def prep(row: dict[str, Any]) -> dict[str, Any]:
        target = row.pop("target", None) or {}
        chars = list(row.get("text", ""))
        idx = target.get("span2_index")
        if isinstance(idx, int) and 0 <= idx < len(chars):
            chars[idx] = target.get("span1_text", "")
        row["new_text"] = "".join(chars)
        row["answer"] = 1 if row.get("label") == "true" else 0
        row["span1"], row["span2"] = target.get("span1_text"), target.get("span2_text")
        return row

    return map_rows(got, prep)


def chid(ctx: LoadContext, **kwargs: Any) -> Splits:
    """CHID: ``content<i>`` = the passage with ``#idiom#`` replaced by candidate i."""
    got = hf_dataset(ctx, **kwargs)

    def prep(row: dict[str, Any]) -> dict[str, Any]:
        for i, c in enumerate(row.get("candidates") or []):
            row[f"content{i}"] = str(row.get("content", "")).replace("#idiom#", c)
        return row

    return map_rows(got, prep)


def csl(ctx: LoadContext, **kwargs: Any) -> Splits:
    """CSL through ``load_dataset``: ``keywords`` = the keyword list joined by a full-width comma."""

    def prep(row: dict[str, Any]) -> dict[str, Any]:
        row["keywords"] = "，".join(row.get("keyword") or [])
        return row

    return map_rows(hf_dataset(ctx, **kwargs), prep)


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


def eprstmt_v2(ctx: LoadContext, path: str) -> Splits:
    """EPRSTMT JSONL: ``sentence`` and ``label`` Positive / Negative -> A / B."""
    return relabelled(ctx, path, {"Positive": "A", "Negative": "B"}, keep=("sentence",))


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


def cmnli_v2(ctx: LoadContext, path: str, local_mode: bool = False) -> Splits:
    """JSONL with NLI labels mapped to A/B/C; rows labelled '-' (no gold) are dropped."""
    return relabel(ctx, ctx.find(path, local_mode=local_mode),
                    {"entailment": "A", "contradiction": "B", "neutral": "C"}, skip="-")


def cmnli(ctx: LoadContext, path: str, local_mode: bool = False) -> Splits:
    """JSONL of NLI pairs, labels kept as words; rows labelled '-' are dropped."""
    f = ctx.find(path, local_mode=local_mode)
    items = [(loc, dict(need(ctx, r, ("label",), file=f, where=loc))) for loc, r in jsonl(f)]
    return rows(((loc, r) for loc, r in items if r["label"] != "-"), f)


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


LOADERS = {
    "C3Dataset": c3,
    "CMRCDataset": squad_like,
    "DRCDDataset": squad_like,
    "CMNLIDataset": cmnli,
    "CMNLIDatasetV2": cmnli_v2,
    "CluewscDataset": cluewsc,
    "CHIDDataset": chid,
    "CslDataset": csl,
    "CslDatasetV2": csl_v2,
    "EprstmtDatasetV2": eprstmt_v2,
    "CluewscDatasetV2": cluewsc_v2,
    "CHIDDatasetV2": chid_v2,
    "AFQMCDatasetV2": afqmc_v2,
    "TNewsDataset": tnews,
    "TNewsDatasetV2": tnews_v2,
}
