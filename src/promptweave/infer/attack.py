"""PromptBench prompt selection (OpenCompass's ``AttackInferencer`` + ``OpenICLAttackTask``).

The reference's attack task first scores every prompt of the inferencer's ``original_prompt_list`` on the whole
dataset: the prompt fills the template's ``{adv_key}`` placeholder (after the row's columns), each row is
generated, the answers go through the eval config's ``pred_postprocessor`` and its evaluator scores them against
the raw gold answers; the evaluator's ``metric_key`` (default ``accuracy``) is the prompt's score, divided by 100
when it is above 1. Prompts are ranked best first (ties keep their list order) and logged as
``Prompt: <prompt>, acc: <score x 100 to 2 places>%``. Only then does it run PromptBench's adversarial ``Attack``
on the ``prompt_topk`` best prompts, as the eval config's top-level ``attack=dict(attack=..., query_budget=...,
prompt_topk=..., dataset=...)`` asks.

promptweave runs the selection stage itself (every prompt through the ordinary generation path and response
cache). The adversarial stage is PromptBench's own search and needs the ``promptbench`` package: a config that
asks for it without that package installed is refused when the run is planned (:class:`AttackStageError`).
"""
from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from promptweave.errors import AttackStageError, ConfigError, EvaluationError

PROMPTBENCH = "promptbench"


@dataclass(frozen=True)
class AttackSettings:
    """The inferencer's prompts (duplicates dropped: the reference keys its scores by prompt) and keys."""

    prompts: tuple[str, ...]
    adv_key: str
    metric_key: str = "accuracy"

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], *, file: str | None = None,
                      field: str = "infer_cfg.inferencer") -> AttackSettings:
        prompts = settings.get("original_prompt_list")
        if not isinstance(prompts, (list, tuple)) or not prompts or not all(isinstance(p, str) for p in prompts):
            raise ConfigError("AttackInferencer needs original_prompt_list, a non-empty list of prompt strings",
                              file=file, field=f"{field}.original_prompt_list", value=prompts,
                              expected="original_prompt_list=['Answer the question ...', ...]")
        adv_key = settings.get("adv_key")
        if not isinstance(adv_key, str) or not adv_key.isidentifier():
            raise ConfigError("AttackInferencer needs adv_key, the template placeholder each prompt fills",
                              file=file, field=f"{field}.adv_key", value=adv_key, expected="adv_key='adv_prompt'")
        metric_key = settings.get("metric_key", "accuracy")
        if not isinstance(metric_key, str):
            raise ConfigError("metric_key must be the name of one of the evaluator's metrics", file=file,
                              field=f"{field}.metric_key", value=metric_key)
        return cls(tuple(dict.fromkeys(prompts)), adv_key, metric_key)


@dataclass(frozen=True)
class AttackStage:
    """The eval config's ``attack=dict(...)``: PromptBench's adversarial search on the best prompts."""

    attack: str
    query_budget: Any = None
    prompt_topk: int = 1
    dataset: str | None = None


def attack_stage(variables: Mapping[str, Any], *, file: str | None = None) -> AttackStage | None:
    """The adversarial stage the config asks for (None when it has no ``attack``); refused without promptbench."""
    cfg = variables.get("attack")
    if cfg is None:
        return None
    if not isinstance(cfg, Mapping) or not isinstance(cfg.get("attack"), str):
        raise ConfigError("attack must be a dict naming PromptBench's attack", file=file, field="attack",
                          value=cfg, expected="attack=dict(attack='textfooler', query_budget=100, prompt_topk=1)")
    topk = cfg.get("prompt_topk", 1)
    if isinstance(topk, bool) or not isinstance(topk, int) or topk < 0:
        raise ConfigError("attack.prompt_topk must be a whole number", file=file, field="attack.prompt_topk",
                          value=topk)
    stage = AttackStage(cfg["attack"], cfg.get("query_budget"), topk, cfg.get("dataset"))
    if topk and importlib.util.find_spec(PROMPTBENCH) is None:
        raise AttackStageError(
            f"the adversarial attack {stage.attack!r} on the {topk} best prompt(s) is PromptBench's search, and the "
            f"'{PROMPTBENCH}' package is not installed", file=file, field="attack.attack", value=stage.attack,
            expected=f"pip install {PROMPTBENCH} to run it; or remove attack=... (or set prompt_topk=0) to run "
                     "only the prompt selection")
    return stage


def with_prompt(rows: Sequence[Mapping[str, Any]], adv_key: str, prompt: str) -> Sequence[Mapping[str, Any]]:
    """The test rows with ``adv_key`` set to ``prompt`` (after the row's own columns, as the reference fills)."""
    return _WithPrompt(rows, adv_key, prompt)


class _WithPrompt(Sequence):
    def __init__(self, rows: Sequence[Mapping[str, Any]], key: str, prompt: str) -> None:
        self.rows, self.key, self.prompt = rows, key, prompt

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        row = dict(self.rows[i])
        row[self.key] = self.prompt  # a column of that name keeps its place, as ``{**row, **extra}`` does
        return row


def prompt_score(metrics: Mapping[str, Any], metric_key: str, *, where: str) -> float:
    """A prompt's score from its metrics, shrunk to 0-1 as the reference does (divided by 100 when above 1)."""
    value = metrics.get(metric_key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EvaluationError(f"the evaluator reports no number named {metric_key!r} to rank the prompts by",
                              field=f"{where}.metric_key", value=metric_key,
                              expected="one of " + (", ".join(sorted(map(str, metrics))) or "(no metrics)"))
    return value / 100 if value > 1 else float(value)


def rank(scores: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """Best first; equal scores keep the list's order."""
    return sorted(scores, key=lambda p: p[1], reverse=True)


def selection_log(ranked: Sequence[tuple[str, float]]) -> str:
    """The reference's ``attacklog.txt`` lines for the ranked prompts."""
    return "".join("Prompt: {}, acc: {:.2f}%\n".format(p, acc * 100) for p, acc in ranked)


def first_prompt_spec(spec: Any) -> tuple[Any, str | None]:
    """For ``view``: an AttackInferencer dataset with its first prompt filled in, and a note saying so."""
    import dataclasses

    if spec.inferencer.type != "AttackInferencer":
        return spec, None
    s = AttackSettings.from_settings(spec.inferencer.settings, file=spec.file,
                                     field=f"{spec.field}.infer_cfg.inferencer")
    note = (f"{spec.abbr}: AttackInferencer: shown with the first of the {len(s.prompts)} prompts of "
            f"original_prompt_list in {{{s.adv_key}}}; the run sends each of them")
    return dataclasses.replace(spec, test=with_prompt(spec.test, s.adv_key, s.prompts[0])), note
