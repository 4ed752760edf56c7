"""Code benchmarks scored by running the model's programs (``--allow-code-exec``): HumanEval, MBPP, LCBench.

Each module holds one benchmark's answer extraction, test planning and evaluators; they run programs through the
generic runner (:mod:`promptweave.evaluate.code_exec`). MBPP's ``MBPPEvaluator`` name itself is registered by
:mod:`promptweave.suites.mbpp_plus`, which adds its ``metric='MBPPPlus'`` form.
"""
from __future__ import annotations

from promptweave.suites.code.humaneval import EVALUATORS as _HUMANEVAL
from promptweave.suites.code.lcbench import EVALUATORS as _LCBENCH
from promptweave.suites.code.mbpp import EVALUATORS as _MBPP

# the suite's entries in the compat registries (compat/suites.py)
EVALUATORS: dict[str, type] = {**_HUMANEVAL, **_MBPP, **_LCBENCH}
