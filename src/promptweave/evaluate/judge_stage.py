"""AISBench's judge stage: a dataset's ``judge_infer_cfg`` asks a judge model about every candidate answer.

AISBench runs it as a second inference after the candidate's: each test row, with the candidate's raw reply as
``model_answer``, fills the judge's ``prompt_template``; the judge model (``judge_model``, any service model
config) answers; the dataset's ``eval_cfg`` then scores the judge's replies, not the candidate's (the candidate
model's own ``pred_postprocessor``, then ``eval_cfg.pred_postprocessor``, then ``eval_cfg.evaluator``, against the
row's gold). The results are named ``<abbr>-<judge abbr>`` (``aime2025-judge``).

Here the stage is an evaluator (:class:`JudgeStage`) on the prompt engine and judge machinery of
``evaluate/judge.py``: the judge prompts are rendered with the judge model's meta template, asked through the run's
response cache (a rerun sends nothing again, an interrupted one resumes), and each row's judge prompt and reply go
into the predictions file (``judge``) for ``view`` and the report. What the stage cannot run is refused at plan
time (PW650), never ignored.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from promptweave.errors import JudgeStageError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.judge import GenericLLMEvaluator

KEYS = ("judge_reader_cfg", "judge_model", "judge_dataset_type", "prompt_template", "retriever", "inferencer")
"""What a ``judge_infer_cfg`` may hold (AISBench 3.1)."""

TEXT_JUDGE_DATASETS = ("Aime2025JDGDataset", "HLEJGDataset", "LLMJudgeDataset")
"""AISBench's judge dataset classes that are the candidate's rows plus its reply as ``model_answer``."""

IMAGE_JUDGE_DATASETS = ("GEditSCJDGDataset", "GEditPQJDGDataset", "ImgSCJDGDataset", "ImgPQJDGDataset",
                        "LMMImgJDGDataset")
"""AISBench's judge datasets that show the judge the candidate's generated image (not run here)."""

ANSWER_COLUMN = "model_answer"


def _name(t: Any) -> str:
    return (t if isinstance(t, str) else getattr(t, "__name__", str(t))).rsplit(".", 1)[-1]


def judge_abbr(raw: Mapping[str, Any]) -> str | None:
    """The judge model's abbr a judged dataset's results are named with (``<abbr>-<judge abbr>``), or None when the
    dataset has no judge stage."""
    jic = raw.get("judge_infer_cfg")
    if not jic:
        return None
    model = jic.get("judge_model") if isinstance(jic, Mapping) else None
    return str((model or {}).get("abbr") or "judge") if isinstance(model, Mapping) else "judge"


def check_judge_infer_cfg(jic: Any, *, where: str) -> dict[str, Any]:
    """The ``judge_infer_cfg`` as a dict, every key known and every setting one this stage runs (else PW650)."""
    if not isinstance(jic, Mapping):
        raise JudgeStageError("judge_infer_cfg must be a dict", field=where, value=type(jic).__name__,
                              expected="dict(judge_model=..., prompt_template=..., judge_dataset_type=..., ...)")
    cfg = dict(jic)
    extra = sorted(set(cfg) - set(KEYS))
    if extra:
        raise JudgeStageError("unknown judge_infer_cfg key", field=f"{where}.{extra[0]}",
                              expected=", ".join(KEYS))
    model = cfg.get("judge_model")
    if not isinstance(model, Mapping) or model.get("type") is None:
        raise JudgeStageError("judge_infer_cfg needs a judge_model with a type", field=f"{where}.judge_model",
                              expected="a model dict, e.g. dict(type=VLLMCustomAPIChat, host_ip=..., ...)")
    if cfg.get("prompt_template") is None:
        raise JudgeStageError("judge_infer_cfg needs a prompt_template", field=f"{where}.prompt_template")
    ds_type = _name(cfg.get("judge_dataset_type") or "")
    if ds_type in IMAGE_JUDGE_DATASETS:
        raise JudgeStageError("an image judge (the judge is shown the candidate's generated image) is not run here",
                              field=f"{where}.judge_dataset_type", value=ds_type,
                              expected="a text judge dataset (" + ", ".join(TEXT_JUDGE_DATASETS) + "); run image "
                                       "judges with AISBench itself")
    if ds_type and ds_type not in TEXT_JUDGE_DATASETS:
        raise JudgeStageError("unknown judge_dataset_type", field=f"{where}.judge_dataset_type", value=ds_type,
                              expected=" or ".join(TEXT_JUDGE_DATASETS))
    retriever = _name((cfg.get("retriever") or {}).get("type") or "ZeroRetriever")
    if retriever != "ZeroRetriever":
        raise JudgeStageError("the judge prompt takes no in-context examples", field=f"{where}.retriever.type",
                              value=retriever, expected="ZeroRetriever")
    inferencer = dict(cfg.get("inferencer") or {})
    inf_name = _name(inferencer.pop("type", "GenInferencer"))
    if inf_name != "GenInferencer":
        raise JudgeStageError("the judge is asked with one generation per row", field=f"{where}.inferencer.type",
                              value=inf_name, expected="GenInferencer")
    if inferencer:
        raise JudgeStageError("the judge's inferencer takes no settings here (the judge model's max_out_len and "
                              "generation_kwargs decide its requests, as in AISBench)",
                              field=f"{where}.inferencer.{min(inferencer)}")
    reader = cfg.get("judge_reader_cfg") or {}
    if not isinstance(reader, Mapping):
        raise JudgeStageError("judge_reader_cfg must be a dict", field=f"{where}.judge_reader_cfg")
    return cfg


class JudgeStage(GenericLLMEvaluator):
    """AISBench's judge stage as an evaluator: the judge's replies, post-processed, scored by ``eval_cfg``.

    ``reply_posts``: the candidate model's ``pred_postprocessor`` then ``eval_cfg.pred_postprocessor``, applied to
    each judge reply (AISBench's evaluation step reads the judge's predictions with the candidate model's config);
    ``inner``: ``eval_cfg.evaluator``, given the post-processed replies and the rows' golds.
    """

    name = "judge_infer_cfg"
    needs = frozenset({"judge", "rows"})

    def __init__(self, judge_infer_cfg: Mapping[str, Any], inner: Any,
                 reply_posts: Sequence[Callable[[Any], Any] | None] = (), *, where: str) -> None:
        cfg = check_judge_infer_cfg(judge_infer_cfg, where=where)
        judge_model = {k: v for k, v in dict(cfg["judge_model"]).items() if k != "pred_postprocessor"}
        # AISBench's judge inference applies no postprocessor of the judge model's own
        super().__init__(prompt_template=cfg["prompt_template"], judge_cfg=judge_model, where=where)
        self.inner = inner
        self.reply_posts: list[Callable[[Any], Any]] = [p for p in reply_posts if p is not None]
        self.inner_name = str(getattr(inner, "name", type(inner).__name__))
        self.needs = frozenset({"judge", "rows"}) | (getattr(inner, "needs", frozenset()) - {"judge"})

    def post(self, reply: Any) -> Any:
        for fn in self.reply_posts:
            reply = fn(reply) if isinstance(reply, str) else reply
        return reply

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        from promptweave.evaluate.evaluators import check_lengths

        check_lengths(predictions, references, self.name)
        rows = list(ctx.rows) if ctx is not None else []
        entries = []
        for i, p in enumerate(predictions):
            base = dict(rows[i]) if i < len(rows) else {}
            entries.append({**base, ANSWER_COLUMN: "" if p is None else p})
        verdicts = self.ask(entries, ctx)
        replies = [self.post(v["output"]) for v in verdicts]
        inner = self.inner.score(replies, references, ctx)
        details = []
        for k, (p, v, r) in enumerate(zip(predictions, verdicts, replies)):
            v["grade"] = r
            d = dict(inner.details[k]) if inner.details and k < len(inner.details) else {}
            d.update(candidate=p, judge=v)
            details.append(d)
        return Scores(inner.metrics, inner.correct, details, extra=inner.extra)


def judge_stage_evaluation(raw: Mapping[str, Any], *, model_cfg: Any, rows: Sequence[Any], where: str,
                           allow_code: bool = False, names: tuple[str | None, str | None] = (None, None),
                           file: str | None = None) -> Any:
    """The :class:`~promptweave.evaluate.Evaluation` of a judged dataset for one candidate model: the candidate's
    raw replies go to :class:`JudgeStage` (no postprocessor of their own, as AISBench quotes them to the judge)."""
    from promptweave.compat.models import resolve_model_type
    from promptweave.evaluate.config import Evaluation, build_evaluator, build_postprocessor
    from promptweave.models.factory import cfg_get

    jwhere = f"{where}.judge_infer_cfg"
    cfg = check_judge_infer_cfg(raw.get("judge_infer_cfg"), where=jwhere)
    resolve_model_type(cfg["judge_model"], file=file, field=f"{jwhere}.judge_model.type")
    eval_cfg = dict(raw.get("eval_cfg") or {})
    ewhere = f"{where}.eval_cfg"
    inner = build_evaluator(eval_cfg.get("evaluator"), f"{ewhere}.evaluator", allow_code=allow_code)
    posts = [build_postprocessor(cfg_get(model_cfg, "pred_postprocessor"), "model.pred_postprocessor", allow_code),
             build_postprocessor(eval_cfg.get("pred_postprocessor"), f"{ewhere}.pred_postprocessor", allow_code)]
    stage = JudgeStage(cfg, inner, posts, where=jwhere)
    return Evaluation(evaluator=stage, where=ewhere, test_rows=rows,
                      dataset_postprocessor=build_postprocessor(eval_cfg.get("dataset_postprocessor"),
                                                                f"{ewhere}.dataset_postprocessor", allow_code),
                      dataset_abbr=names[0], model_abbr=names[1])


def judged_dataset(raw: Mapping[str, Any], *, mode: str, file: str | None, where: str) -> dict[str, Any]:
    """The dataset config the candidate's task is planned from: unscored (its ``eval_cfg`` is the judge's) and
    without the judge stage; only a generation task can be judged."""
    check_judge_infer_cfg(raw.get("judge_infer_cfg"), where=f"{where}.judge_infer_cfg")
    if mode != "gen":
        raise JudgeStageError("a judge stage follows a generation task only", file=file,
                              field=f"{where}.infer_cfg.inferencer.type", value=mode,
                              expected="GenInferencer, or drop judge_infer_cfg")
    return {**{k: v for k, v in raw.items() if k != "judge_infer_cfg"}, "eval_cfg": {}}


def judge_tasks(tasks: Sequence[Any], raw: Mapping[str, Any], *, specs: Sequence[Any], rows: Sequence[Any],
                where: str, allow_code: bool = False, file: str | None = None) -> None:
    """Each candidate task of a judged dataset gets the judge stage as its evaluation and AISBench's name for its
    results (``<abbr>-<judge abbr>``)."""
    by_abbr = {getattr(s, "abbr", None): s for s in specs}
    suffix = judge_abbr(raw)
    for t in tasks:
        spec = by_abbr.get(t.model_name)
        name = f"{t.dataset}-{suffix}"
        t.evaluation = judge_stage_evaluation(raw, model_cfg=getattr(spec, "config", None), rows=rows, where=where,
                                              allow_code=allow_code, names=(name, t.model_name), file=file)
        t.dataset = name
