"""TriviaQA: its loaders (the three reference classes' layouts) and the open-answer evaluator."""
from __future__ import annotations

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    jsonl,
    need,
    rows,
)
from promptweave.data.loaders.qa import qa_jsonl, qa_tsv
from promptweave.evaluate.evaluators import OpenQA
from promptweave.evaluate.postprocess import general_postprocess


def triviaqa(ctx: LoadContext, path: str) -> Splits:
    """``trivia-{dev,test}.qa.csv``: question TAB answer list (test keeps only the first answer)."""
    return qa_tsv(ctx, path, "trivia-{split}.qa.csv", ("dev", "test"), "test")


def triviaqa_v2(ctx: LoadContext, path: str) -> Splits:
    """``triviaqa-{validation,train}.jsonl``, rows as stored."""
    return qa_jsonl(ctx, path, "triviaqa-{split}.jsonl", None)


def triviaqa_v3(ctx: LoadContext, path: str) -> Splits:
    """One JSONL file, rows as stored."""
    f = ctx.find(path)
    return rows(((loc, dict(need(ctx, r, (), file=f, where=loc))) for loc, r in jsonl(f)), f)



class TriviaQAEvaluator(OpenQA):
    name = "TriviaQAEvaluator"

    def clean(self, prediction: str) -> str:
        p = prediction.strip().split("\n")[0].lower()
        for marker in ("answer is", "a:", "answer:"):
            p = p.split(marker)[-1]
        return general_postprocess(p.strip())


LOADERS = {
    "TriviaQADataset": triviaqa,
    "TriviaQADatasetV2": triviaqa_v2,
    "TriviaQADatasetV3": triviaqa_v3,
}


EVALUATORS = {
    "TriviaQAEvaluator": TriviaQAEvaluator,
}
