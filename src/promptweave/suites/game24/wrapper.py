"""OpenCompass's ``Game24PromptWrapper`` for the tree-of-thought search (``infer/tot.py``): the Game of 24
prompts, read from the installed reference's source, and how value replies are scored."""
from __future__ import annotations

from collections.abc import Sequence

from promptweave.infer.tot import reference_texts

_G24_NAMES = ("standard_prompt", "cot_prompt", "propose_prompt", "value_prompt", "value_last_step_prompt")
_G24_MODULE = "opencompass.datasets.game24"
_VALUE_OF = (("impossible", 0.001), ("likely", 1), ("sure", 20))  # the reference's order: sums come out the same


class Game24Wrapper:
    """OpenCompass's ``Game24PromptWrapper``: how Game of 24 prompts are made and value replies read."""

    name = "Game24PromptWrapper"
    steps = 4  # three arithmetic steps, then the answer line
    has_vote = False

    def __init__(self, *, file: str | None = None, field: str | None = None) -> None:
        self.text = reference_texts(_G24_MODULE, _G24_NAMES, what="Game24PromptWrapper", file=file, field=field)

    @staticmethod
    def current_numbers(y: str) -> str:
        last = y.strip().split("\n")[-1]
        return last.split("left: ")[-1].split(")")[0]

    def standard(self, x: str, y: str = "") -> str:
        return self.text["standard_prompt"].format(input=x) + y

    def cot(self, x: str, y: str = "") -> str:
        return self.text["cot_prompt"].format(input=x) + y

    def propose(self, x: str, y: str = "") -> str:
        numbers = self.current_numbers(y if y else x)
        if numbers == "24":  # all numbers used: ask for the whole expression, the steps so far given
            return self.cot(x) + "Steps:" + y
        return self.text["propose_prompt"].format(input=numbers)

    def value(self, x: str, y: str) -> str:
        last = y.strip().split("\n")[-1]
        if "left: " not in last:  # the answer line: judge the expression against the input
            return self.text["value_last_step_prompt"].format(input=x, answer=last.lower().replace("answer: ", ""))
        return self.text["value_prompt"].format(input=self.current_numbers(y))

    @staticmethod
    def value_of(x: str, y: str, outputs: Sequence[str]) -> float:
        if len(y.strip().split("\n")) == 4 and "answer" not in y.lower():
            return 0  # four steps and still no answer line
        verdicts = [o.split("\n")[-1] for o in outputs]
        return sum(v * verdicts.count(name) for name, v in _VALUE_OF)
