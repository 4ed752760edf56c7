"""AISBench's ``BFCLDataset``: Berkeley Function Calling Leaderboard v3 rows, one category per dataset.

Layout (the ``bfcl_eval`` package's ``data`` folder, or the folder ``path`` names): ``BFCL_v3_<category>.json``
(JSON lines: ``id``, ``question``, ``function``) and ``possible_answer/BFCL_v3_<category>.json`` (``id``,
``ground_truth``) in the same order. Relevance categories have no answers file: each row's ``ground_truth`` is
``["relevance_mock_gt"]``, as in the reference. Non-string fields are stored as JSON text, as the reference does.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows
from promptweave.infer.function_call import check_category

PREFIX = "BFCL_v3"
_JSON_FIELDS = ("question", "ground_truth", "function", "missed_function", "involved_classes", "initial_config")


def _package_data(ctx: LoadContext) -> Path:
    import importlib.util

    try:
        spec = importlib.util.find_spec("bfcl_eval")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ctx.fail("path='' means the data inside the bfcl_eval package, which is not installed",
                       where="path", value="")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def bfcl(ctx: LoadContext, path: str, category: str, test_ids: list[str] | None = None) -> Splits:
    if not isinstance(category, str) or not category:
        raise ctx.fail("category must name a BFCL category (simple, multiple, live_parallel, ...)",
                       where="category", value=category)
    check_category({"category": category}, file=ctx.file, where="category")
    name = f"{PREFIX}_{category}.json"
    if path:
        f = ctx.find(os.path.join(path, name), local_mode=True)
        root = f.parent
    else:
        root = _package_data(ctx)
        f = ctx.member(root, name)
    data = [(loc, dict(need(ctx, r, ("id",), file=f, where=loc))) for loc, r in jsonl(f)]
    if "relevance" in category:
        gold: list[tuple[str, Any]] = [(loc, {"id": r["id"], "ground_truth": ["relevance_mock_gt"]})
                                       for loc, r in data]
        gf: Path = f
    else:
        gf = ctx.member(root, "possible_answer", name)
        gold = [(loc, dict(need(ctx, r, ("id", "ground_truth"), file=gf, where=loc))) for loc, r in jsonl(gf)]
    if len(data) != len(gold):
        raise ctx.fail(f"{len(data)} questions but {len(gold)} answers in {gf.name}", file=gf)
    wanted = None if not test_ids else set(test_ids)
    items = []
    for (loc, d), (gloc, g) in zip(data, gold):
        if d["id"] != g["id"]:
            raise ctx.fail(f"the answers file's {gloc} has id {g['id']!r} where the questions have {d['id']!r}",
                           file=gf, where=gloc, value=g["id"])
        if wanted is not None and d["id"] not in wanted:
            continue
        row = {**d, "ground_truth": g["ground_truth"]}
        for k in _JSON_FIELDS:
            if k in row and not isinstance(row[k], str):
                row[k] = json.dumps(row[k], ensure_ascii=False)
        items.append((loc, row))
    return rows(items, f)
