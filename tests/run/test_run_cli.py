"""``promptweave run`` end to end: a real config file and JSONL data through the engine, to the
stand-in OpenAI server (a loopback stand-in for a remote vLLM / llama.cpp service) and to a
tiny local transformers model."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from openai_stub import Fault, StubServer
from typer.testing import CliRunner

from promptweave.cli.app import app

QUESTIONS = [
    {"question": "Which planet is red?", "A": "Venus", "B": "Mars", "C": "Jupiter", "D": "Saturn", "answer": "B"},
    {"question": "Water boils at?", "A": "90", "B": "100", "C": "110", "D": "120", "answer": "B"},
    {"question": "Plants absorb?", "A": "Oxygen", "B": "Nitrogen", "C": "CO2", "D": "Helium", "answer": "C"},
    {"question": "Largest ocean?", "A": "Pacific", "B": "Atlantic", "C": "Indian", "D": "Arctic", "answer": "A"},
    {"question": "Fastest land animal?", "A": "Lion", "B": "Cheetah", "C": "Horse", "D": "Dog", "answer": "B"},
]

CONFIG = '''
_q = "Question: {{question}}\\nA. {{A}}\\nB. {{B}}\\nC. {{C}}\\nD. {{D}}\\nAnswer:"
mcq_gen = dict(
    abbr="mcq-gen", path="mcq.jsonl",
    reader_cfg=dict(input_columns=["question", "A", "B", "C", "D"], output_column="answer"),
    infer_cfg=dict(
        prompt_template=dict(type="PromptTemplate", template=dict(round=[dict(role="HUMAN", prompt=_q)])),
        retriever=dict(type="ZeroRetriever"),
        inferencer=dict(type="GenInferencer", max_out_len=16)),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator"),
                  pred_postprocessor=dict(type="first_option_postprocess", options="ABCD")),
)
mcq_ppl = dict(
    abbr="mcq-ppl", path="mcq.jsonl",
    reader_cfg=dict(input_columns=["question", "A", "B", "C", "D"], output_column="answer"),
    infer_cfg=dict(
        prompt_template=dict(type="PromptTemplate", template={{
            lab: dict(round=[dict(role="HUMAN", prompt=_q), dict(role="BOT", prompt=lab)]) for lab in "ABCD"}}),
        retriever=dict(type="ZeroRetriever"),
        inferencer=dict(type="PPLInferencer")),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator")),
)
datasets = [{datasets}]
models = [{models}]
'''

API_MODEL = '''dict(abbr="api", type="OpenAICompatModel", kind="api", base_url="{url}", model="served",
              key="EMPTY", batch_size=4, backoff_base=0,
              meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                        dict(role="BOT", api_role="BOT", generate=True)]))'''
LOCAL_MODEL = '''dict(abbr="tiny", type="TransformersModel", path="{path}", batch_size=4,
              model_kwargs=dict(torch_dtype="float32", device_map="cpu"),
              meta_template=dict(round=[dict(role="HUMAN", begin="<|im_start|>user\\n", end="<|im_end|>\\n"),
                                        dict(role="BOT", begin="<|im_start|>assistant\\n", end="<|im_end|>\\n",
                                             generate=True)]))'''


def write_config(folder: Path, datasets: str, models: str) -> Path:
    (folder / "mcq.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    cfg = folder / "config.py"
    cfg.write_text(CONFIG.format(datasets=datasets, models=models))
    return cfg


def run(*args: str):
    return CliRunner().invoke(app, ["run", *args, "--no-progress"])


def test_dry_run_plans_and_sends_nothing(stub_server: StubServer, tmp_path) -> None:
    cfg = write_config(tmp_path, "mcq_gen, mcq_ppl", API_MODEL.format(url=stub_server.url))
    res = run(str(cfg), "-w", str(tmp_path / "w"), "--dry-run", "--limit", "3")
    assert res.exit_code == 6, res.output  # WILL_FAIL: ppl on the chat API is refused, as lint says
    assert "mcq-gen" in res.output and "mcq-ppl" in res.output
    assert stub_server.total_received == 0 and not (tmp_path / "w").exists()


def test_api_run_scores_and_resumes(stub_server: StubServer, tmp_path) -> None:
    stub_server.answer = lambda body: "The answer is B."
    cfg = write_config(tmp_path, "mcq_gen", API_MODEL.format(url=stub_server.url))
    work = tmp_path / "w"
    res = run(str(cfg), "-w", str(work), "--limit", "3")
    assert res.exit_code == 0, res.output
    assert stub_server.total_answered == 3
    sent = [e["body"]["messages"] for e in stub_server.log]  # concurrent: any order
    assert [{"role": "user", "content": "Question: Which planet is red?\nA. Venus\nB. Mars\nC. Jupiter\n"
                                                "D. Saturn\nAnswer:"}] in sent
    res = run(str(cfg), "-w", str(work))
    assert res.exit_code == 0, res.output
    assert stub_server.total_answered == 5 and max(stub_server.answered.values()) == 1
    rows = [json.loads(x) for x in (work / "predictions" / "api" / "mcq-gen.jsonl").read_text().splitlines()]
    assert [r["correct"] for r in rows] == [True, True, False, False, True]
    result = json.loads((work / "results" / "api" / "mcq-gen.json").read_text())
    assert result["metrics"]["accuracy"] == pytest.approx(60.0)
    assert "60.00" in res.output


def test_local_model_gen_and_ppl(tiny_model_dir, tmp_path) -> None:
    cfg = write_config(tmp_path, "mcq_gen, mcq_ppl", LOCAL_MODEL.format(path=tiny_model_dir))
    res = run(str(cfg), "-w", str(tmp_path / "w"), "--limit", "2")
    assert res.exit_code == 0, res.output
    ppl = [json.loads(x) for x in (tmp_path / "w" / "predictions" / "tiny" / "mcq-ppl.jsonl").read_text().splitlines()]
    assert len(ppl) == 2 and set(ppl[0]["output"]) == set("ABCD")
    assert ppl[0]["prompt"]["A"].startswith("<|im_start|>user\nQuestion: Which planet is red?")


def test_permanent_error_exits_1_with_the_reason(tmp_path) -> None:
    with StubServer(faults=lambda k, a, b: Fault("status", 401, message="bad key")) as srv:
        cfg = write_config(tmp_path, "mcq_gen", API_MODEL.format(url=srv.url))
        res = run(str(cfg), "-w", str(tmp_path / "w"))
    assert res.exit_code == 1
    assert "401" in res.output


def test_unknown_dataset_name_is_a_clear_error(stub_server: StubServer, tmp_path) -> None:
    cfg = write_config(tmp_path, "mcq_gen", API_MODEL.format(url=stub_server.url))
    res = run(str(cfg), "-w", str(tmp_path / "w"), "-d", "nope")
    assert res.exit_code == 2
    assert "no dataset named 'nope'" in " ".join(res.output.split())


def test_dry_run_shows_a_pair_refused_at_plan_time(tmp_path) -> None:
    """The bundled example without its model_dataset_combinations pairs a ppl task with a chat API model: the dry
    run says that pair will fail, and why, and exits WILL_FAIL."""
    from promptweave.cli.common import ExitCode

    examples = Path(__file__).resolve().parents[2] / "examples"
    text = (examples / "quickstart.py").read_text()
    example = tmp_path / "quickstart.py"
    example.write_text(text[:text.index("model_dataset_combinations")])
    shutil.copytree(examples / "data", tmp_path / "data")  # a link out of the config folder is refused
    res = run(str(example), "--dry-run")
    assert res.exit_code == ExitCode.WILL_FAIL, res.output
    out = res.output + (res.stderr if res.stderr_bytes is not None else "")
    assert "refused (PW160)" in out
    assert "will fail: science_mc × api-chat: [PW160]" in out
