"""LongBench (THUDM/LongBench, OpenCompass's ``LongBench<name>Dataset`` classes): one JSONL file per subset.

OpenCompass opens the folder with ``datasets.load_dataset(path, name=...)``, which runs the folder's own
``LongBench.py`` loading script (``trust_remote_code``); here nothing of the folder runs: the subset's rows are
read from ``<path>/data/<name>.jsonl`` (the layout of the dataset's ``data.zip``, extracted), else
``<path>/<name>.jsonl``. Each row keeps the columns the reference class keeps: ``input`` (when the subset has a
question), ``context`` and ``answers``; the classification subsets (``trec``, ``lsht``) put ``answers`` and
``all_classes`` together under ``all_labels``. Only a ``test`` split, as the reference returns.
"""
from __future__ import annotations

from pathlib import Path

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows

# subsets whose rows have no question: ``input`` is dropped, as the reference's class drops it
NO_INPUT = frozenset({"gov_report", "lcc", "multi_news", "passage_count", "vcsum"})
CLASSIFICATION = frozenset({"trec", "lsht"})
# the reference's class names -> the subset each reads by default (its configs pass ``name=`` as well)
CLASSES = {
    "LongBench2wikimqaDataset": "2wikimqa", "LongBenchdureaderDataset": "dureader",
    "LongBenchgov_reportDataset": "gov_report", "LongBenchhotpotqaDataset": "hotpotqa",
    "LongBenchlccDataset": "lcc", "LongBenchlshtDataset": "lsht", "LongBenchmulti_newsDataset": "multi_news",
    "LongBenchmultifieldqa_enDataset": "multifieldqa_en", "LongBenchmultifieldqa_zhDataset": "multifieldqa_zh",
    "LongBenchmusiqueDataset": "musique", "LongBenchnarrativeqaDataset": "narrativeqa",
    "LongBenchpassage_countDataset": "passage_count",
    "LongBenchpassage_retrieval_enDataset": "passage_retrieval_en",
    "LongBenchpassage_retrieval_zhDataset": "passage_retrieval_zh", "LongBenchqasperDataset": "qasper",
    "LongBenchqmsumDataset": "qmsum", "LongBenchrepobenchDataset": "repobench-p",
    "LongBenchsamsumDataset": "samsum", "LongBenchtrecDataset": "trec", "LongBenchtriviaqaDataset": "triviaqa",
    "LongBenchvcsumDataset": "vcsum",
}


def _kind(loader: str) -> str:
    """The reference class's column rule (by its name, not by the subset a config passes)."""
    sub = CLASSES.get(loader, "")
    if sub in CLASSIFICATION:
        return "classification"
    return "context" if sub in NO_INPUT else "qa"


def longbench(ctx: LoadContext, path: str, name: str) -> Splits:
    root = ctx.find(path)
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise ctx.fail("name must be a LongBench subset such as 'qasper'", where="name", value=name)
    candidates = [root / "data" / f"{name}.jsonl", root / f"{name}.jsonl"] if root.is_dir() else [root]
    f: Path | None = next((c for c in candidates if c.is_file()), None)
    if f is None:
        f = ctx.member(root, "data", f"{name}.jsonl")  # the typed "no such file" error, naming the layout
    kind = _kind(ctx.loader)
    keys = {"qa": ("input", "context", "answers"), "context": ("context", "answers"),
            "classification": ("input", "context", "answers", "all_classes")}[kind]
    items = []
    for loc, item in jsonl(f):
        item = need(ctx, item, keys, file=f, where=loc)
        if kind == "classification":
            row = {"input": item["input"], "context": item["context"],
                   "all_labels": {"answers": item["answers"], "all_classes": item["all_classes"]}}
        else:
            row = {k: item[k] for k in keys}
        items.append((loc, row))
    return {"test": rows(items, f)}


__all__ = ["CLASSES", "longbench"]
