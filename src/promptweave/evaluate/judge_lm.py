"""OpenCompass's ``LMEvaluator`` (subjective / judge-model evaluation) on promptweave's judge machinery.

What the judge sees, as the reference builds it: the dataset's test row (all its columns), plus

- ``prediction`` (and ``prediction2``, ... in pairwise mode), ``obj_gold`` (the row's gold answer, or in pairwise
  mode the gold dict with ``answer1``/``answer2`` naming the model behind each prediction) and
  ``prediction_en_word_count`` / ``prediction_cn_word_count`` per prediction;
- ``reference``, always empty: the reference makes it the judge inferencer's answer column, which is blanked;
- for conversation predictions (lists of ``{'round', 'user', 'assistant'}``), instead of the above:
  ``prediction`` as the whole conversation's text (``pack_all_predictions=True``) or ``prediction_r1``,
  ``prediction_r2``, ... with each round's reply.

The judge model is the config's ``judge_models`` (or ``--judge-model``), as the reference's subjective task gives
it, else the evaluator's own ``judge_cfg``. The dataset config's ``mode`` decides single or pairwise judging:
``singlescore`` (the default) judges each prediction alone; ``m2n`` judges the run's model against each of the
dataset's ``base_models``, whose answers come from ``given_pred`` folders (the reference's predictions files) or
from this run's work dir; ``infer_order`` ``random`` (seeded as the reference) or ``double`` (both orders, twice
the judge calls). The judge's replies become metrics through ``dict_postprocessor`` (none: no metrics, as the
reference, whose summarizers score them later); every reply and prompt is kept in the predictions file.
"""
from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from promptweave.errors import JudgeError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.judge import GenericLLMEvaluator

MODES = ("singlescore", "m2n", "allpair", "fixed")
INFER_ORDERS = ("random", "double", None)
# the dataset config keys the reference's subjective partitioner reads
SUBJECTIVE_KEYS = ("mode", "base_models", "infer_order", "given_pred")
_SEED = 666  # the reference reseeds its shuffle with this for every judged task

_EN_WORD = re.compile(r"\b[a-zA-Z]+\b")
_CN_CHAR = re.compile(r"[\u4e00-\u9fff]")


def _words(key: str, text: Any) -> dict[str, int]:
    text = text if isinstance(text, str) else str(text)
    return {f"{key}_en_word_count": len(_EN_WORD.findall(text)), f"{key}_cn_word_count": len(_CN_CHAR.findall(text))}


def _abbr(model: Any) -> str | None:
    if isinstance(model, Mapping):
        a = model.get("abbr")
        return str(a) if a is not None else None
    return None


def _is_conversation(pred: Any) -> bool:
    return isinstance(pred, list)


class LMEvaluator(GenericLLMEvaluator):
    """A judge model scores each prediction (or each pair of predictions) with the config's judge prompt."""

    name = "LMEvaluator"
    needs = frozenset({"judge", "rows"})
    FIELDS = ("prompt_template", "judge_cfg", "output_path", "meta_review_prompt_template", "pack_all_predictions",
              "dataset_cfg", "pred_postprocessor", "dict_postprocessor", "keep_predictions", "multi_eval")

    def __init__(self, prompt_template: Any = None, judge_cfg: Any = None, output_path: Any = None,
                 meta_review_prompt_template: Any = None, pack_all_predictions: Any = False, dataset_cfg: Any = None,
                 pred_postprocessor: Any = None, dict_postprocessor: Any = None, keep_predictions: Any = False,
                 multi_eval: Any = False, *, where: str = "eval_cfg.evaluator",
                 build_post: Callable[..., Any] | None = None, subjective: Mapping[str, Any] | None = None,
                 **unknown: Any) -> None:
        if unknown:
            bad = min(unknown)
            raise JudgeError("unknown LMEvaluator setting", field=f"{where}.{bad}", value=unknown[bad],
                             expected=", ".join(self.FIELDS))
        if prompt_template is None:
            raise JudgeError("LMEvaluator needs a prompt_template", field=f"{where}.prompt_template")
        for key, value in (("pack_all_predictions", pack_all_predictions), ("keep_predictions", keep_predictions),
                           ("multi_eval", multi_eval)):
            if not isinstance(value, bool) and value is not None:
                raise JudgeError(f"{key} must be True or False", field=f"{where}.{key}", value=value)
        if judge_cfg is not None and not isinstance(judge_cfg, Mapping):
            raise JudgeError("judge_cfg must be a model dict", field=f"{where}.judge_cfg", value=judge_cfg)
        if dataset_cfg is not None and not isinstance(dataset_cfg, Mapping):
            raise JudgeError("dataset_cfg must be a dataset dict", field=f"{where}.dataset_cfg", value=dataset_cfg)
        if output_path is not None and not isinstance(output_path, (str, Path)):
            raise JudgeError("output_path must be a path", field=f"{where}.output_path", value=output_path)
        super().__init__(prompt_template=prompt_template, judge_cfg=judge_cfg, pred_postprocessor=None,
                         dict_postprocessor=dict_postprocessor, where=where, build_post=build_post)
        self.pred_postprocessor = (build_post(pred_postprocessor, f"{where}.pred_postprocessor")
                                   if build_post and pred_postprocessor else None)
        if meta_review_prompt_template is not None:  # checked now; used only by a meta-review stage (not run here)
            from promptweave.evaluate.judge import build_judge_template

            build_judge_template(meta_review_prompt_template, f"{where}.meta_review_prompt_template")
        self.pack_all = bool(pack_all_predictions)
        self.keep_predictions = bool(keep_predictions)
        self.multi_eval = bool(multi_eval)
        self.subjective = check_subjective(subjective or {}, where)

    def judge_model(self, ctx: EvalContext | None) -> tuple[Any, Any]:
        """The run's judge (``judge_models`` / ``--judge-model``) first, as the reference's subjective task puts
        its judge model over the evaluator's ``judge_cfg``; the evaluator's own ``judge_cfg`` otherwise."""
        if ctx is None or ctx.judge is None:
            raise JudgeError("an LLM judge needs a judge model: set judge_models in the config or pass "
                             "--judge-model", field=f"{self.where}.judge_cfg")
        try:
            return ctx.judge({})
        except JudgeError:
            if not self.judge_cfg:
                raise
        return ctx.judge(self.judge_cfg)

    # -- the judge's inputs ---------------------------------------------------------------------------------------
    def _pred_columns(self, preds: Sequence[Any], gold: Any) -> dict[str, Any]:
        """The prediction columns of one judge entry (``preds``: one per compared model)."""
        cols: dict[str, Any] = {}
        if all(isinstance(p, str) for p in preds):
            for n, p in enumerate(preds):
                key = "prediction" if n == 0 else f"prediction{n + 1}"
                cols[key] = p
                cols.update(_words(key, p))
            cols["obj_gold"] = gold
        elif all(_is_conversation(p) for p in preds):
            for n, p in enumerate(preds):
                if self.pack_all:
                    cols["prediction" if n == 0 else f"prediction{n + 1}"] = str(p)
                    continue
                # the reference numbers the second model's rounds 'prediction1_r*' (one less than its
                # single-turn key); kept, since the judge templates are written against it
                key = "prediction" if n == 0 else f"prediction{n}"
                for r, turn in enumerate(p):
                    cols[f"{key}_r{r + 1}"] = turn.get("assistant") if isinstance(turn, Mapping) else None
        else:
            raise JudgeError("LMEvaluator: a prediction is neither text nor a conversation (a postprocessor that "
                             "returns something else, e.g. None?)", field=f"{self.where}.pred_postprocessor",
                             value=next(p for p in preds if not isinstance(p, (str, list))),
                             expected="text (return '' rather than None)")
        cols["reference"] = ""  # the judge inferencer's answer column: blanked, as in the reference
        return cols

    def _postprocess(self, predictions: Sequence[Any]) -> list[Any]:
        if not self.pred_postprocessor:
            return list(predictions)
        return [self.pred_postprocessor(p) if isinstance(p, str) else p for p in predictions]

    # -- scoring ----------------------------------------------------------------------------------------------------
    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        from promptweave.evaluate.evaluators import check_lengths

        check_lengths(predictions, references, self.name)
        rows = [dict(r) for r in (ctx.rows if ctx is not None else [])]
        rows += [{} for _ in range(len(predictions) - len(rows))]
        preds = self._postprocess(predictions)
        mode = self.subjective["mode"]
        if mode == "singlescore":
            jobs = self._single_jobs(preds, list(references), rows)
        elif mode == "m2n":
            jobs = self._pair_jobs(preds, list(references), rows, ctx)
        else:
            raise JudgeError(f"LMEvaluator mode={mode!r} judges the run's models against each other at once; "
                             "promptweave judges one model per task: use mode='m2n' with base_models (or "
                             "'singlescore')", field=f"{self.where}.mode", value=mode,
                             expected="'singlescore' or 'm2n'")
        n = len(predictions)
        all_metrics: dict[str, float] = {}
        details: list[dict[str, Any]] = [{"judges": []} for _ in range(n)]
        correct: list[bool | None] = [None] * n
        extra: dict[str, Any] = {}
        for label, entries, golds, owners in jobs:
            if not entries:
                extra.setdefault("skipped", []).append(label)
                continue
            verdicts = self.ask(entries, ctx)
            metrics, true_tag = self._metrics(verdicts, entries, golds)
            for k, v in metrics.items():
                all_metrics[k if len(jobs) == 1 else f"{label}/{k}"] = v
            for v, i in zip(verdicts, owners):
                details[i]["judges"].append(v)
                if mode == "singlescore" and not self.multi_eval and true_tag is not None and self.dict_name:
                    correct[i] = v["grade"] == true_tag
        for d in details:
            if d["judges"]:
                d["judge"] = d["judges"][0]
        if not self.dict_name and self.bridged_dict is None:
            extra["note"] = ("no dict_postprocessor: the judge's replies are in the predictions file (the "
                             "reference's summarizer scores them)")
        return Scores(all_metrics, correct, details, extra)

    def _metrics(self, verdicts: list[dict[str, Any]], entries: list[dict[str, Any]],
                 golds: list[Any]) -> tuple[dict[str, float], Any]:
        if self.bridged_dict is not None:
            metrics, grades, true_tag = self._bridged_grade(verdicts, entries, golds)
            for v, g in zip(verdicts, grades):
                v["grade"] = g
            return metrics, true_tag
        if not self.dict_name:
            return {}, None
        metrics, true_tag = self.grade(verdicts, entries, golds)
        return metrics, true_tag

    def _single_jobs(self, preds: list[Any], refs: list[Any], rows: list[dict]) -> list[tuple]:
        entries, golds, owners = [], [], []
        for i, (p, r) in enumerate(zip(preds, refs)):
            if self.multi_eval:
                prompts = r.get("judge_prompt_list") if isinstance(r, Mapping) else None
                if not isinstance(prompts, list):
                    raise JudgeError("multi_eval=True needs each row's gold to be a dict with a "
                                     "'judge_prompt_list'", field=f"{self.where}.multi_eval", value=r)
                base = {k: v for k, v in r.items() if k != "judge_prompt_list"}
                for jp in prompts:
                    gold = {**base, "judge_prompt": jp}
                    pred = str(jp).replace("{prediction}", p if isinstance(p, str) else str(p))
                    entries.append({**rows[i], **self._pred_columns([pred], gold)})
                    golds.append(gold)
                    owners.append(i)
                continue
            entries.append({**rows[i], **self._pred_columns([p], r)})
            golds.append(r)
            owners.append(i)
        return [("judge", entries, golds, owners)]

    def _pair_jobs(self, preds: list[Any], refs: list[Any], rows: list[dict], ctx: EvalContext | None) -> list[tuple]:
        """One job per base model: the base model's and this model's answers, ordered as ``infer_order`` says."""
        model = ctx.model if ctx is not None else None
        order = self.subjective["infer_order"]
        base_abbrs = [b for b in self.subjective["base_models"]]
        jobs = []
        for base in base_abbrs:
            if model is not None and base == model:
                jobs.append((f"vs {base}", [], [], []))  # the reference pairs no model with itself
                continue
            base_preds = self._postprocess(load_base_predictions(base, self.subjective, ctx, len(preds), self.where))
            pairs_gold = []
            first, second, names = [], [], []
            rng = random.Random(_SEED)
            for i in range(len(preds)):
                pair = [(base_preds[i], base), (preds[i], model or "model")]
                if order == "random":
                    rng.shuffle(pair)
                gold = refs[i]
                if not isinstance(gold, Mapping):
                    raise JudgeError("pairwise judging records which model gave which answer in each row's gold, "
                                     "which must be a dict (the reference fails here too)",
                                     field=f"{self.where}.dataset.reader_cfg.output_column", value=gold,
                                     expected="a dataset whose output column holds dicts (the subjective loaders')")
                gold = dict(gold)
                for j, (p, who) in enumerate(pair):
                    gold[f"answer{j + 1}"] = who
                    if self.keep_predictions:
                        gold[f"prediction{j + 1}"] = p
                gold["base_models"] = list(base_abbrs)
                first.append(pair[0][0])
                second.append(pair[1][0])
                names.append(gold)
            pairs_gold = names
            owners = list(range(len(preds)))
            a, b = first, second
            if order == "double":
                a, b = first + second, second + first
                swapped = []
                for g in names:
                    s = dict(g)
                    s["answer1"], s["answer2"] = g["answer2"], g["answer1"]
                    if self.keep_predictions:
                        s["prediction1"], s["prediction2"] = g["prediction2"], g["prediction1"]
                    swapped.append(s)
                pairs_gold = names + swapped
                owners = owners + owners
            entries = [{**rows[i], **self._pred_columns([x, y], g)}
                       for i, x, y, g in zip(owners, a, b, pairs_gold)]
            jobs.append((f"vs {base}", entries, pairs_gold, owners))
        return jobs



def check_subjective(cfg: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The dataset config's subjective settings (``mode``, ``base_models``, ``infer_order``, ``given_pred``),
    checked; ``where`` is the evaluator's field path (its dataset is two levels up)."""
    ds = where.rsplit(".eval_cfg", 1)[0] if ".eval_cfg" in where else "dataset"
    mode = cfg.get("mode", "singlescore")
    if mode not in MODES:
        raise JudgeError("unknown subjective mode", field=f"{ds}.mode", value=mode,
                         expected=" or ".join(repr(m) for m in MODES))
    order = cfg.get("infer_order")
    if order not in INFER_ORDERS:
        raise JudgeError("unknown infer_order", field=f"{ds}.infer_order", value=order,
                         expected="'random', 'double' or None")
    bases = cfg.get("base_models") or []
    if isinstance(bases, Mapping):
        bases = [bases]
    if not isinstance(bases, (list, tuple)) or not all(_abbr(b) for b in bases):
        raise JudgeError("base_models must be a list of model dicts with an abbr", field=f"{ds}.base_models",
                         value=bases)
    if mode == "m2n" and not bases:
        raise JudgeError("mode='m2n' judges against base_models, and there are none", field=f"{ds}.base_models",
                         expected="base_models=[dict(abbr='gpt4-0314')]")
    given = cfg.get("given_pred") or []
    if not isinstance(given, (list, tuple)) or not all(
            isinstance(g, Mapping) and isinstance(g.get("abbr"), str) and isinstance(g.get("path"), str)
            for g in given):
        raise JudgeError("given_pred must be a list of dict(abbr=..., path=...)", field=f"{ds}.given_pred",
                         value=given)
    return {"mode": mode, "infer_order": order, "base_models": [_abbr(b) for b in bases],
            "given_pred": {g["abbr"]: g["path"] for g in given}, "file": cfg.get("_file"), "abbr": cfg.get("abbr"),
            "where": ds}


def _read_reference_preds(path: Path) -> list[Any] | None:
    """Predictions from the reference's files: ``<dataset>.json`` (``{"0": {"prediction": ...}}``) or its
    partitions ``<dataset>_0.json``, ``_1``..."""
    def one(p: Path) -> list[Any]:
        data = json.loads(p.read_text(encoding="utf-8"))
        return [data[str(i)]["prediction"] for i in range(len(data))]

    if path.is_file():
        return one(path)
    part = path.with_name(f"{path.stem}_0{path.suffix}")
    if not part.is_file():
        return None
    out: list[Any] = []
    k = 0
    while part.is_file():
        out += one(part)
        k += 1
        part = path.with_name(f"{path.stem}_{k}{path.suffix}")
    return out


def _read_own_preds(path: Path) -> list[Any] | None:
    if not path.is_file():
        return None
    by_index: dict[int, Any] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if "turn_id" not in row:
                by_index[int(row["index"])] = row.get("prediction")
    return [by_index[i] for i in sorted(by_index)]


def load_base_predictions(base: str, subjective: Mapping[str, Any], ctx: EvalContext | None, n: int,
                          where: str) -> list[Any]:
    """The base model's answers for this dataset: its ``given_pred`` folder (the reference's predictions file
    ``<dataset abbr>.json``, or promptweave's ``<dataset abbr>.jsonl``), else this run's own predictions of it."""
    from promptweave.data.locate import candidates

    dataset = (ctx.dataset if ctx is not None else None) or subjective.get("abbr")
    tried: list[str] = []
    found: list[Any] | None = None
    try:
        if base in subjective["given_pred"] and dataset:
            base_dir = Path(subjective["file"]).parent if subjective.get("file") else None
            for folder in candidates(subjective["given_pred"][base], base_dir=base_dir, local_mode=True)[1]:
                for name, reader in ((f"{dataset}.json", _read_reference_preds), (f"{dataset}.jsonl", _read_own_preds)):
                    tried.append(str(folder / name))
                    found = reader(folder / name)
                    if found is not None:
                        break
                if found is not None:
                    break
        if found is None and ctx is not None and ctx.workdir is not None and dataset:
            from promptweave.errors import WorkdirFileError
            from promptweave.evaluate.judge_view import safe_name
            from promptweave.safe_files import confined

            own = Path(ctx.workdir) / "predictions" / safe_name(base) / f"{safe_name(dataset)}.jsonl"
            tried.append(str(own))
            try:  # the work dir's own file only: a link out of it is not read
                found = _read_own_preds(confined(own, ctx.workdir)) if own.exists() or own.is_symlink() else None
            except WorkdirFileError as exc:
                tried[-1] += f" ({exc.message})"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise JudgeError(f"the base model {base!r}'s predictions cannot be read ({type(exc).__name__}: {exc})",
                         field=f"{subjective['where']}.given_pred", value=tried[-1] if tried else None) from None
    if found is None:
        raise JudgeError(f"no predictions of the base model {base!r} for dataset {dataset!r}; tried "
                         + ("; ".join(tried) or "nothing (no given_pred for it and no work dir)"),
                         field=f"{subjective['where']}.given_pred",
                         expected=f"given_pred=[dict(abbr={base!r}, path=<folder with {dataset}.json>)], or "
                                  f"{base!r} in the config's models, run first into the same work dir")
    if len(found) < n:
        raise JudgeError(f"the base model {base!r} has {len(found)} predictions for {dataset!r}, the run has {n}",
                         field=f"{subjective['where']}.given_pred", value=tried[-1] if tried else None)
    return found[:n]


def subjective_settings(dataset_cfg: Any, file: str | None = None) -> dict[str, Any]:
    """The subjective keys of a dataset config (for ``build_evaluator``), with its abbr and file."""
    if not isinstance(dataset_cfg, Mapping):
        return {}
    out = {k: dataset_cfg[k] for k in SUBJECTIVE_KEYS if k in dataset_cfg}
    out["abbr"] = dataset_cfg.get("abbr")
    out["_file"] = file
    return out


__all__ = ["LMEvaluator", "check_subjective", "load_base_predictions", "subjective_settings"]
