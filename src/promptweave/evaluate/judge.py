"""LLM-as-judge evaluators (``GenericLLMEvaluator``, ``CascadeEvaluator``) on promptweave's own prompt engine.

The judge prompt is the config's ``prompt_template`` filled with the test row plus ``prediction``, ``obj_gold`` and
``reference`` columns and rendered with the judge model's meta template (the same code as the main prompts); the
judge is asked through the run's response cache, so a rerun sends nothing again. Each row's judge prompt, raw
verdict and parsed grade go into the predictions file (``judge`` field) for ``view``/reports.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from promptweave.compat.suites import Registry
from promptweave.errors import JudgeError, PromptweaveError
from promptweave.evaluate.context import EvalContext, Scores


@dataclass
class _JudgeRecord:
    index: int
    rendered: Any
    shot_ids: list = field(default_factory=list)
    row: dict = field(default_factory=dict)


# judge templates whose messages go to a chat API as written (roles kept), as RawPromptTemplate main prompts do
_RAW_KINDS = ("RawPromptTemplate", "InverseIFEvalJudgePromptTemplate")


def _type_name(t: Any) -> str:
    return (t if isinstance(t, str) else getattr(t, "__name__", str(t))).rsplit(".", 1)[-1]


def grade_letter(judgement: str, true_tag: str = "A", false_tag: str = "B") -> str:
    """The first true/false tag in the judge's reply, else 'unknown'."""
    m = re.search(rf"({re.escape(true_tag)}|{re.escape(false_tag)})", judgement or "")
    return m.group(0) if m else "unknown"


def judge_metrics(grades: Sequence[str], true_tag: str = "A", false_tag: str = "B",
                  metric: str = "accuracy") -> dict[str, float]:
    """``generic_llmjudge_postprocess``'s figures: accuracy, accuracy given attempted, f1, attempted ratio, counts."""
    n = len(grades)
    right = sum(g == true_tag for g in grades)
    wrong = sum(g == false_tag for g in grades)
    if not n:
        return {metric: 0.0}
    is_c, is_w = right / n, wrong / n
    attempted = is_c + is_w
    given = is_c / attempted if attempted > 0 else 0.0
    f1 = 2 * given * is_c / (given + is_c) if given + is_c > 0 else 0.0
    return {metric: is_c * 100, f"{metric}_given_attempted": given * 100, "f1": f1,
            "attempted_ratio": (right + wrong) / n * 100, "correct_count": float(right),
            "incorrect_count": float(wrong), "not_attempted_count": float(n - right - wrong)}


def _post_generic(outputs, rows, refs, true_tag: str = "A", false_tag: str = "B"):
    grades = [grade_letter(o, true_tag, false_tag) for o in outputs]
    return judge_metrics(grades, true_tag, false_tag), grades, true_tag


def _post_academic(outputs, rows, refs, metric_name: str = "accuracy"):
    grades = [grade_letter(o) for o in outputs]
    metrics = judge_metrics(grades, metric=metric_name)
    metrics.pop("f1", None)
    return metrics, grades, "A"


_FIRST_NUMBER = re.compile(r"[-+]?\d*\.\d+|\d+\.\d*|\d+")


def _post_numerical(outputs, rows, refs):
    """Matbench's numeric judging: the first number in each judge reply (0 when none) against the gold value;
    ``mae`` is the mean absolute error."""
    errors = []
    values = []
    for i, o in enumerate(outputs):
        m = _FIRST_NUMBER.search(o or "")
        value = float(m.group(0)) if m else 0.0
        gold = refs[i] if i < len(refs) and refs[i] is not None else 0  # the reference reads a missing gold as 0
        try:
            errors.append(abs(value - float(gold)))
        except (TypeError, ValueError):
            raise JudgeError("numerical_llmjudge_postprocess needs numeric gold answers", field="dict_postprocessor",
                             value=gold, expected="a number in the dataset's output column") from None
        values.append(str(value))
    return {"mae": sum(errors) / len(errors) if errors else 0}, values, None


def _by_category(prefix: str, columns: Sequence[tuple[str, str]]):
    """MedMCQA / Medbullets judging: A (the first A or B in the verdict, B when neither) is right; ``accuracy``
    and one ``<prefix>-<category>`` figure per value of each row column (two decimals; a value seen in two
    columns keeps the last column's figure), as the reference flattens them."""

    def post(outputs, rows, refs):
        grades = [g if g != "unknown" else "B" for g in (grade_letter(o) for o in outputs)]
        stats: dict[str, dict[str, list[int]]] = {level: {} for level, _ in columns}
        padded = list(rows) + [{}] * (len(grades) - len(rows))
        for g, row in zip(grades, padded):
            for level, column in columns:
                hit = stats[level].setdefault(str(row.get(column, "unknown")), [0, 0])
                hit[0] += g == "A"
                hit[1] += 1
        right = grades.count("A")
        metrics: dict[str, float] = {"accuracy": round(right / len(grades) * 100, 2) if grades else 0.0,
                                     "total_correct": float(right), "total_count": float(len(grades))}
        for level, _ in columns:
            for key, (c, t) in stats[level].items():
                metrics[f"{prefix}-{key}"] = round(c / t * 100, 2)
        return metrics, grades, "A"

    return post


# judge-output ("dict") postprocessors: name -> (function, the config arguments it takes); then the suites' own
DICT_POSTPROCESSORS: Registry = Registry({
    "generic_llmjudge_postprocess": (_post_generic, frozenset({"true_tag", "false_tag"})),
    "generic_llmjudge_academic_postprocess": (_post_academic, frozenset({"metric_name"})),
    "numerical_llmjudge_postprocess": (_post_numerical, frozenset()),
    "medmcqa_llmjudge_postprocess": (_by_category("medmcqa", (("subject", "subject_name"), ("topic", "topic_name"),
                                                              ("question_type", "choice_type"))), frozenset()),
    "medbullets_llmjudge_postprocess": (_by_category("Medbullets", (("question_type", "question_type"),)),
                                        frozenset()),
}, "JUDGE_POSTPROCESSORS")


def build_judge_template(cfg: Any, where: str) -> Any:
    """A judge ``prompt_template``: the prompt engine's template, or a reference judge template class that is
    plain data → prompt (``judge_templates``)."""
    from promptweave.engine.spec import build_template
    from promptweave.evaluate.judge_templates import JUDGE_TEMPLATES, template_kind

    cls = JUDGE_TEMPLATES.get(template_kind(cfg))
    if cls is not None:
        return cls(cfg, where)
    return build_template(cfg, file=None, field_path=where)


class GenericLLMEvaluator:
    """Ask a judge model to grade each prediction; ``dict_postprocessor`` turns the replies into metrics."""

    name = "GenericLLMEvaluator"
    needs = frozenset({"judge", "rows"})

    def __init__(self, prompt_template: Any = None, judge_cfg: Any = None, dataset_cfg: Any = None,
                 pred_postprocessor: Any = None, dict_postprocessor: Any = None, keep_predictions: bool = False,
                 *, where: str = "eval_cfg.evaluator", build_post: Callable[..., Any] | None = None) -> None:
        if prompt_template is None:
            raise JudgeError("GenericLLMEvaluator needs a prompt_template", field=f"{where}.prompt_template")
        self.where = where
        self.template = build_judge_template(prompt_template, f"{where}.prompt_template")
        self._compiled: Any = None
        self.judge_cfg = dict(judge_cfg or {})
        self.pred_postprocessor = (build_post(pred_postprocessor, f"{where}.pred_postprocessor")
                                   if build_post and pred_postprocessor else None)
        jpp = self.judge_cfg.get("pred_postprocessor")
        self.judge_postprocessor = build_post(jpp, f"{where}.judge_cfg.pred_postprocessor") if build_post and jpp \
            else None
        self.dict_name: str | None = None
        self.dict_kwargs: dict[str, Any] = {}
        self.bridged_dict: tuple[str, Callable[..., Any]] | None = None
        if dict_postprocessor is not None:
            d = dict(dict_postprocessor) if isinstance(dict_postprocessor, Mapping) else {"type": dict_postprocessor}
            dname = _type_name(d.pop("type", ""))
            if dname not in DICT_POSTPROCESSORS:
                from promptweave.compat.bridge import reference_class

                # the installed reference's own function computes the metrics; its arguments are its business
                self.bridged_dict = reference_class("dict_postprocessor", dname or "")
                if self.bridged_dict is None:
                    raise JudgeError("unknown dict_postprocessor for a judge",
                                     field=f"{where}.dict_postprocessor.type", value=dname,
                                     expected=" or ".join(sorted(DICT_POSTPROCESSORS))
                                     + ", or install opencompass for its registered ones")
            else:
                allowed = DICT_POSTPROCESSORS[dname][1]
                extra = set(d) - allowed
                if extra:
                    raise JudgeError("unknown dict_postprocessor argument", field=f"{where}.dict_postprocessor."
                                     + min(extra), expected=", ".join(sorted(allowed)) or "no arguments")
            self.dict_name, self.dict_kwargs = dname, d
        self.academic = self.dict_name == "generic_llmjudge_academic_postprocess"
        self.metric_name = str(self.dict_kwargs.get("metric_name", "accuracy"))
        self.dict_postprocessor = dict_postprocessor

    # -- prompts and calls ----------------------------------------------------------------------------------------
    def judge_rows(self, predictions: Sequence[Any], references: Sequence[Any], ctx: EvalContext,
                   rows: Sequence[Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
        """One judge call per prediction; returns ``{"prompt", "output", "grade"}`` per row (cached)."""
        rows = list(rows if rows is not None else (ctx.rows if ctx is not None else []))
        if self.pred_postprocessor:
            predictions = [self.pred_postprocessor(p) if isinstance(p, str) else p for p in predictions]
        entries = []
        for i, (p, r) in enumerate(zip(predictions, references)):
            base = dict(rows[i]) if i < len(rows) else {}
            entries.append({**base, "prediction": p, "obj_gold": r, "reference": r})
        out = self.ask(entries, ctx)
        self.grade(out, rows, references)
        return out

    def judge_model(self, ctx: EvalContext | None) -> tuple[Any, Any]:
        """The judge ``(model, ModelSpec)`` for this evaluator's ``judge_cfg`` (empty: the run's default judge)."""
        if ctx is None or ctx.judge is None:
            raise JudgeError("an LLM judge needs a judge model: set judge_cfg in the config or pass --judge-model",
                             field=f"{self.where}.judge_cfg")
        return ctx.judge(self.judge_cfg)

    def fill(self, entry: Mapping[str, Any]) -> Any:
        """The judge prompt template filled with one entry (a str or a Dialogue)."""
        from promptweave.prompt.template import fill_items

        if hasattr(self.template, "fill_entry"):
            return self.template.fill_entry(entry)
        if self._compiled is None:
            self._compiled = self.template.compiled(None, self.template.template, ice=False,
                                                    ice_token=self.template.ice_token)
        return fill_items(self._compiled, entry, field=f"{self.where}.prompt_template.template")

    def ask(self, entries: Sequence[Mapping[str, Any]], ctx: EvalContext | None) -> list[dict[str, Any]]:
        """The judge's reply to the template filled with each entry, through the run's response cache:
        ``{"prompt", "output", "grade": None, "model"}`` per entry, in order."""
        from promptweave.engine.builder import render_prompt
        from promptweave.infer.gen import infer_gen
        from promptweave.infer.records import to_jsonable
        from promptweave.models.factory import generation_params

        model, spec = self.judge_model(ctx)
        if getattr(self.template, "kind_name", "") in _RAW_KINDS and spec.kind == "api":
            from promptweave.render.meta import with_api_roles  # raw messages keep their roles, as for main prompts

            spec = with_api_roles(spec)
        records = [_JudgeRecord(i, render_prompt(self.fill(e), spec, "gen")) for i, e in enumerate(entries)]
        params = generation_params(spec.config, max_out_len=self.judge_cfg.get("max_out_len"))
        try:
            results = infer_gen(model, records, params, ctx.cache, ctx.progress)  # type: ignore[union-attr]
        except PromptweaveError as exc:
            raise JudgeError(f"the judge model failed: {exc.message}", field=f"{self.where}.judge_cfg") from None
        out = []
        for res in results:
            text = res.output if isinstance(res.output, str) else str(res.output)
            if self.judge_postprocessor:
                text = self.judge_postprocessor(text)
            out.append({"prompt": to_jsonable(res.prompt), "output": text, "grade": None,
                        "model": getattr(spec, "abbr", "judge")})
        return out

    def grade(self, verdicts: list[dict[str, Any]], rows: Sequence[Mapping[str, Any]],
              references: Sequence[Any] | None = None) -> tuple[dict, str]:
        """Fill each verdict's ``grade`` and compute the metrics with the configured dict postprocessor (none: the
        reference reports no metric, the verdicts are graded A/B as ``generic_llmjudge_postprocess`` would)."""
        if self.bridged_dict is not None:
            metrics, grades, true_tag = self._bridged_grade(verdicts, rows, references or [])
        else:
            fn, _ = DICT_POSTPROCESSORS[self.dict_name or "generic_llmjudge_postprocess"]
            metrics, grades, true_tag = fn([v["output"] for v in verdicts], rows, list(references or []),
                                           **self.dict_kwargs)
        for v, g in zip(verdicts, grades):
            v["grade"] = g
        return (metrics if self.dict_name else {}), true_tag

    def _bridged_grade(self, verdicts, rows, references) -> tuple[dict, list, str]:
        """The reference's dict postprocessor, called as the reference calls it (replies keyed by row index, an
        output path, ``dataset`` when it asks for one); rows are still graded A/B for the per-row details."""
        import inspect
        import tempfile
        from pathlib import Path

        package, fn = self.bridged_dict  # type: ignore[misc]
        from promptweave.compat.bridge import is_static

        if is_static(fn):  # read from an unimportable reference's source only
            raise fn.unavailable(field=f"{self.where}.dict_postprocessor.type")
        _, grades, true_tag = _post_generic([v["output"] for v in verdicts], rows, references)
        output = {str(i): {"prediction": v["output"], "gold": references[i] if i < len(references) else None,
                           "origin_prompt": v.get("prompt")} for i, v in enumerate(verdicts)}
        try:
            params = inspect.signature(fn).parameters
            with tempfile.TemporaryDirectory() as tmp:
                kwargs = dict(self.dict_kwargs)
                if "dataset" in params:
                    kwargs["dataset"] = list(rows)
                out = fn(output, str(Path(tmp) / "judged.json"), **kwargs)
        except Exception as exc:  # noqa: BLE001 - foreign code's failure becomes a typed error
            raise JudgeError(f"{package}:{self.dict_name} failed ({type(exc).__name__}: {exc})",
                             field=f"{self.where}.dict_postprocessor") from None
        metrics = {k: float(v) for k, v in dict(out or {}).items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool)}
        return metrics, grades, true_tag

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        from promptweave.evaluate.evaluators import check_lengths

        check_lengths(predictions, references, self.name)
        verdicts = self.judge_rows(predictions, references, ctx)  # type: ignore[arg-type]
        metrics, true_tag = self.grade(verdicts, list(ctx.rows) if ctx is not None else [], references)
        grades = [v["grade"] for v in verdicts]
        correct = [None if true_tag is None else g == true_tag for g in grades]
        details = [{"pred": p, "ref": r, "origin_grade_response": v["output"], "grade_letter": v["grade"],
                    "correct": ok, "judge": v} for p, r, v, ok in zip(predictions, references, verdicts, correct)]
        return Scores(metrics, correct, details)


def llm_correct(verdict: Mapping[str, Any]) -> bool:
    """CascadeEvaluator's reading of a judge reply: exactly 'A' or starting with 'CORRECT' (case-insensitive)."""
    reply = str(verdict.get("output", "")).strip().upper()
    return reply == "A" or reply.startswith("CORRECT")


class CascadeEvaluator:
    """A rule-based evaluator first, then the judge.

    ``parallel=True`` (the reference's default) sends every row to the judge and a row is right when either says
    so; ``parallel=False`` sends only the rows the rule marked wrong. ``accuracy`` is the combined figure;
    ``cascade_stats`` (rule/LLM counts) goes into the results file.
    """

    name = "CascadeEvaluator"
    needs = frozenset({"judge", "rows"})

    def __init__(self, llm_evaluator: Any = None, rule_evaluator: Any = None, sample_score_fn: Any = None,
                 parallel: bool = True, *, where: str = "eval_cfg.evaluator",
                 build: Callable[[Any, str], Any] | None = None) -> None:
        if llm_evaluator is None:
            raise JudgeError("CascadeEvaluator needs llm_evaluator", field=f"{where}.llm_evaluator")
        if rule_evaluator is None:
            raise JudgeError("CascadeEvaluator needs rule_evaluator (a sample_score_fn is code from the config; "
                             "not supported)", field=f"{where}.rule_evaluator")
        assert build is not None
        self.llm = build(llm_evaluator, f"{where}.llm_evaluator")
        self.rule = build(rule_evaluator, f"{where}.rule_evaluator")
        if not isinstance(self.llm, GenericLLMEvaluator):
            raise JudgeError("CascadeEvaluator's llm_evaluator must be a GenericLLMEvaluator",
                             field=f"{where}.llm_evaluator.type", value=type(self.llm).__name__)
        self.parallel = bool(parallel)
        self.needs = frozenset({"judge", "rows"}) | getattr(self.rule, "needs", frozenset())

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        from promptweave.evaluate.evaluators import check_lengths

        check_lengths(predictions, references, self.name)
        rule_preds = [self.rule.pred_postprocessor(p) if getattr(self.rule, "pred_postprocessor", None)
                      and callable(self.rule.pred_postprocessor) and isinstance(p, str) else p for p in predictions]
        rule_scores = self.rule.score(rule_preds, references, ctx)
        rule_ok = [bool(c) for c in rule_scores.correct]
        n = len(predictions)
        todo = [i for i in range(n) if self.parallel or not rule_ok[i]]
        rows = list(ctx.rows) if ctx is not None else []
        verdicts = self.llm.judge_rows([predictions[i] for i in todo], [references[i] for i in todo], ctx,
                                       rows=[rows[i] if i < len(rows) else {} for i in todo]) if todo else []
        llm_ok = {i: llm_correct(v) for i, v in zip(todo, verdicts)}
        by_row = dict(zip(todo, verdicts))
        final = [rule_ok[i] or llm_ok.get(i, False) for i in range(n)]
        initial = sum(rule_ok)
        llm_correct_n = sum(llm_ok.values())
        stats = {"total_samples": n, "rule_correct": initial, "rule_accuracy": 100 * initial / n if n else 0,
                 "llm_evaluated": len(todo), "llm_correct": llm_correct_n,
                 "llm_accuracy": 100 * llm_correct_n / len(todo) if todo else 0, "final_correct": sum(final),
                 "final_accuracy": 100 * sum(final) / n if n else 0, "parallel_mode": self.parallel}
        details = []
        for i in range(n):
            d: dict[str, Any] = {"rule_evaluation": {"correct": rule_ok[i], "evaluation_method": "rule"},
                                 "cascade_correct": final[i]}
            if i in by_row:
                d["llm_evaluation"] = {**by_row[i], "llm_correct": llm_ok[i]}
                d["judge"] = by_row[i]
            details.append(d)
        return Scores({"accuracy": stats["final_accuracy"]}, final, details, extra={"cascade_stats": stats})


def make_judge_factory(default_cfg: Mapping[str, Any] | None = None,
                       make_model: Callable[[Any], Any] | None = None) -> Callable[[Any], tuple[Any, Any]]:
    """A ``judge_cfg -> (model, ModelSpec)`` factory; an empty ``judge_cfg`` means ``default_cfg`` (the
    ``--judge-model`` override, as OpenCompass's ``judge_models``). Models are built once per config."""
    from promptweave.engine.spec import ModelSpec

    if make_model is None:
        from promptweave.models.factory import build_model as make_model
    built: dict[str, tuple[Any, Any]] = {}

    def factory(judge_cfg: Any) -> tuple[Any, Any]:
        cfg = dict(judge_cfg or {}) or dict(default_cfg or {})
        if not cfg:
            raise JudgeError("no judge model: judge_cfg is empty and no --judge-model was given",
                             field="eval_cfg.evaluator.judge_cfg", expected="a model dict, or --judge-model")
        cfg.pop("pred_postprocessor", None)
        key = repr(sorted((k, repr(v)) for k, v in cfg.items()))
        if key not in built:
            spec = ModelSpec.from_config(cfg, field_path="judge_cfg")
            built[key] = (make_model(cfg), spec)
        return built[key]

    return factory


def judge_model_cfg(cfg: Any, name: str | None = None) -> dict[str, Any] | None:
    """The default judge model config: ``name`` (``--judge-model``) among the config's ``judge_models`` then
    ``models`` (by abbr), else the first of ``judge_models`` when the config defines them (as OpenCompass)."""
    from promptweave.config.loader import model_abbr

    variables = getattr(cfg, "variables", {}) or {}
    listed = variables.get("judge_models")
    if not listed:  # a subjective eval config may name them only in its partitioner, as the reference reads them
        ev = variables.get("eval")
        part = ev.get("partitioner") if isinstance(ev, Mapping) else None
        listed = part.get("judge_models") if isinstance(part, Mapping) else None
    judges = [dict(m) for m in (listed or []) if isinstance(m, Mapping)]
    if name is None:
        return judges[0] if judges else None
    pool = judges + [dict(m) for m in getattr(cfg, "models", [])]
    for i, m in enumerate(pool):
        if model_abbr(m, i) == name:
            return m
    raise JudgeError("unknown --judge-model", field="--judge-model", value=name,
                     expected="the abbr of a model in the config's judge_models or models: "
                     + ", ".join(model_abbr(m, i) for i, m in enumerate(pool)))
