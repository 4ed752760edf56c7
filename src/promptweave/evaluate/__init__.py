"""Postprocessors and evaluators, configured per dataset from ``eval_cfg``."""
from promptweave.evaluate.config import (
    Evaluation,
    build_evaluation,
    build_evaluator,
    build_postprocessor,
    check_eval_cfg,
    check_tasks,
    prepare_tasks,
)
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import AccEvaluator, EMEvaluator, PPLAccEvaluator
from promptweave.evaluate.postprocess import (
    first_capital_postprocess,
    first_number_postprocess,
    first_option_postprocess,
    general_postprocess,
    last_number_postprocess,
    regex_postprocess,
    strip_postprocess,
)


def __getattr__(name: str):  # the registries import the evaluators; load them on first use
    if name == "EVALUATORS":
        from promptweave.compat.evaluators import EVALUATORS

        return EVALUATORS
    if name == "POSTPROCESSORS":
        from promptweave.compat.postprocessors import POSTPROCESSORS

        return POSTPROCESSORS
    raise AttributeError(name)


__all__ = [
    "EVALUATORS",
    "POSTPROCESSORS",
    "AccEvaluator",
    "EMEvaluator",
    "EvalContext",
    "Evaluation",
    "PPLAccEvaluator",
    "Scores",
    "build_evaluation",
    "build_evaluator",
    "build_postprocessor",
    "check_eval_cfg", "check_tasks",
    "first_capital_postprocess",
    "first_number_postprocess",
    "first_option_postprocess",
    "general_postprocess",
    "last_number_postprocess",
    "prepare_tasks",
    "regex_postprocess",
    "strip_postprocess",
]
