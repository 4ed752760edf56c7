"""RealWorldQA (AISBench, Parquet shards): its loader; and its scoring.

RealworldQA (AISBench): the image questions' ``ANSWER: ...`` line matched with the gold.
"""
from __future__ import annotations

import base64
import os

from promptweave.data.loaders.base import LoadContext, Splits, rows
from promptweave.prompt.multimodal import build_content

# RealWorldQA's open-answer instruction (evalscope's wording, as AISBench uses it)
_RWQA_PROMPT = (
    "Read the picture and solve the following problem step by step."
    "The last line of your response should be of the form"
    ' "ANSWER: [ANSWER]" (without quotes) where [ANSWER] is the answer to the problem.\n\n'
    "{question}\n\n"
    "Remember to put your answer on its own line at the end in the form"
    ' "ANSWER: [ANSWER]" (without quotes) where [ANSWER] is the answer to the problem,'
    " and you do not need to use a \\boxed command."
)


def realworldqa(ctx: LoadContext, path: str, image_type: str = "image_path") -> Splits:
    """Every ``*.parquet`` in the folder of ``path`` (sorted, concatenated): question text first, then the image
    (written raw to ``RealworldQA_images/image_<n>.webp``, or its base64); rows without image bytes are skipped."""
    from promptweave.data.sources import read_parquet

    if image_type not in ("image_path", "image_base64"):
        raise ctx.fail("image_type must be 'image_path' or 'image_base64'", where="image_type", value=image_type)
    f = ctx.find(path, local_mode=True)
    shards = sorted(p for p in f.parent.iterdir() if p.name.endswith(".parquet"))
    if not shards:
        raise ctx.fail(f"no .parquet files in {f.parent}", file=f.parent)
    root = f.parent / "RealworldQA_images"
    items = []
    n = 0
    for shard in shards:
        split = read_parquet(shard)
        for loc, r in zip(split.where, split.rows):
            idx, n = n, n + 1
            img = r.get("image")
            if not isinstance(img, dict) or not isinstance(img.get("bytes"), (bytes, bytearray)):
                continue  # the reference skips (and logs) a row without image bytes
            if image_type == "image_path":
                target = root / f"image_{idx}.webp"
                if not target.exists():
                    root.mkdir(parents=True, exist_ok=True)
                    tmp = target.with_name(target.name + ".part")
                    tmp.write_bytes(bytes(img["bytes"]))
                    os.replace(tmp, target)
                url = str(target)
            else:
                url = base64.b64encode(bytes(img["bytes"])).decode("ascii")
            text = _RWQA_PROMPT.replace("{question}", str(r.get("question")))
            items.append((f"{shard.name} {loc}", {"content": build_content([("text", text), ("image", url)]),
                                                  "answer": r.get("answer")}))
    return rows(items, f)


LOADERS = {
    "RealworldQADataset": realworldqa,
}


# -- scoring --------------------------------------------------------------------------------------------------
import re
from typing import Any

from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator

_ANSWER = re.compile(r"ANSWER:\s*(.*)")


def extract_answer(prediction: Any) -> str:
    """The rest of the line after the first ``ANSWER:`` (case as written), stripped; ``''`` without one."""
    m = _ANSWER.search(prediction if isinstance(prediction, str) else str(prediction))
    return m.group(1).strip() if m else ""


class RealworldQAEvaluator(Evaluator):
    """``accuracy``: the extracted answer equals the gold after stripping and lower-casing both (a dict gold: its
    ``answer``)."""

    name = "RealworldQAEvaluator"

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        if len(predictions) != len(references):
            raise EvaluationError(f"{self.name}: {len(predictions)} predictions but {len(references)} references",
                                  field="evaluator", expected="one prediction per test row")
        correct: list[bool | None] = []
        details = []
        for pred, ref in zip(predictions, references):
            gold = ref.get("answer", "") if isinstance(ref, dict) else ref
            got = extract_answer(pred)
            p_norm, g_norm = got.strip().lower(), str(gold).strip().lower()
            ok = p_norm == g_norm
            correct.append(ok)
            details.append({"origin_prediction": pred, "pred": got, "answer": gold, "normalized_prediction": p_norm,
                            "normalized_answer": g_norm, "correct": ok})
        n = len(correct)
        return Scores({"accuracy": 100 * sum(1 for c in correct if c) / n if n else 0}, correct, details)


EVALUATORS = {"RealworldQAEvaluator": RealworldQAEvaluator, "ais_bench:RealworldQAEvaluator": RealworldQAEvaluator}
