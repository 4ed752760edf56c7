"""Property: whatever is wrong with a config, ``lint`` answers with typed one-line errors, never a traceback."""
from __future__ import annotations

import copy
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from promptweave.cli.app import app

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from fuzz import _paths  # noqa: E402  (the fuzz benchmark's walk over a config's value paths)

BASE: dict[str, Any] = {
    "datasets": [{
        "abbr": "d", "rows": [{"q": "one {x}", "a": "A"}, {"q": "two", "a": "B"}],
        "reader_cfg": {"input_columns": ["q"], "output_column": "a"},
        "infer_cfg": {
            "ice_template": {"type": "PromptTemplate", "template": {"round": [
                {"role": "HUMAN", "prompt": "{q}"}, {"role": "BOT", "prompt": "{a}"}]}},
            "prompt_template": {"type": "PromptTemplate", "ice_token": "</E>", "template": {
                "begin": "</E>", "round": [{"role": "HUMAN", "prompt": "Q: {q}"}, {"role": "BOT", "prompt": "{a}"}]}},
            "retriever": {"type": "FixKRetriever", "fix_id_list": [0]},
            "inferencer": {"type": "GenInferencer", "max_out_len": 4}},
        "eval_cfg": {"evaluator": {"type": "AccEvaluator"}, "pred_postprocessor": {"type": "first_capital_postprocess"}},
    }],
    "models": [
        {"abbr": "lm", "type": "HuggingFaceCausalLM", "path": "x", "meta_template": {"round": [
            {"role": "HUMAN", "begin": "<u>", "end": "\n"}, {"role": "BOT", "begin": "<b>", "generate": True}]}},
        {"abbr": "api", "type": "OpenAISDK", "path": "m", "openai_api_base": "http://127.0.0.1:9/v1",
         "meta_template": {"round": [{"role": "HUMAN", "api_role": "HUMAN"},
                                     {"role": "BOT", "api_role": "BOT", "generate": True}]}},
    ],
}

NAMES = ["PromptTemplate", "RawPromptTemplate", "GenInferencer", "PPLInferencer", "SCInferencer", "LLInferencer",
         "PPLOnlyInferencer", "ChatInferencer", "AgentInferencer", "ToTInferencer", "Nope", "ZeroRetriever",
         "AccEvaluator", "VLLM", "TurboMindModel", "Gemini", "HUMAN", "BOT", "SYSTEM", "{q}", "{Q}", "</E>", ""]
leaf = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**6), st.sampled_from(NAMES),
                 st.text(max_size=12), st.floats(allow_nan=False, allow_infinity=False))
value = st.recursive(leaf, lambda c: st.one_of(st.lists(c, max_size=3),
                                               st.dictionaries(st.sampled_from(NAMES + ["role", "prompt", "type",
                                                                                       "round", "template"]),
                                                               c, max_size=3)), max_leaves=6)


def _mutate(cfg: dict, path: tuple, action: str, new: Any) -> None:
    if not path:
        return
    parent = cfg
    for k in path[:-1]:
        parent = parent[k]
    key = path[-1]
    if action == "delete":
        del parent[key]
    else:
        parent[key] = new


mutation = st.tuples(st.integers(0, 10**6), st.sampled_from(["delete", "replace", "replace"]), value)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(mutation, min_size=1, max_size=3), st.booleans())
def test_lint_gives_typed_lines_never_a_traceback(mutations, no_data) -> None:
    cfg = copy.deepcopy(BASE)
    for pick, action, new in mutations:
        paths = _paths(cfg)[1:]
        if paths:
            _mutate(cfg, paths[pick % len(paths)], action, new)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.json"
        path.write_text(json.dumps(cfg))
        res = CliRunner().invoke(app, ["lint", str(path)] + (["--no-data"] if no_data else []))
    assert res.exit_code in (0, 2), (res.output, res.exception)
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    for line in res.output.strip().splitlines():
        assert line.startswith(("ok: ", "error: ", "warning: ", "data: ", "1 file(s): ")), line
        if line.startswith("error: ") and not line.endswith("problem(s)"):
            assert "[PW" in line and "[PW000]" not in line, line  # typed at the source, not the catch-all


PY = '''from opencompass.openicl.icl_prompt_template import PromptTemplate
from opencompass.openicl.icl_inferencer import GenInferencer
reader = dict(input_columns=["q"], output_column="a")
infer = dict(prompt_template=dict(type=PromptTemplate, template=dict(round=[dict(role="HUMAN", prompt="Q: {q}")])),
             retriever=dict(type="ZeroRetriever"), inferencer=dict(type=GenInferencer, max_out_len=4))
demo_datasets = [dict(abbr="d", rows=[dict(q="x", a="A")], reader_cfg=reader, infer_cfg=infer,
                      eval_cfg=dict(evaluator=dict(type="AccEvaluator")))]
'''
TOKENS = ["(", ")", "[", "]", "{", "}", ",", ":", "=", "dict(", "None", "1", "'x'", "\n", "import os", "def f():",
          "**", "lambda: 0", "GenInferencer", "SCInferencer", "models = [dict()]", "datasets = demo_datasets"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(TOKENS), st.booleans()), min_size=1, max_size=3))
def test_lint_of_mutated_python_configs_never_shows_a_traceback(edits) -> None:
    text = PY
    for pos, token, delete in edits:
        at = pos % (len(text) + 1)
        text = text[:at] + text[at + len(token):] if delete else text[:at] + token + text[at:]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz_gen.py"
        path.write_text(text)
        res = CliRunner().invoke(app, ["lint", "--no-data", str(path)])
    assert res.exit_code in (0, 2), (res.output, res.exception)
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    for line in res.output.strip().splitlines():
        assert line.startswith(("ok: ", "error: ", "warning: ", "data: ", "1 file(s): ")), line
