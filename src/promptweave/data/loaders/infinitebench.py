"""InfiniteBench's four-option sets: ``code_debug.jsonl`` (find the function with the planted bug) and
``longbook_choice_eng.jsonl`` (questions on a novel); the other tasks' loaders are in ``suites/infinitebench.py``."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows


def codedebug(ctx: LoadContext, path: str) -> Splits:
    """One JSONL file: ``context``, ``input`` (the question), four ``options`` and ``answer`` (a list whose first
    item is one of the options) -> context, question, option_A..option_D and the answer's letter."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, item in jsonl(f):
        need(ctx, item, ("context", "input", "options", "answer"), file=f, where=loc)
        options, answer = item["options"], item["answer"]
        if not isinstance(options, list) or len(options) < 4:
            raise ctx.fail("options must be a list of (at least) four options", file=f, where=f"{loc}.options",
                           value=options)
        if not isinstance(answer, list) or not answer or answer[0] not in options:
            raise ctx.fail("answer must be a list whose first item is one of the options", file=f,
                           where=f"{loc}.answer", value=answer)
        items.append((loc, {"context": item["context"], "question": item["input"],
                            **{f"option_{letter}": options[i] for i, letter in enumerate("ABCD")},
                            "answer": chr(ord("A") + options.index(answer[0]))}))
    return rows(items, f)
