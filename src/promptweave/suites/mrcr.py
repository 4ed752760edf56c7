"""MRCR (multi-round co-reference in long conversations): its loader and evaluator."""
from __future__ import annotations

import difflib
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.hub import hf_dataset
from promptweave.data.sources import Split
from promptweave.errors import EvaluationError
from promptweave.evaluate.context import Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths, pct


def mrcr(ctx: LoadContext, path: str = "giulio98/MRCR_v2_common", subset: str = "2needle_in_4096_8192",
         **_: Any) -> Splits:
    """MRCR test rows: context, question and ``gold`` (JSON of the first answer and the hash prefix that the
    question asks to prepend)."""
    import json
    import re

    got = hf_dataset(ctx, path=path, name=subset, split="test")
    assert isinstance(got, Split)
    out = []
    for row in got.rows:
        m = re.search(r"Prepend\s+(\S+)\s+to", row.get("question", ""))
        out.append({"context": row.get("context"), "question": row.get("question"),
                    "gold": json.dumps({"answer": row["answers"][0], "prefix": m.group(1) if m else ""})})
    return Split(out, got.file, list(got.where))


class MRCREvaluator(Evaluator):
    """OpenAI MRCR: gold is JSON ``{"answer", "prefix"}``; a reply not starting with the prefix scores 0, else the
    ``difflib`` similarity of the rest to the answer's rest; ``score`` is the mean ×100."""

    name = "MRCREvaluator"

    def score(self, predictions, references, ctx=None) -> Scores:
        import json

        check_lengths(predictions, references, self.name)
        per, details = [], []
        for p, r in zip(predictions, references):
            try:
                gold = json.loads(r) if isinstance(r, str) else dict(r)
                answer, prefix = str(gold["answer"]), str(gold["prefix"])
            except (ValueError, TypeError, KeyError):
                raise EvaluationError("MRCR golds are JSON with 'answer' and 'prefix'", field="evaluator",
                                      value=r) from None
            p = str(p)
            s = difflib.SequenceMatcher(None, p[len(prefix):], answer[len(prefix):]).ratio() \
                if p.startswith(prefix) else 0.0
            per.append(s)
            details.append({"pred": p, "answer": answer, "score": s})
        return Scores({"score": pct(sum(per), len(per))}, [s == 1.0 for s in per], details)


LOADERS = {
    "MRCRDataset": mrcr,
}
EVALUATORS = {
    "MRCREvaluator": MRCREvaluator,
}
