"""Answer matching of OpenAI's simple-evals as OpenCompass ports it: StrategyQA's yes/no postprocessors (DROP's
fuzzy match is in ``suites/drop.py``)."""
from __future__ import annotations

import re
from typing import Any




def strategyqa_pred_postprocess(text: str) -> str:
    """The first paragraph's text after its last ``answer is ``; its first ``yes``/``no`` (lower-cased), else ''."""
    text = text.split("\n\n")[0].split("answer is ")[-1]
    m = re.search(r"(yes|no)", text.lower())
    return m.group(1) if m else ""


def strategyqa_dataset_postprocess(gold: Any) -> str:
    """StrategyQA's gold is a JSON bool: ``True`` (or the string ``'True'``) is ``yes``, anything else ``no``."""
    return "yes" if str(gold) == "True" else "no"


__all__ = ["strategyqa_dataset_postprocess", "strategyqa_pred_postprocess"]
