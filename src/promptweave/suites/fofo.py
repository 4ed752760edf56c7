"""FoFo (format following, judged by an LLM): its loader."""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, need, rows
from promptweave.data.loaders.subjective import problems_file


def fofo(ctx: LoadContext, path: str, name: str, *args: Any, **kwargs: Any) -> Splits:
    """``<path>/<name>.json``: instruction -> question, with id / domain / format details for the judge."""
    f, data = problems_file(ctx, path, name)
    lan = "cn" if "cn" in name else "en"
    items = []
    for i, p in enumerate(data):
        need(ctx, p, ("instruction", "id", "domain", "sub_domain", "format", "format_type"), file=f, where=f"[{i}]")
        q = p["instruction"]
        items.append((f"[{i}]", {"question": q, "judge": {"lan": lan, "id": p["id"], "domain": p["domain"],
                                                          "sub_domain": p["sub_domain"], "format": p["format"],
                                                          "format_type": p["format_type"], "question": q}}))
    return rows(items, f)


LOADERS = {
    "FofoDataset": fofo,
}
