"""Evaluator names used by OpenCompass / AISBench configs -> promptweave's evaluator classes.

Ordered as the reference config trees use them (``benchmarks/eval_names.py`` counts). A name not here resolves
through the benchmark suites (``compat/suites.py``), then ``compat.bridge`` when the reference is installed, else it is an ``EvaluationError`` at plan time.
"""
from __future__ import annotations

from promptweave.compat.suites import Registry

# the same class name with different rules in two reference modules: (module part, name) -> ours, by module path
# (``resolve`` imports it when a config names it)
BY_MODULE: dict[tuple[str, str], str] = {
    ("needlebench_v2", "NeedleBenchOriginEvaluator"): "promptweave.suites.needlebench:NeedleBenchV2OriginEvaluator",
}

_GENERIC: dict[str, str] = {
    "AccEvaluator": "promptweave.evaluate.evaluators:AccEvaluator",
    "GenericLLMEvaluator": "promptweave.evaluate.judge:GenericLLMEvaluator",
    "MATHEvaluator": "promptweave.evaluate.evaluators:MATHEvaluator",
    "RougeEvaluator": "promptweave.evaluate.evaluators:RougeEvaluator",
    "AccwithDetailsEvaluator": "promptweave.evaluate.evaluators:AccwithDetailsEvaluator",
    "JiebaRougeEvaluator": "promptweave.evaluate.evaluators:JiebaRougeEvaluator",
    "MATHVerifyEvaluator": "promptweave.evaluate.evaluators:MATHVerifyEvaluator",
    "CascadeEvaluator": "promptweave.evaluate.judge:CascadeEvaluator",
    "LMEvaluator": "promptweave.evaluate.judge_lm:LMEvaluator",  # subjective / judge-model evaluation
    "EMEvaluator": "promptweave.evaluate.evaluators:EMEvaluator",
    "BleuEvaluator": "promptweave.evaluate.evaluators:BleuEvaluator",
    "AveragePPLEvaluator": "promptweave.evaluate.evaluators:AveragePPLEvaluator",
    "CircularEvaluator": "promptweave.evaluate.evaluators:CircularEvaluator",
    "PPLAccEvaluator": "promptweave.evaluate.evaluators:PPLAccEvaluator",
    # the corpus-loss forms' scores (evaluate/corpus_loss.py)
    "AverageInferencePPLEvaluator": "promptweave.evaluate.corpus_loss:AverageInferencePPLEvaluator",
    "BPCEvaluator": "promptweave.evaluate.corpus_loss:BPCEvaluator",
    # promptweave's own short names
    "accuracy": "promptweave.evaluate.evaluators:AccEvaluator",
    "ppl_accuracy": "promptweave.evaluate.evaluators:PPLAccEvaluator",
    "exact_match": "promptweave.evaluate.evaluators:EMEvaluator",
}

# every name above, then the benchmark suites' own (BFCL, CIBench, LawBench, ...: compat/suites.py), looked up on
# first use of a name not above
EVALUATORS: Registry = Registry(_GENERIC, "EVALUATORS")
