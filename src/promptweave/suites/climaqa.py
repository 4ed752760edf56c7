"""ClimaQA (climate science questions; OpenCompass's ``ClimaQA`` configs, scored by an LLM judge).

``<path>/<task>`` is a dataset folder ``datasets.load_dataset`` reads; its train split is the data. ``input`` is the
question, with the ``Options`` text on the next line where a row has one; ``Answer`` is renamed ``target``.
"""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.hub import read_folder
from promptweave.data.sources import Split


def climaqa(ctx: LoadContext, path: str, task: str, **_: Any) -> Splits:
    root = ctx.member(ctx.find(path), task)
    got = read_folder(ctx, root)
    part = got.get("train") if isinstance(got, dict) else got
    if not isinstance(part, Split):
        raise ctx.fail("the task folder has no train split", file=root, value=sorted(got) if isinstance(got, dict)
                       else None)
    out = []
    for i, r in enumerate(part.rows):
        if "Question" not in r or "Answer" not in r:
            raise ctx.fail("a ClimaQA row has Question and Answer columns", file=part.file, where=part.locate(i),
                           value=sorted(r)[:12])
        options = r.get("Options")
        row = {("target" if k == "Answer" else k): v for k, v in r.items()}
        row["input"] = r["Question"] if options is None else f"{r['Question']}\n{options}"
        out.append(row)
    return Split(out, part.file, list(part.where))


# the suite's entries in the compat registries (compat/suites.py)
LOADERS = {"ClimaQADataset": climaqa}
