"""Game of 24 (OpenCompass's ``game24`` datasets, run by ``ToTInferencer``): the puzzles' loader, the answer's
postprocessor and the evaluator that checks the expression, registered into the compat registries by the one line
for this suite in ``compat/suites.py``."""
from __future__ import annotations

from promptweave.suites.game24.data import game24
from promptweave.suites.game24.scoring import Game24Evaluator, game24_postprocess

LOADERS = {"Game24Dataset": game24}
POSTPROCESSORS = {"game24_postprocess": game24_postprocess}
EVALUATORS = {"Game24Evaluator": Game24Evaluator}
