"""A model config entry is typed at the config boundary (``ModelConfig``): the fields promptweave reads are checked,
the references' other keys pass through, and a wrong field is one PW181 line from run, run --dry-run and lint."""
from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.config.model_config import ModelConfig, model_config_of
from promptweave.errors import ModelConfigError
from promptweave.models.factory import cfg_get, model_name


def test_fields_are_typed_and_other_keys_kept() -> None:
    mc = model_config_of({"abbr": "m", "type": "HuggingFaceCausalLM", "path": "p", "batch_size": "8",
                          "max_seq_len": 2048, "model_kwargs": {"device_map": "cpu"}, "run_cfg": {"num_gpus": 1}})
    assert isinstance(mc, ModelConfig) and mc.batch_size == 8 and mc.max_seq_len == 2048
    assert mc.model_kwargs == {"device_map": "cpu"}  # a reference's own key, as written
    assert cfg_get(mc, "model_kwargs") == {"device_map": "cpu"} and model_name(mc) == "m" == mc.name
    assert mc.raw()["model_kwargs"] == {"device_map": "cpu"} and mc.raw()["batch_size"] == 8


@pytest.mark.parametrize("field, value", [("batch_size", "eight"), ("batch_size", True), ("timeout", "slow"),
                                          ("max_seq_len", 1.5), ("generation_kwargs", "greedy")])
def test_a_wrong_field_names_its_place_and_value(field, value) -> None:
    with pytest.raises(ModelConfigError) as err:
        model_config_of({"abbr": "m", field: value}, file="c.py", where="models[1]")
    assert str(err.value).startswith(f"[PW181] c.py: models[1].{field}: ") and repr(value)[:10] in str(err.value)


def test_a_model_entry_that_is_not_a_dict() -> None:
    with pytest.raises(ModelConfigError, match=r"\[PW181\] c.py: models\[0\]: a model config must be a dict"):
        model_config_of("gpt", file="c.py")


def _config(tmp_path, batch_size: str):
    cfg = tmp_path / "c.py"
    cfg.write_text(textwrap.dedent(f"""
        datasets = [dict(abbr='d', rows=[dict(q='1+1', a='2')],
                         reader_cfg=dict(input_columns=['q'], output_column='a'),
                         infer_cfg=dict(prompt_template=dict(type='PromptTemplate', template='{{q}}'),
                                        retriever=dict(type='ZeroRetriever'),
                                        inferencer=dict(type='GenInferencer')),
                         eval_cfg=dict(evaluator=dict(type='AccEvaluator')))]
        models = [dict(abbr='m', type='OpenAISDK', path='gpt', openai_api_base='http://127.0.0.1:9/v1', key='EMPTY',
                       batch_size={batch_size})]
    """))
    return cfg


@settings(deadline=None, max_examples=15)
@given(st.sampled_from(["'eight'", "[4]", "dict(n=4)", "True", "2.5"]))
def test_run_dry_run_and_lint_give_the_same_typed_line(tmp_path_factory, batch_size) -> None:
    cfg = _config(tmp_path_factory.mktemp("mc"), batch_size)
    for argv in (["run", str(cfg), "-w", str(cfg.parent / "w"), "--dry-run"], ["lint", str(cfg)],
                 ["run", str(cfg), "-w", str(cfg.parent / "w"), "--no-progress"]):
        res = CliRunner().invoke(app, argv)
        assert res.exit_code == 2, res.output
        assert "[PW181]" in res.output and "models[0].batch_size" in res.output and "Traceback" not in res.output
