"""Evaluator names used by OpenCompass / AISBench configs -> promptweave's evaluator classes.

Ordered as the reference config trees use them (``benchmarks/eval_names.py`` counts). A name not here resolves
through the benchmark suites (``compat/suites.py``), then ``compat.bridge`` when the reference is installed, else it is an ``EvaluationError`` at plan time.
"""
from __future__ import annotations

from promptweave.compat.suites import Registry
from promptweave.evaluate import evaluators as ev
from promptweave.evaluate.corpus_loss import AverageInferencePPLEvaluator, BPCEvaluator
from promptweave.evaluate.judge import CascadeEvaluator, GenericLLMEvaluator
from promptweave.evaluate.judge_lm import CharmMemoryEvaluator, LMEvaluator
from promptweave.evaluate.open_qa_match import DropOpenAIEvaluator

# the same class name with different rules in two reference modules: (module part, name) -> ours
BY_MODULE: dict[tuple[str, str], type] = {
    ("needlebench_v2", "NeedleBenchOriginEvaluator"): ev.NeedleBenchV2OriginEvaluator,
}

_GENERIC: dict[str, type] = {
    "AccEvaluator": ev.AccEvaluator,
    "GenericLLMEvaluator": GenericLLMEvaluator,
    "MATHEvaluator": ev.MATHEvaluator,
    "RougeEvaluator": ev.RougeEvaluator,
    "NeedleBenchOriginEvaluator": ev.NeedleBenchOriginEvaluator,
    "AccwithDetailsEvaluator": ev.AccwithDetailsEvaluator,
    "LongBenchF1Evaluator": ev.LongBenchF1Evaluator,
    "LongBenchRougeEvaluator": ev.LongBenchRougeEvaluator,
    "JiebaRougeEvaluator": ev.JiebaRougeEvaluator,
    "TriviaQAEvaluator": ev.TriviaQAEvaluator,
    "MATHVerifyEvaluator": ev.MATHVerifyEvaluator,
    "Gsm8kEvaluator": ev.Gsm8kEvaluator,
    "NeedleBenchParallelEvaluator": ev.NeedleBenchParallelEvaluator,
    "BabiLongEvaluator": ev.BabiLongEvaluator,
    "NeedleBenchMultiEvaluator": ev.NeedleBenchMultiEvaluator,
    "CascadeEvaluator": CascadeEvaluator,
    "LMEvaluator": LMEvaluator,  # eval helper: subjective / judge-model evaluation
    "CharmMemoryEvaluator": CharmMemoryEvaluator,  # eval helper: LMEvaluator-shaped rule (CHARM memory)
    "EMEvaluator": ev.EMEvaluator,
    "BBHEvaluator": ev.BBHEvaluator,
    "BBHEvaluator_mcq": ev.BBHEvaluatorMCQ,
    "BleuEvaluator": ev.BleuEvaluator,
    "MRCREvaluator": ev.MRCREvaluator,
    "BleuFloresEvaluator": ev.BleuFloresEvaluator,
    "NQEvaluator": ev.NQEvaluator,
    "GPQAEvaluator": ev.GPQAEvaluator,
    "AccDropEvaluator": ev.AccDropEvaluator,
    "DropOpenAIEvaluator": DropOpenAIEvaluator,
    "AveragePPLEvaluator": ev.AveragePPLEvaluator,
    "LongBenchCodeSimEvaluator": ev.LongBenchCodeSimEvaluator,
    "LongBenchClassificationEvaluator": ev.LongBenchClassificationEvaluator,
    "LongBenchRetrievalEvaluator": ev.LongBenchRetrievalEvaluator,
    "LongBenchCountEvaluator": ev.LongBenchCountEvaluator,
    "CircularEvaluator": ev.CircularEvaluator,
    "PPLAccEvaluator": ev.PPLAccEvaluator,
    # eval helper: the corpus-loss forms' scores (evaluate/corpus_loss.py)
    "AverageInferencePPLEvaluator": AverageInferencePPLEvaluator,
    "BPCEvaluator": BPCEvaluator,
    # promptweave's own short names
    "accuracy": ev.AccEvaluator,
    "ppl_accuracy": ev.PPLAccEvaluator,
    "exact_match": ev.EMEvaluator,
}

# every name above, then the benchmark suites' own (BFCL, CIBench, LawBench, ...: compat/suites.py), looked up on
# first use of a name not above
EVALUATORS: Registry = Registry(_GENERIC, "EVALUATORS")
