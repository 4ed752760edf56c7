"""Postprocessors and evaluators, configured per dataset from ``eval_cfg``."""
from promptweave.evaluate.config import Evaluation, build_evaluation
from promptweave.evaluate.evaluators import EVALUATORS, AccEvaluator, EMEvaluator, PPLAccEvaluator, Scores
from promptweave.evaluate.postprocess import (
    POSTPROCESSORS,
    first_capital_postprocess,
    first_number_postprocess,
    first_option_postprocess,
    general_postprocess,
    last_number_postprocess,
    regex_postprocess,
    strip_postprocess,
)

__all__ = ["Evaluation", "build_evaluation", "EVALUATORS", "AccEvaluator", "EMEvaluator", "PPLAccEvaluator",
           "Scores", "POSTPROCESSORS", "first_capital_postprocess", "first_number_postprocess",
           "first_option_postprocess", "general_postprocess", "last_number_postprocess", "regex_postprocess",
           "strip_postprocess"]
