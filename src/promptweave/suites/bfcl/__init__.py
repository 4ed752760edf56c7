"""BFCL v3 (AISBench's function-calling benchmark): the rows' loader (functions and ground truth from the
``bfcl_eval`` package data) and single-turn / relevance scoring. The form that sends the functions as tools is
``forms/function_call.py``; this suite is what is BFCL's own."""
from __future__ import annotations

from promptweave.suites.bfcl.data import bfcl
from promptweave.suites.bfcl.scoring import BFCLRelevanceEvaluator, BFCLSingleTurnEvaluator

LOADERS = {"BFCLDataset": bfcl}
EVALUATORS = {"BFCLSingleTurnEvaluator": BFCLSingleTurnEvaluator, "BFCLRelevanceEvaluator": BFCLRelevanceEvaluator}
