"""CIBench: its notebooks read as chats (the loader) and the code agent's steps scored per turn (the evaluator).
The form that runs the agent is ``forms/agent.py``; this suite is what is CIBench's own."""
from __future__ import annotations

from promptweave.suites.cibench.data import cibench
from promptweave.suites.cibench.scoring import CIBenchEvaluator

LOADERS = {"CIBenchDataset": cibench}
EVALUATORS = {"CIBenchEvaluator": CIBenchEvaluator}
