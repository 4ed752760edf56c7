"""Evaluator names used by OpenCompass / AISBench configs -> promptweave's evaluator classes.

Ordered as the reference config trees use them (``benchmarks/eval_names.py`` counts). A name not here resolves
through ``compat.bridge`` when the reference is installed, else it is an ``EvaluationError`` at plan time.
"""
from __future__ import annotations

from promptweave.evaluate import evaluators as ev
from promptweave.evaluate.agieval import AGIEvalEvaluator
from promptweave.evaluate.bfcl import BFCLRelevanceEvaluator, BFCLSingleTurnEvaluator  # data hook: BFCL
from promptweave.evaluate.cibench import CIBenchEvaluator  # agent hook: scores AgentInferencer steps
from promptweave.evaluate.code_exec import (
    HumanEvalEvaluator,
    LCEvaluator,
    LCPassKEvaluator,
    MBPPPassKEvaluator,
)
from promptweave.evaluate.corpus_loss import AverageInferencePPLEvaluator, BPCEvaluator
from promptweave.evaluate.gaokao import BY_TYPE as GAOKAO_BY_TYPE
from promptweave.evaluate.game24 import Game24Evaluator  # search: ToTInferencer's Game of 24
from promptweave.evaluate.judge import CascadeEvaluator, GenericLLMEvaluator
from promptweave.evaluate.judge_lm import CharmMemoryEvaluator, LMEvaluator
from promptweave.evaluate.mbpp_plus import MBPPEvaluator  # eval helper: metric='MBPP' or 'MBPPPlus' (EvalPlus)
from promptweave.evaluate.lawbench import BY_INDEX as LAWBENCH_BY_INDEX
from promptweave.evaluate.needlebench import NeedleBenchATCEvaluator
from promptweave.evaluate.open_qa_match import DropOpenAIEvaluator
from promptweave.evaluate.pmmeval import (
    PMMEvalFloresEvaluator,
    PMMEvalHumanEvalXLEvaluator,
    PMMEvalMGSMEvaluator,
    PMMEvalMHellaswagEvaluator,
    PMMEvalMIFEvalEvaluator,
    PMMEvalMLogiQAEvaluator,
    PMMEvalMMMLUEvaluator,
    PMMEvalXNLIEvaluator,
)
from promptweave.evaluate.ruler import (
    RulerCweEvaluator,
    RulerFweEvaluator,
    RulerNiahEvaluator,
    RulerQaEvaluator,
    RulerVtEvaluator,
)

# the same class name with different rules in two reference modules: (module part, name) -> ours
BY_MODULE: dict[tuple[str, str], type] = {
    ("needlebench_v2", "NeedleBenchOriginEvaluator"): ev.NeedleBenchV2OriginEvaluator,
}

EVALUATORS: dict[str, type] = {
    "AccEvaluator": ev.AccEvaluator,
    "GenericLLMEvaluator": GenericLLMEvaluator,
    "MATHEvaluator": ev.MATHEvaluator,
    "RougeEvaluator": ev.RougeEvaluator,
    "HumanEvalEvaluator": HumanEvalEvaluator,
    "CIBenchEvaluator": CIBenchEvaluator,  # agent helper
    "NeedleBenchOriginEvaluator": ev.NeedleBenchOriginEvaluator,
    "AccwithDetailsEvaluator": ev.AccwithDetailsEvaluator,
    "LongBenchF1Evaluator": ev.LongBenchF1Evaluator,
    "LongBenchRougeEvaluator": ev.LongBenchRougeEvaluator,
    "JiebaRougeEvaluator": ev.JiebaRougeEvaluator,
    "TriviaQAEvaluator": ev.TriviaQAEvaluator,
    "MBPPEvaluator": MBPPEvaluator,
    "MATHVerifyEvaluator": ev.MATHVerifyEvaluator,
    "Gsm8kEvaluator": ev.Gsm8kEvaluator,
    "NeedleBenchParallelEvaluator": ev.NeedleBenchParallelEvaluator,
    "BabiLongEvaluator": ev.BabiLongEvaluator,
    "NeedleBenchMultiEvaluator": ev.NeedleBenchMultiEvaluator,
    "CascadeEvaluator": CascadeEvaluator,
    "LMEvaluator": LMEvaluator,  # eval helper: subjective / judge-model evaluation
    "CharmMemoryEvaluator": CharmMemoryEvaluator,  # eval helper: LMEvaluator-shaped rule (CHARM memory)
    "MBPPPassKEvaluator": MBPPPassKEvaluator,
    "EMEvaluator": ev.EMEvaluator,
    "BBHEvaluator": ev.BBHEvaluator,
    "BBHEvaluator_mcq": ev.BBHEvaluatorMCQ,
    "BleuEvaluator": ev.BleuEvaluator,
    "MRCREvaluator": ev.MRCREvaluator,
    "BleuFloresEvaluator": ev.BleuFloresEvaluator,
    "NQEvaluator": ev.NQEvaluator,
    "GPQAEvaluator": ev.GPQAEvaluator,
    "LCPassKEvaluator": LCPassKEvaluator,
    "LCEvaluator": LCEvaluator,
    "AccDropEvaluator": ev.AccDropEvaluator,
    "DropOpenAIEvaluator": DropOpenAIEvaluator,
    "AGIEvalEvaluator": AGIEvalEvaluator,
    "AveragePPLEvaluator": ev.AveragePPLEvaluator,
    "LongBenchCodeSimEvaluator": ev.LongBenchCodeSimEvaluator,
    "LongBenchClassificationEvaluator": ev.LongBenchClassificationEvaluator,
    "LongBenchRetrievalEvaluator": ev.LongBenchRetrievalEvaluator,
    "LongBenchCountEvaluator": ev.LongBenchCountEvaluator,
    "CircularEvaluator": ev.CircularEvaluator,
    "PPLAccEvaluator": ev.PPLAccEvaluator,
    # long tail (forms): RULER, NeedleBench v2 ATC, P-MMEval, GAOKAO-Bench, LawBench
    "RulerCweEvaluator": RulerCweEvaluator,
    "RulerFweEvaluator": RulerFweEvaluator,
    "RulerNiahEvaluator": RulerNiahEvaluator,
    "RulerVtEvaluator": RulerVtEvaluator,
    "RulerQaEvaluator": RulerQaEvaluator,
    "NeedleBenchATCEvaluator": NeedleBenchATCEvaluator,
    "needlebench_atc_evaluator": NeedleBenchATCEvaluator,
    "PMMEvalFloresEvaluator": PMMEvalFloresEvaluator,
    "PMMEvalHumanEvalXLEvaluator": PMMEvalHumanEvalXLEvaluator,
    "PMMEvalMGSMEvaluator": PMMEvalMGSMEvaluator,
    "PMMEvalMHellaswagEvaluator": PMMEvalMHellaswagEvaluator,
    "PMMEvalMIFEvalEvaluator": PMMEvalMIFEvalEvaluator,
    "PMMEvalMLogiQAEvaluator": PMMEvalMLogiQAEvaluator,
    "PMMEvalMMMLUEvaluator": PMMEvalMMMLUEvaluator,
    "PMMEvalXNLIEvaluator": PMMEvalXNLIEvaluator,
    **GAOKAO_BY_TYPE,
    **LAWBENCH_BY_INDEX,
    "BFCLSingleTurnEvaluator": BFCLSingleTurnEvaluator,  # data hook: function calling (evaluate/bfcl.py)
    "BFCLRelevanceEvaluator": BFCLRelevanceEvaluator,
    "Game24Evaluator": Game24Evaluator,  # search: ToTInferencer's Game of 24 (evaluate/game24.py)
    # eval helper: the corpus-loss forms' scores (evaluate/corpus_loss.py)
    "AverageInferencePPLEvaluator": AverageInferencePPLEvaluator,
    "BPCEvaluator": BPCEvaluator,
    # promptweave's own short names
    "accuracy": ev.AccEvaluator,
    "ppl_accuracy": ev.PPLAccEvaluator,
    "exact_match": ev.EMEvaluator,
}
