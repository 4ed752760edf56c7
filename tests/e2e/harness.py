"""End-to-end runs of shipped OpenCompass dataset configs, the way users write eval configs around them.

A test writes stand-in data in the reference's on-disk layout under a data cache (``COMPASS_DATA_CACHE``), an
eval config that imports the shipped dataset config with ``read_base`` and names an OpenAI-compatible model at
the loopback stand-in server, runs ``promptweave run`` and reads ``results/<model>/<abbr>.json``.

The server answers by rule: every stand-in question carries a marker ``[qN]``; the reply for the *last* marker
in the prompt (the test question comes after any in-context examples) is looked up in the test's table, so the
test knows every answer the model gives and computes the expected score on its own.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from promptweave.cli.app import app

MARK = re.compile(r"\[q(\d+)\]")

EVAL = '''from mmengine.config import read_base

with read_base():
    from {package}.{module} import {name}

datasets = {select}
models = [
    dict(abbr="stub", type="OpenAICompatModel", kind="api", base_url="{url}", model="served", key="EMPTY",
         batch_size=4, max_out_len=256, backoff_base=0,
         meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                   dict(role="BOT", api_role="BOT", generate=True)])),
]
'''


def by_marker(replies: dict[int, str], default: str = "I do not know.") -> Callable[[dict], str]:
    """A stand-in model: the reply scripted for the last ``[qN]`` marker in the prompt."""

    def answer(body: dict) -> str:
        text = json.dumps(body.get("messages") or body.get("prompt"), ensure_ascii=False)
        found = MARK.findall(text)
        return replies.get(int(found[-1]), default) if found else default

    return answer


OPENCOMPASS = "opencompass.configs.datasets"
AISBENCH = "ais_bench.benchmark.configs.datasets"


def run_config(tmp: Path, url: str, module: str, name: str, select: str | None = None,
               extra: tuple[str, ...] = (), package: str = OPENCOMPASS) -> tuple[Any, Path]:
    cfg = tmp / "eval_e2e.py"
    cfg.write_text(EVAL.format(package=package, module=module, name=name, select=select or name, url=url),
                   encoding="utf-8")
    work = tmp / "work"
    res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(work), "--no-progress", *extra])
    return res, work


def result(work: Path, abbr: str) -> dict:
    path = work / "results" / "stub" / f"{abbr}.json"
    assert path.exists(), f"no results file for {abbr}: " + ", ".join(
        p.name for p in (work / "results" / "stub").glob("*.json"))
    return json.loads(path.read_text(encoding="utf-8"))


def predictions(work: Path, abbr: str) -> list[dict]:
    path = work / "predictions" / "stub" / f"{abbr}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def missing_eval_names(evaluators: tuple[str, ...] = (), postprocessors: tuple[str, ...] = ()) -> list[str]:
    """Evaluator / postprocessor names this build cannot construct: callers assert the list is empty, so an
    evaluator that stops registering fails its tests instead of skipping them."""
    import inspect

    from promptweave.errors import PromptweaveError
    from promptweave.evaluate import build_evaluation

    accepted = inspect.signature(build_evaluation).parameters
    kwargs = {k: v for k, v in (("mode", "gen"), ("allow_code", False), ("where", "eval_cfg")) if k in accepted}

    def builds(cfg: dict) -> bool:
        try:
            build_evaluation(cfg, **kwargs)
        except PromptweaveError:
            return False
        return True

    return ([n for n in evaluators if not builds({"evaluator": {"type": n}})]
            + [n for n in postprocessors if not builds({"pred_postprocessor": {"type": n}})])
