"""Inverse IFEval: its judge prompt template (each row carries its own judge prompt)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptweave.errors import TemplateError
from promptweave.evaluate.judge_templates import replace_each

# used when a row carries no judge prompt of its own (the reference's fallback, in Chinese as the data is)
_INVERSE_IFEVAL_DEFAULT = "<题目>：\n{prompt}\n\n<标准答案>：\n{response_reference}\n\n<学生答案>：\n{response}"


class InverseIFEvalJudgePrompt:
    """Inverse IFEval's judge prompt: each row carries its own judge system prompt and judge prompt template
    (``judge_system_prompt``, ``judge_prompt_template``, whose ``{response}`` is the model's answer). The judge
    gets a system message and a user message with the row's template filled from the row and the prediction."""

    kind_name = "InverseIFEvalJudgePromptTemplate"
    ice_token = None

    def __init__(self, cfg: Mapping[str, Any], where: str) -> None:
        extra = sorted(k for k in cfg if k != "type")
        if extra:
            raise TemplateError(f"{self.kind_name} takes no settings", field=f"{where}.{extra[0]}",
                                value=cfg[extra[0]], expected="dict(type=InverseIFEvalJudgePromptTemplate)")
        self.where = where

    def fill_entry(self, entry: Mapping[str, Any]) -> Any:
        from promptweave.prompt.dialogue import Dialogue, SectionMark, Turn

        values = dict(entry)
        values["response"] = entry.get("prediction", "")
        values["prediction"] = entry.get("prediction", "")
        template = entry.get("judge_prompt_template") or _INVERSE_IFEVAL_DEFAULT
        system = entry.get("judge_system_prompt", "")
        return Dialogue((SectionMark("begin", "begin"), Turn("SYSTEM", "" if system is None else str(system)),
                         SectionMark("begin", "end"), SectionMark("round", "begin"),
                         Turn("HUMAN", replace_each(str(template), values)), SectionMark("round", "end")))


# reference template class name -> our class
JUDGE_TEMPLATES: dict[str, type] = {
    "InverseIFEvalJudgePromptTemplate": InverseIFEvalJudgePrompt,
}
