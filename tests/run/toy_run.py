"""A small two-dataset run against an OpenAI-protocol server; also runnable as a script (``toy_run.py URL WORKDIR``).

The resume test runs it in a subprocess and kills it with SIGKILL.
"""
from __future__ import annotations

import sys

from promptweave.evaluate import build_evaluation
from promptweave.infer import Record
from promptweave.models.base import GenerationParams
from promptweave.models.openai_compat import OpenAICompatModel
from promptweave.run import Task, run_tasks


def toy_tasks(url: str, *, model: str = "stub-model", concurrency: int = 1, n_gen: int = 10, n_ppl: int = 4,
              api_key: str = "k", max_retries: int = 6) -> list[Task]:
    def make() -> OpenAICompatModel:
        return OpenAICompatModel(url, model, api_key=api_key, concurrency=concurrency, backoff_base=0.0,
                                 max_retries=max_retries, timeout=5.0)

    gen = [Record(index=i, shot_ids=[(i + 1) % n_gen], row={"answer": "ABCD"[i % 4]},
                  rendered=[{"role": "system", "content": "Answer with a letter."},
                            {"role": "user", "content": f"Question {i}: which one?"}]) for i in range(n_gen)]
    ppl = [Record(index=i, label=lab, mode="ppl", shot_ids=[0, 1], row={"label": "B"},
                  rendered=f"Q: example one A\nQ: example two B\nQ: item {i} {lab}")
           for i in range(n_ppl) for lab in "ABCD"]
    eval_gen = build_evaluation({"evaluator": {"type": "AccEvaluator"},
                                 "pred_postprocessor": {"type": "first_option_postprocess", "options": "ABCD"}})
    return [
        Task("toy-gen", model, make, gen, mode="gen", params=GenerationParams(max_out_len=32),
             evaluation=eval_gen, gold_column="answer"),
        Task("toy-ppl", model, make, ppl, mode="ppl", evaluation=build_evaluation(None, mode="ppl"),
             gold_column="label"),
    ]


if __name__ == "__main__":
    outs = run_tasks(toy_tasks(sys.argv[1]), sys.argv[2], show_progress=False)
    sys.exit(0 if all(o.ok for o in outs) else 1)
