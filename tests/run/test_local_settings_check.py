"""A local model's ``max_batch_tokens`` and ``num_threads`` are checked where the other model fields are:
``lint``, ``run --dry-run`` and ``run`` refuse a bad one alike, before any model is built, with one PW100 line
naming the file and line, the field and the value."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.config.field_line import line_of
from promptweave.errors import ConfigError
from promptweave.models.factory import check_local_settings

CONFIG = '''datasets = [dict(abbr="qa", path="qa.jsonl", reader_cfg=dict(input_columns=["question"], output_column="answer"),
                 infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template="Q: {{question}}\\nA:"),
                                retriever=dict(type="ZeroRetriever"), inferencer=dict(type="GenInferencer")),
                 eval_cfg=dict(evaluator=dict(type="AccEvaluator")))]
models = [dict(abbr="tiny", type="TransformersModel", path="{path}",
               batch_size=4,
               {field}={value!r})]
'''
BAD = [("max_batch_tokens", "8192"), ("max_batch_tokens", 0), ("max_batch_tokens", -5), ("max_batch_tokens", 2.5),
       ("num_threads", True), ("num_threads", 0), ("num_threads", "4"), ("num_threads", [2])]


def _config(tmp_path: Path, field: str, value: object) -> Path:
    (tmp_path / "qa.jsonl").write_text(json.dumps({"question": "1+1?", "answer": "2"}) + "\n")
    (tmp_path / "model").mkdir(exist_ok=True)  # never loaded: the check comes first
    cfg = tmp_path / "config.py"
    cfg.write_text(CONFIG.format(path=tmp_path / "model", field=field, value=value))
    return cfg


@pytest.mark.parametrize(("field", "value"), BAD)
def test_lint_dry_run_and_run_refuse_it_alike(tmp_path, field, value) -> None:
    cfg = _config(tmp_path, field, value)
    want = f"[PW100] {cfg}:7: models[0].{field}: {field} must be a positive whole number (got {value!r})"
    outs = []
    for args in (["lint", str(cfg)], ["run", str(cfg), "--dry-run", "-w", str(tmp_path / "d")],
                 ["run", str(cfg), "-w", str(tmp_path / "w"), "--no-progress"]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        lines = [line for line in res.output.splitlines() if "[PW" in line]
        assert len(lines) == 1 and want in lines[0], (args, res.output)
        assert "Traceback" not in res.output
        outs.append(lines[0][lines[0].index("[PW"):])
    assert len(set(outs)) == 1  # the same verdict, word for word
    assert not (tmp_path / "w" / "predictions").exists()


@pytest.mark.parametrize("value", [None, 1, 64])
def test_good_values_pass(value) -> None:
    assert check_local_settings({"type": "TransformersModel", "path": "x", "max_batch_tokens": value,
                                 "num_threads": value}, file="c.py", where="models[0]") is None  # nothing refused


def test_an_api_model_is_not_held_to_local_settings() -> None:
    assert check_local_settings({"type": "OpenAISDK", "path": "x", "num_threads": "many"}, file="c.py",
                                where="models[0]") is None  # nothing refused


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(["max_batch_tokens", "num_threads"]),
       value=st.one_of(st.integers(max_value=0), st.floats(allow_nan=False), st.text(max_size=8), st.booleans(),
                       st.lists(st.integers(), max_size=2)))
def test_any_bad_value_is_one_typed_error_at_its_line(tmp_path, field, value) -> None:
    cfg = tmp_path / "c.py"
    cfg.write_text(f"models = [dict(type='TransformersModel', path='m',\n               {field}={value!r})]\n")
    with pytest.raises(ConfigError) as err:
        check_local_settings({"type": "TransformersModel", "path": "m", field: value}, file=str(cfg),
                             where="models[3]")
    assert err.value.file == f"{cfg}:2" and err.value.field == f"models[3].{field}" and err.value.value == value


def test_line_of_finds_python_json_and_yaml_forms(tmp_path) -> None:
    py = tmp_path / "a.py"
    py.write_text("m1 = dict(num_threads=2)\nm2 = {'num_threads': 0}\nx = num_threads == 3\n")
    assert line_of(py, "num_threads", 0) == 2  # two settings: the one showing the value
    assert line_of(py, "num_threads", 7) is None  # neither shows it: no line rather than a wrong one
    js = tmp_path / "a.json"
    js.write_text('{\n  "models": [\n    {"max_batch_tokens": -1}\n  ]\n}\n')
    assert line_of(js, "max_batch_tokens", -1) == 3
    ym = tmp_path / "a.yaml"
    ym.write_text("models:\n  - path: m\n    max_batch_tokens: -1\n")
    assert line_of(ym, "max_batch_tokens") == 3
    assert line_of(tmp_path / "missing.py", "num_threads") is None
