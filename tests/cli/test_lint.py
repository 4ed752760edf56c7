"""``promptweave lint``: many files, one line each and a total; --no-data; dataset configs alone; did-you-mean."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from promptweave.cli.app import app

runner = CliRunner()

DATASET = '''
demo_reader_cfg = dict(input_columns=["question"], output_column="answer")
demo_infer_cfg = dict(
    prompt_template=dict(type="PromptTemplate", template=dict(
        begin=[dict(role="SYSTEM", fallback_role="HUMAN", prompt="Be brief.")],
        round=[dict(role="HUMAN", prompt="Q: {question}"), dict(role="BOT", prompt="{answer}")])),
    retriever=dict(type="ZeroRetriever"),
    inferencer=dict(type="GenInferencer", max_out_len=8))
demo_eval_cfg = dict(evaluator=dict(type="AccEvaluator"), pred_postprocessor=dict(type="first_number_postprocess"))
demo_datasets = [dict(abbr="demo", path="rows.jsonl", reader_cfg=demo_reader_cfg, infer_cfg=demo_infer_cfg,
                      eval_cfg=demo_eval_cfg)]
'''
MODELS = '''
models = [dict(abbr="api", type="OpenAISDK", path="m", openai_api_base="http://127.0.0.1:9/v1",
               meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                         dict(role="BOT", api_role="BOT", generate=True)]))]
datasets = demo_datasets
'''


def write(folder: Path, name: str, text: str, rows: bool = True) -> Path:
    if rows:
        (folder / "rows.jsonl").write_text("".join(json.dumps({"question": f"q{i}", "answer": str(i)}) + "\n"
                                                   for i in range(3)))
    p = folder / name
    p.write_text(text)
    return p


def test_many_files_one_line_each_and_a_total(tmp_path) -> None:
    good = write(tmp_path, "good.py", DATASET + MODELS)
    bad = write(tmp_path, "bad.py", (DATASET + MODELS).replace("AccEvaluator", "NoSuchEvaluator"))
    odd = write(tmp_path, "odd.py", (DATASET + MODELS).replace("GenInferencer", "MinKPercentInferencer"))  # search: ToT now runs
    res = runner.invoke(app, ["lint", str(good), str(bad), str(odd)])
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 4
    assert lines[0].startswith(f"ok: {good}: 1 dataset(s) × 1 model(s), 3 prompt(s)")
    assert lines[1].startswith("error: ") and str(bad) in lines[1] and "eval_cfg.evaluator.type" in lines[1]
    assert "NoSuchEvaluator" in lines[1]
    assert str(odd) in lines[2] and "[PW160]" in lines[2] and "infer_cfg.inferencer.type" in lines[2]
    assert lines[3] == "3 file(s): 1 ok, 2 with problems; 2 problem(s) found"
    res = runner.invoke(app, ["lint", str(good), str(good)])
    assert res.exit_code == 0 and res.output.strip().splitlines()[-1].startswith("2 file(s): 2 ok, 0 with")


def test_no_data_checks_all_but_the_rows(tmp_path) -> None:
    cfg = write(tmp_path, "c.py", DATASET + MODELS, rows=False)  # the data file does not exist
    res = runner.invoke(app, ["lint", str(cfg)])
    assert res.exit_code == 2 and "rows.jsonl" in res.output
    res = runner.invoke(app, ["lint", "--no-data", str(cfg)])
    assert res.exit_code == 0, res.output
    assert "ok: demo × api: 1 prompt(s) from a stand-in row (no data)" in res.output
    # eval_cfg is still checked without data
    bad = write(tmp_path, "d.py", (DATASET + MODELS).replace("first_number_postprocess", "no_such_post"), rows=False)
    res = runner.invoke(app, ["lint", "--no-data", str(bad)])
    assert res.exit_code == 2 and "eval_cfg.pred_postprocessor.type" in res.output


def test_a_dataset_config_is_linted_on_its_own(tmp_path) -> None:
    cfg = write(tmp_path, "demo_gen.py", DATASET)
    res = runner.invoke(app, ["lint", str(cfg)])
    assert res.exit_code == 0, res.output
    assert "ok: demo × plain-lm: 3 prompts from 3 rows" in res.output
    assert "ok: demo × api-chat: 3 prompts from 3 rows" in res.output
    assert "dataset config, stand-in models" in res.output
    # a role the API template cannot place is found through the stand-in API model
    bad = write(tmp_path, "demo_bad.py", DATASET.replace('role="SYSTEM", fallback_role="HUMAN"', 'role="CRITIC"'))
    res = runner.invoke(app, ["lint", "--no-data", str(bad)])
    assert res.exit_code == 2 and "[PW120]" in res.output
    assert "infer_cfg.prompt_template.template.begin[0].role" in res.output and str(bad) in res.output




def test_a_shipped_reference_dataset_config_without_its_data() -> None:
    spec = importlib.util.find_spec("opencompass")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("opencompass is not installed (only needed for reading its configs)")
    path = Path(next(iter(spec.submodule_search_locations))).parent / "opencompass/configs/datasets/mmlu/mmlu_gen_4d595a.py"
    res = runner.invoke(app, ["lint", "--no-data", str(path)])
    assert "57 dataset(s) × dataset config, stand-in models" in res.output, res.output
    assert res.exit_code == 0


def test_a_near_miss_placeholder_is_sent_as_written_with_a_warning_in_lint_run_and_view(tmp_path) -> None:
    """OpenCompass fills exact names only (InfiniteBench's code_debug writes {OPTION_A} beside option_A and sends it
    as written): promptweave renders it literally and warns, naming file, field, placeholder and the column."""
    cfg = write(tmp_path, "c.py", (DATASET + MODELS).replace("Q: {question}", "Q: {Question}"))
    warning = ("infer_cfg.prompt_template.template: placeholder {Question} names no column but resembles "
               "{question}; it is sent as written")
    res = runner.invoke(app, ["lint", "-v", str(cfg)])
    assert res.exit_code == 0, res.output
    assert warning in res.output and str(cfg) in res.output
    res = runner.invoke(app, ["run", str(cfg), "--dry-run", "-w", str(tmp_path / "w")])
    assert res.exit_code == 0, res.output
    assert warning in res.output
    res = runner.invoke(app, ["view", str(cfg), "--json"])
    assert res.exit_code == 0, res.output
    assert warning in res.output
    sent = json.loads(res.stdout)[0]["prompt"]
    assert "Q: {Question}" in str(sent) and "q0" not in str(sent)
    # without the data only a difference in case is known to be a near miss; still a warning
    res = runner.invoke(app, ["lint", "-v", "--no-data", str(cfg)])
    assert res.exit_code == 0 and warning in res.output
    far = write(tmp_path, "e.py", (DATASET + MODELS).replace("Q: {question}", "Q: {question} {x}"))
    res = runner.invoke(app, ["lint", str(far)])
    assert res.exit_code == 0 and "placeholder {x} names no column" in res.output  # a warning only
    assert "resembles" not in res.output


def test_the_near_miss_warning_is_typed() -> None:
    import warnings

    from promptweave.engine.spec import DatasetSpec
    from promptweave.errors import PlaceholderNearMissWarning, PromptweaveWarning

    rows = [{"option_A": "x", "answer": "A"}]
    cfg = {"abbr": "d", "reader_cfg": {"input_columns": ["option_A"], "output_column": "answer"},
           "infer_cfg": {"prompt_template": {"template": "A. {OPTION_A}"}, "retriever": {"type": "ZeroRetriever"},
                         "inferencer": {"type": "GenInferencer"}}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DatasetSpec.from_config(cfg, train=rows, test=rows, file="ib.py")
    got = [w for w in caught if issubclass(w.category, PlaceholderNearMissWarning)]
    assert len(got) == 1 and issubclass(got[0].category, PromptweaveWarning)
    assert str(got[0].message).startswith("ib.py: dataset.infer_cfg.prompt_template.template: placeholder "
                                          "{OPTION_A} names no column but resembles {option_A}")
