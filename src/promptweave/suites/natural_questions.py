"""Natural Questions (and NQ-Open): their loaders and the open-answer evaluator."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.qa import qa_jsonl, qa_tsv
from promptweave.evaluate.evaluators import OpenQA
from promptweave.evaluate.postprocess import general_postprocess


def natural_question(ctx: LoadContext, path: str) -> Splits:
    """``nq-{dev,test}.qa.csv``: question TAB answer list (dev keeps only the first answer)."""
    return qa_tsv(ctx, path, "nq-{split}.qa.csv", ("dev", "test"), "dev")


def nq_open(ctx: LoadContext, path: str) -> Splits:
    """``nq-open-{validation,train}.jsonl`` (train keeps the first answer)."""
    return qa_jsonl(ctx, path, "nq-open-{split}.jsonl", "train")



class NQEvaluator(OpenQA):
    name = "NQEvaluator"

    def clean(self, prediction: str) -> str:
        p = prediction.strip().split("\n")[0].lower()
        if "answer is" in p:
            p = p.split("answer is")[-1]
        return general_postprocess(p)


LOADERS = {
    "NaturalQuestionDataset": natural_question,
    "NQOpenDataset": nq_open,
}


EVALUATORS = {
    "NQEvaluator": NQEvaluator,
}
