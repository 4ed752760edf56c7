"""Evaluator names used by OpenCompass / AISBench configs -> promptweave's evaluator classes.

Ordered as the reference config trees use them (``benchmarks/eval_names.py`` counts). A name not here resolves
through the benchmark suites (``compat/suites.py``), then ``compat.bridge`` when the reference is installed, else it is an ``EvaluationError`` at plan time.
"""
from __future__ import annotations

from promptweave.compat.suites import Registry
from promptweave.evaluate import evaluators as ev
from promptweave.evaluate.code_exec import (
    HumanEvalEvaluator,
    LCEvaluator,
    LCPassKEvaluator,
    MBPPPassKEvaluator,
)
from promptweave.evaluate.corpus_loss import AverageInferencePPLEvaluator, BPCEvaluator
from promptweave.evaluate.judge import CascadeEvaluator, GenericLLMEvaluator
from promptweave.evaluate.judge_lm import CharmMemoryEvaluator, LMEvaluator

# the same class name with different rules in two reference modules: (module part, name) -> ours, by module path
# (``resolve`` imports it when a config names it)
BY_MODULE: dict[tuple[str, str], str] = {
    ("needlebench_v2", "NeedleBenchOriginEvaluator"): "promptweave.suites.needlebench:NeedleBenchV2OriginEvaluator",
}

_GENERIC: dict[str, type] = {
    "AccEvaluator": ev.AccEvaluator,
    "GenericLLMEvaluator": GenericLLMEvaluator,
    "MATHEvaluator": ev.MATHEvaluator,
    "RougeEvaluator": ev.RougeEvaluator,
    "HumanEvalEvaluator": HumanEvalEvaluator,
    "AccwithDetailsEvaluator": ev.AccwithDetailsEvaluator,
    "JiebaRougeEvaluator": ev.JiebaRougeEvaluator,
    "MATHVerifyEvaluator": ev.MATHVerifyEvaluator,
    "CascadeEvaluator": CascadeEvaluator,
    "LMEvaluator": LMEvaluator,  # subjective / judge-model evaluation
    "CharmMemoryEvaluator": CharmMemoryEvaluator,  # LMEvaluator-shaped rule (CHARM memory)
    "MBPPPassKEvaluator": MBPPPassKEvaluator,
    "EMEvaluator": ev.EMEvaluator,
    "BleuEvaluator": ev.BleuEvaluator,
    "MRCREvaluator": ev.MRCREvaluator,
    "LCPassKEvaluator": LCPassKEvaluator,
    "LCEvaluator": LCEvaluator,
    "AveragePPLEvaluator": ev.AveragePPLEvaluator,
    "CircularEvaluator": ev.CircularEvaluator,
    "PPLAccEvaluator": ev.PPLAccEvaluator,
    # the corpus-loss forms' scores (evaluate/corpus_loss.py)
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
