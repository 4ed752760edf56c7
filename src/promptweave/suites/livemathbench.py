"""LiveMathBench (OpenCompass's ``livemathbench`` configs): its loader and its rule-based scoring.

The loader reads ``<path>/<version>/<split>_<language>.jsonl`` for every (split, language) pair, in that order,
and adds ``subdivision`` (``livemathbench_<version>_<split>_<language>``), ``idx`` (the row's index in its file,
as text) and ``prompt`` (the question in the language's step-by-step ``\\boxed{}`` instruction; ``cot=False``
drops the step-by-step clause).

``LiveMathBenchEvaluator`` without a judge model (``model_name=''`` or no ``url``, as every shipped config but
two writes it) takes the reply's last ``\\boxed{}`` answer (``math_postprocess_v2``) and compares it with the gold by
MATH equivalence (v2 normalisation); ``accuracy`` is the share right ×100. With a judge model (an OpenAI-compatible
server the reference calls directly) it is refused at plan time: write the judge as ``GenericLLMEvaluator``, or
run it with opencompass installed.
"""
from __future__ import annotations

from itertools import product
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need
from promptweave.data.loaders.classify import table
from promptweave.errors import EvaluationError
from promptweave.evaluate import math_equiv
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths
from promptweave.evaluate.postprocess import math_postprocess_v2

_PROMPTS = {
    "en": ("Here is a math question, please reasoning step by step, and put your answer in \\boxed{{}}.\n"
           "{question}\n", ", please reasoning step by step"),
    "cn": ("下面是一个数学问题，请逐步推理，并把最终答案放置于\\boxed{{}}中。\n{question}\n", "，请逐步推理"),
}


def livemathbench(ctx: LoadContext, path: str, dataset_splits: Any = ("CNMO", "CCEE", "AMC", "WLPMC"),
                  dataset_languages: Any = ("cn", "en"), cot: bool = True, version: str = "202412") -> Splits:
    root = ctx.find(path or ".")  # '' is the data cache itself, as the reference joins it
    items = []
    for split, language in product(list(dataset_splits), list(dataset_languages)):
        f = ctx.member(root, str(version), f"{split}_{language}.jsonl")
        template, step = _PROMPTS["en" if language == "en" else "cn"]
        if not cot:
            template = template.replace(step, "")
        for i, (loc, r) in enumerate(jsonl(f)):
            row = dict(need(ctx, r, ("question",), file=f, where=loc))
            row.update({"subdivision": f"livemathbench_{version}_{split}_{language}", "idx": str(i),
                        "prompt": template.format(question=row["question"])})
            items.append((f"{f.name} {loc}", row))
    return table(items, root)


class LiveMathBenchEvaluator(Evaluator):
    name = "LiveMathBenchEvaluator"

    @staticmethod
    def native_for(kwargs: Any) -> bool:
        """Rule-based only: a judge or extraction server is the reference's own class's work (when installed)."""
        urls = kwargs.get("url")
        return not ((kwargs.get("model_name") and urls) or kwargs.get("use_extract_model"))

    def __init__(self, model_name: str = "", url: Any = (), use_extract_model: bool = False,
                 extract_url: Any = (), extract_model_name: str = "") -> None:
        urls = [url] if isinstance(url, str) else list(url or [])
        if (model_name and urls) or use_extract_model:
            raise EvaluationError(
                "LiveMathBenchEvaluator with a judge or extraction model calls that server itself; promptweave "
                "runs it natively only rule-based", field="evaluator.model_name", value=model_name,
                expected="model_name='' and url=[] (the shipped default), or the judge written as "
                         "GenericLLMEvaluator, or opencompass installed with its dependencies")

    def score(self, predictions: Any, references: Any, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        got = [math_postprocess_v2("" if p is None else str(p)) for p in predictions]
        correct = [math_equiv.is_equiv(g, None if r is None else str(r), "v2") for g, r in zip(got, references)]
        acc = 100 * sum(correct) / len(correct) if correct else 0.0
        return Scores({"accuracy": acc}, correct,
                      [{"pred": g, "ref": r, "correct": int(c)} for g, r, c in zip(got, references, correct)])


# the suite's entries in the compat registries (compat/suites.py)
LOADERS = {"LiveMathBenchDataset": livemathbench}
EVALUATORS = {"LiveMathBenchEvaluator": LiveMathBenchEvaluator}
