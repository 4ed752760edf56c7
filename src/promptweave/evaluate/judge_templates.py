"""Judge prompt templates that reference dataset modules define as classes, reimplemented as data → prompt.

A judge ``prompt_template`` is normally a ``PromptTemplate`` / ``RawPromptTemplate`` built by the prompt engine.
Some reference datasets ship their own template class instead; the ones whose prompt is plain data (row columns
placed into messages, no model or tool involved) are here. Each has ``kind_name`` and ``fill_entry(entry)``, which
returns the filled Dialogue the judge model's meta template renders.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptweave.errors import TemplateError

# used when a row carries no judge prompt of its own (the reference's fallback, in Chinese as the data is)
_INVERSE_IFEVAL_DEFAULT = "<题目>：\n{prompt}\n\n<标准答案>：\n{response_reference}\n\n<学生答案>：\n{response}"


def replace_each(text: str, values: Mapping[str, Any]) -> str:
    """``{name}`` → ``str(value)`` for each name in turn (a later name also fills what an earlier value brought
    in), unknown names left as written: the references' ``safe_format``."""
    for k, v in values.items():
        text = text.replace("{" + str(k) + "}", str(v))
    return text


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


def template_kind(cfg: Any) -> str:
    t = cfg.get("type", "PromptTemplate") if isinstance(cfg, Mapping) else None
    name = t if isinstance(t, str) else getattr(t, "__name__", "")
    return str(name).rsplit(".", 1)[-1]
