"""CIBench (``CIBenchDataset``): a folder of Jupyter notebooks, one row per notebook.

Every ``.ipynb`` file under the folder (walked in sorted order, sub-folders included) is one experiment. Its
markdown cells are the user's questions (the text after ``\\n\\nThought: `` is the gold thought; with the notebook's
``metadata.modules`` each question gets "Please use X and Y modules." — in Chinese for the ``_chinese`` sets), its
code cells the gold answers. The row's ``questions`` column is the chat (user question, then assistant
``thought**split**code``), ``references`` what each gold cell printed or drew (``outputs``, with a ``tags`` entry per
cell: ``vis`` for a PNG, ``general`` for text, ``exec`` for nothing) plus the notebook's metadata, as
``CIBenchEvaluator`` scores them.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, json_file, rows


def _text(v: Any) -> str:
    return "".join(v) if isinstance(v, list) else str(v or "")


def _cell_output(ctx: LoadContext, cell: dict, f: Path, where: str) -> tuple[str, Any]:
    """The tag and output of a gold code cell: its image, else its last stdout / result text, else nothing."""
    outs = cell.get("outputs") or []
    if not isinstance(outs, list):
        raise ctx.fail("a code cell's outputs must be a list", file=f, where=where, value=type(outs).__name__)
    found: tuple[str, Any] | None = None
    for o in outs:
        if isinstance(o, dict) and o.get("output_type") == "display_data":
            if found is not None:
                raise ctx.fail("a code cell shows more than one image (the reference refuses it)", file=f,
                               where=where)
            data = o.get("data") or {}
            if "image/png" in data:
                found = ("vis", data["image/png"])
    for o in reversed(outs):
        if found is not None:
            break
        if not isinstance(o, dict):
            continue
        if o.get("output_type") == "stream" and o.get("name") == "stdout":
            found = ("general", _text(o.get("text")))
        elif o.get("output_type") == "execute_result":
            found = ("general", _text((o.get("data") or {}).get("text/plain")))
    return found if found is not None else ("exec", None)


def experiment(ctx: LoadContext, f: Path) -> dict[str, Any]:
    nb = json_file(f)
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ctx.fail("not a Jupyter notebook (no 'cells' list)", file=f, where="cells")
    meta = nb.get("metadata") or {}
    modules = list(meta.get("modules") or [])
    if modules and len(modules) != len(meta.get("step_types") or []):
        raise ctx.fail("metadata.modules and metadata.step_types must have one entry per step", file=f,
                       where="metadata.modules", value=len(modules))
    modules = [[m.strip() for m in str(group).split("&")] for group in modules]
    chinese = "chinese" in str(f)
    questions, thoughts, codes, outputs, tags = [], [], [], [], []
    for n, cell in enumerate(nb["cells"]):
        where = f"cells[{n}]"
        if not isinstance(cell, dict):
            raise ctx.fail("each cell must be an object", file=f, where=where)
        kind = cell.get("cell_type")
        if kind == "markdown":
            text = _text(cell.get("source")).strip()
            parts = text.split("\n\nThought: ")
            text, thought = (parts[0], parts[1]) if len(parts) == 2 else (text, " ")
            if modules:
                mods = modules.pop(0)
                text += (f"请用 {' 和 '.join(mods)} 模块." if chinese else f"Please use {' and '.join(mods)} modules.")
            questions.append(text.strip() + "\n")
            thoughts.append(thought)
        elif kind == "code":
            codes.append(_text(cell.get("source")))
            tag, out = _cell_output(ctx, cell, f, where)
            tags.append(tag)
            outputs.append(out)
    chat: list[dict[str, str]] = []
    for q, code, thought in zip(questions, codes, thoughts):
        chat += [{"role": "user", "content": q}, {"role": "assistant", "content": f"{thought}**split**{code}"}]
    return {"experiment": str(f), "questions": chat,
            "references": {"outputs": outputs, "tags": tags, "metadata": meta, "experiment": str(f)}}


def cibench(ctx: LoadContext, path: str, internet_check: bool = False) -> Splits:
    """Every notebook under ``path``, sorted as the reference walks them; ``internet_check`` is never done (no
    network at run time)."""
    root = ctx.find(path)
    if not root.is_dir():
        raise ctx.fail("path must be a folder of .ipynb notebooks", file=root, where="path", value=str(root))
    items = []
    for cwd, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if ".ipynb" in name:
                f = Path(cwd) / name
                items.append((str(f.relative_to(root)), experiment(ctx, f)))
    if not items:
        raise ctx.fail("no .ipynb notebook under the folder", file=root, where="path", value=str(root))
    return rows(items, root)


__all__ = ["cibench", "experiment"]
