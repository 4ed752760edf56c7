"""Short-form classification and multiple-choice sets whose reference loader only reads rows and relabels a gold
column: AdvGLUE, ANLI, TNEWS, AFQMC, SuperGLUE WSC and AX, SummEdits, CrowS-Pairs (zh), CommonsenseQA (zh), XStoryCloze,
FinanceIQ and Anthropic's model-written evals (AI risk, persona, sycophancy).

Where the reference builds a ``datasets.Dataset`` from a list of dicts, its columns are the first row's keys: a key
only later rows hold is dropped and a key a later row lacks reads as None. :func:`table` keeps that rule so that
templates see the same columns.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, csv_records, json_file, jsonl, need
from promptweave.data.loaders.hub import hf_dataset
from promptweave.data.sources import Split


def table(items: Iterable[tuple[str, Mapping[str, Any]]], file: Path | str) -> Split:
    """Rows as ``Dataset.from_list`` keeps them: the first row's keys, in its order, for every row."""
    items = list(items)
    keys = list(items[0][1]) if items else []
    return Split([{k: r.get(k) for k in keys} for _, r in items], str(file), [loc for loc, _ in items])


def _records(ctx: LoadContext, f: Path) -> list[tuple[str, dict[str, Any]]]:
    return [(loc, dict(need(ctx, r, (), file=f, where=loc))) for loc, r in jsonl(f)]


def _mapped(ctx: LoadContext, f: Path, key: str, mapping: Mapping[Any, str], loc: str, value: Any) -> str:
    try:
        return mapping[value]
    except (KeyError, TypeError):
        raise ctx.fail(f"{key} must be one of " + ", ".join(map(repr, mapping)), file=f, where=loc,
                       value=value) from None


# -- AdvGLUE: adversarial rows, then the same rows with their original text (AccDropEvaluator compares halves) ----

_ADV_SUBSETS = {
    "AdvSst2Dataset": ("sst2", ("original_sentence",)),
    "AdvQqpDataset": ("qqp", ("original_question1", "original_question2")),
    "AdvMnliDataset": ("mnli", ("original_premise", "original_hypothesis")),
    "AdvMnliMMDataset": ("mnli-mm", ("original_premise", "original_hypothesis")),
    "AdvQnliDataset": ("qnli", ("original_question", "original_sentence")),
    "AdvRteDataset": ("rte", ("original_sentence1", "original_sentence2")),
}


def adv_glue(ctx: LoadContext, path: str) -> Splits:
    """``dev_ann.json``: a dict of subset -> rows. Rows with no original text are dropped; the adversarial rows
    come first, then copies with each present ``original_<x>`` written over ``<x>`` and ``type='original'``;
    ``label_option`` is the label as a letter (0 = A)."""
    subset, keys = _ADV_SUBSETS[ctx.loader]
    f = ctx.find(path)
    data = json_file(f)
    if not isinstance(data, Mapping) or not isinstance(data.get(subset), list) or not data[subset]:
        raise ctx.fail(f"expected a JSON object whose {subset!r} entry is a non-empty list of rows", file=f,
                       where=subset)
    src = [(f"{subset}[{i}]", dict(need(ctx, r, ("label",), file=f, where=f"{subset}[{i}]")))
           for i, r in enumerate(data[subset])]
    for k in keys:  # the reference adds the original-text keys to the first row so every row keeps them
        src[0][1].setdefault(k, None)
    adv = table(src, f)
    kept = [(w, r) for w, r in zip(adv.where, adv.rows) if any(r.get(k) for k in keys)]
    originals = []
    for w, r in kept:
        o = dict(r)
        for k in keys:
            if o.get(k):
                o[k.split("original_")[-1]] = o[k]
                o["type"] = "original"
        originals.append((w + " (original)", o))
    both = kept + originals
    columns = list(dict.fromkeys(k for _, r in both for k in r))  # concatenation fills a missing column with None
    out = []
    for w, r in both:
        row = {k: r.get(k) for k in columns}
        label = row["label"]
        if not isinstance(label, int) or isinstance(label, bool) or label < 0:
            raise ctx.fail("label must be a class index (0, 1, ...)", file=f, where=w, value=label)
        row["label_option"] = chr(ord("A") + label)
        out.append(row)
    return Split(out, str(f), [w for w, _ in both])


# -- one JSONL file, one column relabelled --------------------------------------------------------------------


def anli(ctx: LoadContext, path: str) -> Splits:
    """ANLI ``dev.jsonl``: ``label`` c / e / n -> A / B / C."""
    f = ctx.find(path)
    items = []
    for loc, r in _records(ctx, f):
        need(ctx, r, ("label",), file=f, where=loc)
        r["label"] = _mapped(ctx, f, "label", {"c": "A", "e": "B", "n": "C"}, loc, r["label"])
        items.append((loc, r))
    return table(items, f)


def afqmc_v2(ctx: LoadContext, path: str, local_mode: bool = False) -> Splits:
    """AFQMC JSONL: ``label`` 0 / 1 (number or text) -> A / B."""
    f = ctx.find(path, local_mode=local_mode)
    items = []
    for loc, r in _records(ctx, f):
        need(ctx, r, ("label",), file=f, where=loc)
        try:
            r["label"] = "AB"[int(r["label"])]
        except (ValueError, TypeError, IndexError):
            raise ctx.fail("label must be 0 or 1", file=f, where=loc, value=r["label"]) from None
        items.append((loc, r))
    return table(items, f)


def ax_v2(ctx: LoadContext, path: str) -> Splits:
    """SuperGLUE AX-b / AX-g JSONL: ``label`` entailment / not_entailment -> A / B."""
    f = ctx.find(path)
    items = []
    for loc, r in _records(ctx, f):
        need(ctx, r, ("label",), file=f, where=loc)
        r["label"] = _mapped(ctx, f, "label", {"entailment": "A", "not_entailment": "B"}, loc, r["label"])
        items.append((loc, r))
    return table(items, f)


def summedits_v2(ctx: LoadContext, path: str) -> Splits:
    """SummEdits JSONL: ``label`` 1 (consistent) -> A, 0 -> B."""
    f = ctx.find(path)
    items = []
    for loc, r in _records(ctx, f):
        need(ctx, r, ("label",), file=f, where=loc)
        r["label"] = _mapped(ctx, f, "label", {0: "B", 1: "A"}, loc, r["label"])
        items.append((loc, r))
    return table(items, f)


def crowspairs_cn(ctx: LoadContext, path: str) -> Splits:
    """Chinese CrowS-Pairs JSONL as the test split; every ``label`` is A (the stereotypical sentence first)."""
    f = ctx.find(path, local_mode=True)
    return {"test": table(((loc, {**r, "label": "A"}) for loc, r in _records(ctx, f)), f)}


def commonsenseqa_cn(ctx: LoadContext, path: str) -> Splits:
    """Chinese CommonsenseQA JSONL, read as both train and validation: ``choices.text`` spread over columns A-E;
    ``question_concept``, ``id`` and ``choices`` dropped."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, r in _records(ctx, f):
        need(ctx, r, ("choices",), file=f, where=loc)
        texts = r["choices"].get("text") if isinstance(r["choices"], Mapping) else None
        if not isinstance(texts, list) or len(texts) < 5:
            raise ctx.fail("choices.text must list five options", file=f, where=loc, value=r["choices"])
        row = {k: v for k, v in r.items() if k not in ("question_concept", "id", "choices")}
        row.update({chr(ord("A") + i): texts[i] for i in range(5)})
        items.append((loc, row))
    one = table(items, f)
    return {"train": one, "validation": Split(list(one.rows), one.file, list(one.where))}


def tnews_v2(ctx: LoadContext, path: str) -> Splits:
    """TNEWS JSONL: ``sentence`` and ``label_desc2``, the category as a letter A-O."""
    f = ctx.find(path, local_mode=True)
    letters = {k: chr(ord("A") + i) for i, k in enumerate(_TNEWS)}
    items = []
    for loc, r in _records(ctx, f):
        need(ctx, r, ("sentence", "label_desc"), file=f, where=loc)
        items.append((loc, {"sentence": r["sentence"],
                            "label_desc2": _mapped(ctx, f, "label_desc", letters, loc, r["label_desc"])}))
    return table(items, f)


# TNEWS categories in the reference's letter order, with the Chinese descriptions its PPL prompts use
_TNEWS = {
    "news_agriculture": "农业新闻", "news_travel": "旅游新闻", "news_game": "游戏新闻",
    "news_tech": "科技类别公司新闻", "news_sports": "体育类别新闻", "news_edu": "初升高教育新闻",
    "news_entertainment": "娱乐圈新闻", "news_finance": "投资资讯", "news_military": "军事类别常识",
    "news_car": "车辆新闻", "news_house": "楼市新闻", "news_world": "环球不含中国类别新闻",
    "news_culture": "书籍文化历史类别新闻", "news_story": "故事类别新闻", "news_stock": "股票市场类别新闻",
}


def _each_row(got: Splits, fn) -> Splits:
    def one(part: Split) -> Split:
        return Split([fn(dict(r), part.locate(i)) for i, r in enumerate(part.rows)], part.file, list(part.where))

    return one(got) if isinstance(got, Split) else {k: one(v) for k, v in got.items()}


def tnews(ctx: LoadContext, **kwargs: Any) -> Splits:
    """TNEWS through ``load_dataset(**kwargs)``: ``label_desc2`` the Chinese description of ``label_desc``."""
    def prep(row: dict[str, Any], loc: str) -> dict[str, Any]:
        row["label_desc2"] = _mapped(ctx, Path(str(kwargs.get("data_files"))), "label_desc", _TNEWS, loc,
                                     row.get("label_desc"))
        return row

    return _each_row(hf_dataset(ctx, **kwargs), prep)


def _wsc_target(ctx: LoadContext, row: Mapping[str, Any], loc: str) -> Mapping[str, Any]:
    t = row.get("target")
    if not isinstance(t, Mapping) or not all(k in t for k in ("span1_text", "span2_text", "span1_index",
                                                               "span2_index")):
        raise ctx.fail("target must hold span1_text, span2_text, span1_index and span2_index", where=loc, value=t)
    return t


def wsc(ctx: LoadContext, **kwargs: Any) -> Splits:
    """SuperGLUE WSC through ``load_dataset(**kwargs)``: ``new_text`` = the words with the pronoun (``span2``)
    replaced by its candidate referent; ``answer`` 1 / 0 from ``label``; ``span1`` / ``span2``; ``target`` dropped."""
    def prep(row: dict[str, Any], loc: str) -> dict[str, Any]:
        t = _wsc_target(ctx, row, loc)
        words = str(row.get("text", "")).split(" ")
        i = t["span2_index"]
        if not isinstance(i, int) or not 0 <= i < len(words):
            raise ctx.fail("target.span2_index is not a word position of text", where=loc, value=i)
        words[i] = t["span1_text"]
        row["new_text"] = " ".join(words)
        row["answer"] = 1 if row.get("label") == "true" else 0
        row["span1"], row["span2"] = t["span1_text"], t["span2_text"]
        del row["target"]
        return row

    return _each_row(hf_dataset(ctx, **kwargs), prep)


def wsc_v3(ctx: LoadContext, path: str) -> Splits:
    """WSC JSONL: ``text`` with the candidate (span1) marked ``* ... *`` and the pronoun (span2) ``# ... #``
    where they stand in the words; ``label`` true / false -> A / B."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, r in _records(ctx, f):
        need(ctx, r, ("text", "target", "label"), file=f, where=loc)
        t = _wsc_target(ctx, r, loc)
        spans = []
        for n, mark in ((1, "*"), (2, "#")):
            start = t[f"span{n}_index"]
            if not isinstance(start, int):
                raise ctx.fail(f"target.span{n}_index must be a word position", file=f, where=loc, value=start)
            text = t[f"span{n}_text"]
            spans.append((start, start + len(text.split(" ")), f"{mark} {text} {mark}"))
        out = []
        for i, word in enumerate(r["text"].split(" ")):
            inside = [(s, marked) for s, e, marked in spans if s <= i < e]
            if not inside:
                out.append(word)
            elif i == inside[0][0]:
                out.append(inside[0][1])
        items.append((loc, {"span1": t["span1_text"], "span2": t["span2_text"], "text": " ".join(out),
                            "label": _mapped(ctx, f, "label", {"true": "A", "false": "B"}, loc, r["label"])}))
    return table(items, f)


# -- XStoryCloze: <lang>_train.jsonl and <lang>_eval.jsonl together as the test split -------------------------


def _storycloze(ctx: LoadContext, path: str, lang: str, *, letter: bool) -> list[tuple[str, dict[str, Any]]]:
    items = []
    for f in ctx.files(path, [f"{lang}_{s}.jsonl" for s in ("train", "eval")]):
        for loc, r in _records(ctx, f):
            sentences = [f"input_sentence_{i}" for i in range(1, 5)]
            need(ctx, r, sentences + (["answer_right_ending"] if letter else []), file=f, where=loc)
            r["context"] = " ".join(str(r[k]) for k in sentences)
            if letter:
                r["answer_right_ending"] = _mapped(ctx, f, "answer_right_ending", {1: "A", 2: "B"}, loc,
                                                   r["answer_right_ending"])
            items.append((f"{f.name} {loc}", r))
    return items


def storycloze(ctx: LoadContext, path: str, lang: str) -> Splits:
    """Both files' rows with ``context`` = the four story sentences joined by spaces, as the test split."""
    root = ctx.find(path)
    return {"test": table(_storycloze(ctx, path, lang, letter=False), root)}


def storycloze_v2(ctx: LoadContext, path: str, lang: str) -> Splits:
    """As :func:`storycloze`, with ``answer_right_ending`` 1 / 2 -> A / B, as one split."""
    return table(_storycloze(ctx, path, lang, letter=True), ctx.find(path))


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


# -- Anthropic's model-written evals: ``load_dataset('json', data_files=path)`` --------------------------------


def _anthropic(ctx: LoadContext, path: str, fix) -> Splits:
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, r in _records(ctx, f):
        need(ctx, r, ("answer_matching_behavior",), file=f, where=loc)
        r["answer_matching_behavior"] = fix(r["answer_matching_behavior"])
        items.append((loc, r))
    return {"train": table(items, f)}


def _first_letter(letters: str):
    def fix(answer: Any) -> Any:
        # the stored answer reads " (A)": the first option letter found in it, else unchanged
        return next((c for c in letters if c in str(answer)), answer)

    return fix


def airisk(ctx: LoadContext, path: str) -> Splits:
    """``answer_matching_behavior`` " (X)" -> X (A-H)."""
    return _anthropic(ctx, path, _first_letter("ABCDEFGH"))


def sycophancy(ctx: LoadContext, path: str) -> Splits:
    """``answer_matching_behavior`` " (X)" -> X (A-G)."""
    return _anthropic(ctx, path, _first_letter("ABCDEFG"))


def persona(ctx: LoadContext, path: str) -> Splits:
    """``answer_matching_behavior`` " Yes" -> A, anything else -> B."""
    return _anthropic(ctx, path, lambda a: "A" if a == " Yes" else "B")


CLASSES = {
    **{name: adv_glue for name in _ADV_SUBSETS},
    "AnliDataset": anli,
    "AFQMCDatasetV2": afqmc_v2,
    "AXDatasetV2": ax_v2,
    "SummeditsDataset_V2": summedits_v2,
    "CrowspairsDatasetCN": crowspairs_cn,
    "CommonsenseQADataset_CN": commonsenseqa_cn,
    "TNewsDataset": tnews,
    "TNewsDatasetV2": tnews_v2,
    "WSCDataset": wsc,
    "WSCDatasetV3": wsc_v3,
    "StoryClozeDataset": storycloze,
    "StoryClozeDatasetV2": storycloze_v2,
    "FinanceIQDataset": financeiq,
    "AiRiskDataset": airisk,
    "PersonaDataset": persona,
    "SycophancyDataset": sycophancy,
}
"""The reference's loader class names this module reads (compat/loaders.py registers them in one line)."""
