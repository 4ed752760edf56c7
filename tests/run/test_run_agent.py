"""OpenCompass's AgentInferencer infer_mode='every' / 'every_with_gt' (CIBench) end to end through ``promptweave run``:
stand-in CIBench notebooks in the reference's layout (built here), the loopback stand-in OpenAI server answering
with scripted ReAct replies that hold code actions, the code run in the sandboxed per-conversation Python session.
The expected requests, observations, steps and scores are written out here from the reference's rules."""
from __future__ import annotations

import json
from pathlib import Path

from openai_stub import StubServer, scripted_agent
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.forms.agent_loop import CALL_PROTOCOL, IPYTHON_DESCRIPTION
from tests.codebox import CODE_EXEC

Q = ["Make a list of the numbers one to three and print its sum.\n", "Print their mean.\n",
     "What is six times seven?\n"]
GOLD_CODE = ["nums = [1, 2, 3]\nprint(sum(nums))", "print(sum(nums) / len(nums))", "print(6 * 7)"]
GOLD_OUT = ["6\n", "2.0\n", "42\n"]

SYSTEM = CALL_PROTOCOL.format(
    tool_description=repr({"IPythonInterpreter": IPYTHON_DESCRIPTION}), action_names=repr(["IPythonInterpreter"]),
    thought="Thought:", action="Action:", action_input="Action Input:", response="Response:",
    finish="Final Answer:")


def act(thought: str, code: str) -> str:
    return f"Thought: {thought}\nAction: IPythonInterpreter\nAction Input:```python\n{code}\n```"


def notebook(folder: Path) -> Path:
    """One CIBench experiment: a markdown question (with its gold thought) then its gold code cell and output."""
    cells = []
    for q, code, out in zip(Q, GOLD_CODE, GOLD_OUT, strict=True):
        cells.append({"cell_type": "markdown", "metadata": {}, "source": [q.strip() + "\n\nThought: gold thought"]})
        cells.append({"cell_type": "code", "metadata": {}, "execution_count": 1, "source": [code],
                      "outputs": [{"output_type": "stream", "name": "stdout", "text": [out]}]})
    folder.mkdir(parents=True, exist_ok=True)
    f = folder / "experiment_0.ipynb"
    f.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return f


CONFIG = '''
_meta = dict(round=[dict(role="HUMAN", api_role="HUMAN"), dict(role="BOT", api_role="BOT", generate=True)],
             reserved_roles=[dict(role="SYSTEM", api_role="SYSTEM")])
models = [dict(abbr="api", type="OpenAICompatModel", kind="api", base_url="{url}", model="served", key="EMPTY",
               batch_size=4, backoff_base=0, max_retries=1, meta_template=_meta)]
cibench = dict(
    abbr="cibench_generation/pandas", type="CIBenchDataset", internet_check=False,
    path="data/cibench_dataset/cibench_generation/pandas",
    reader_cfg=dict(input_columns=["questions"], output_column="references", train_split="test",
                    test_split="test"),
    infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template="""{{questions}}"""),
                   retriever=dict(type="ZeroRetriever"),
                   inferencer=dict(type="AgentInferencer", infer_mode="{mode}")),
    eval_cfg=dict(evaluator=dict(type="CIBenchEvaluator"), pred_role="BOT"),
)
datasets = [cibench]
'''


def setup(tmp: Path, url: str, mode: str) -> Path:
    notebook(tmp / "data" / "cibench_dataset" / "cibench_generation" / "pandas")
    cfg = tmp / "eval_cibench.py"
    cfg.write_text(CONFIG.format(url=url, mode=mode))
    return cfg


def run(*args: str):
    return CliRunner().invoke(app, ["run", *args, "--no-progress", "--no-report"])


def sent(srv: StubServer) -> list[list[dict]]:
    return [e["body"]["messages"] for e in srv.log]


def response(text: str) -> dict:
    return {"role": "system", "content": f"Response:{text}\n"}


def stdout_block(text: str) -> str:
    return f"stdout:\n\n```\n{text}\n```"


def error_block(name: str) -> str:
    tb = (f'Traceback (most recent call last):\n  File "<cell>", line 1, in <module>\n'
          f"NameError: name '{name}' is not defined")
    return repr(f"error:\n\n```\n{tb}\n```")


# the model's replies: turn 1 defines nums; turn 2 first fails (a name never defined), then uses nums from turn 1
# (the session keeps it); turn 3 answers without the tool
EVERY = {Q[0]: [act("make the list", "nums = [1, 2, 3]\nprint(sum(nums))")],
         Q[1]: [act("mean", "print(total / 3)"), act("mean again", "print(sum(nums) / len(nums))")],
         Q[2]: ["Thought: easy\nFinal Answer: 42"]}


def test_every_runs_the_code_in_one_session_and_feeds_back_the_observations(tmp_path) -> None:
    work = tmp_path / "w"
    with StubServer(answer=scripted_agent(EVERY)) as srv:
        cfg = setup(tmp_path, srv.url, "every")
        res = run(str(cfg), "-w", str(work), *CODE_EXEC)
        assert res.exit_code == 0, res.output
        got = sent(srv)
        # a rerun sends nothing: every call comes from the response cache (the code runs again)
        res = run(str(cfg), "-w", str(work), *CODE_EXEC)
        assert res.exit_code == 0, res.output
        assert len(sent(srv)) == len(got)
    sys_msg = {"role": "system", "content": SYSTEM}
    u = [{"role": "user", "content": q} for q in Q]
    a = [{"role": "assistant", "content": r} for r in EVERY[Q[0]] + EVERY[Q[1]] + EVERY[Q[2]]]
    turn1 = [u[0], a[0], response(stdout_block("6\n"))]
    # the failed attempt stays within its turn; the session history keeps only the successful reply
    turn2 = [u[1], a[2], response(stdout_block("2.0\n"))]
    assert got == [
        [sys_msg, u[0]],
        [sys_msg, *turn1, u[1]],
        [sys_msg, *turn1, u[1], a[1], response(error_block("total"))],
        [sys_msg, *turn1, *turn2, u[2]],
    ]
    assert all(e["body"]["max_tokens"] == 512 for e in srv.log)  # the reference's agent asks for 512 tokens
    rows = [json.loads(x) for x in (work / "predictions" / "api" / "cibench_generation_pandas.jsonl")
            .read_text().splitlines()]
    assert len(rows) == 1
    row = rows[0]
    assert row["prompt"] == Q  # the reference's origin_prompt
    assert row["prediction"] == [stdout_block("6\n"), stdout_block("2.0\n"), " 42"]  # kept as split, unstripped
    assert row["turn_golds"] == [f"gold thought**split**{c}" for c in GOLD_CODE]
    steps = row["steps"]
    assert [[s["type"] for s in t] for t in steps] == [["IPythonInterpreter"],
                                                       ["IPythonInterpreter", "IPythonInterpreter"],
                                                       ["FinishAction"]]
    assert steps[0][0] == {"type": "IPythonInterpreter",
                           "args": {"text": "```python\nnums = [1, 2, 3]\nprint(sum(nums))\n```",
                                    "extract_code": "nums = [1, 2, 3]\nprint(sum(nums))\n"},
                           "result": {"text": stdout_block("6\n"), "image_path": ""}, "thought": " make the list\n",
                           "state": 0, "errmsg": None, "valid": 0}
    assert steps[1][0]["state"] == -1002 and steps[1][0]["result"] is None
    assert steps[1][0]["errmsg"] == error_block("total")
    assert steps[2][0] == {"type": "FinishAction", "args": {"text": " 42"}, "result": {"text": " 42"},
                           "thought": " easy\n", "state": 0, "errmsg": None, "valid": 1}
    # CIBenchEvaluator: tool used and code ran in turns 1 and 2; the printed output matches the gold in both
    result = json.loads((work / "results" / "api" / "cibench_generation_pandas.json").read_text())
    m = result["metrics"]
    assert m["tool_rate"] == m["executable"] == m["general_correct"] == 2 / 3 * 100
    assert m["vis_sim"] == -1


# every_with_gt: the model's own first cell defines only `other`; the gold cell replayed before turn 2 defines nums
GT = {Q[0]: [act("something else", "other = 5\nprint(other)")],
      Q[1]: [act("mean", "print(sum(nums) / len(nums))")],
      Q[2]: [act("times", "print(6 * 7)")]}


def gold_replay(k: int) -> list[dict]:
    said = ("Thought: gold thought\nAction: IPythonInterpreter\n"
            f"Action Input:```python\n{GOLD_CODE[k]}\n```\n")
    return [{"role": "assistant", "content": said}, response(stdout_block(GOLD_OUT[k]))]


def test_every_with_gt_replays_the_gold_cells_in_the_session(tmp_path) -> None:
    work = tmp_path / "w"
    with StubServer(answer=scripted_agent(GT)) as srv:
        res = run(str(setup(tmp_path, srv.url, "every_with_gt")), "-w", str(work), *CODE_EXEC)
        assert res.exit_code == 0, res.output
        got = sent(srv)
    sys_msg = {"role": "system", "content": SYSTEM}
    u = [{"role": "user", "content": q} for q in Q]
    assert got == [
        [sys_msg, u[0]],
        [sys_msg, u[0], *gold_replay(0), u[1]],
        [sys_msg, u[0], *gold_replay(0), u[1], *gold_replay(1), u[2]],
    ]
    row = json.loads((work / "predictions" / "api" / "cibench_generation_pandas.jsonl").read_text())
    # turn 2's code found nums, defined by the replayed gold cell of turn 1, not by the model's own code
    assert row["prediction"] == [stdout_block("5\n"), stdout_block("2.0\n"), stdout_block("42\n")]
    m = json.loads((work / "results" / "api" / "cibench_generation_pandas.json").read_text())["metrics"]
    assert m["executable"] == m["tool_rate"] == 100
    assert m["general_correct"] == 2 / 3 * 100  # turn 1 printed 5, the gold 6


def test_run_refuses_without_the_flag_before_any_call(tmp_path) -> None:
    with StubServer(answer=scripted_agent(EVERY)) as srv:
        cfg = setup(tmp_path, srv.url, "every")
        res = run(str(cfg), "-w", str(tmp_path / "w"))
        dry = run(str(cfg), "-w", str(tmp_path / "w"), "--dry-run")
        assert srv.total_received == 0
    assert res.exit_code != 0
    assert "[PW630]" in res.output and "--allow-code-exec" in res.output and "infer_mode" in res.output
    # a dry run plans it, says why the run would refuse it, and exits WILL_FAIL (6)
    assert dry.exit_code == 6, dry.output
    assert "refused (PW630)" in dry.output and "--allow-code-exec" in dry.output
    ok = run(str(cfg), "-w", str(tmp_path / "w"), "--dry-run", *CODE_EXEC)
    assert ok.exit_code == 0, ok.output
    assert "agent" in ok.output


def test_view_shows_each_turns_first_call_without_running_anything(tmp_path) -> None:
    cfg = setup(tmp_path, "http://127.0.0.1:9/v1", "every_with_gt")
    res = CliRunner().invoke(app, ["view", str(cfg), "--json"])
    assert res.exit_code == 0, res.output
    assert "Action Input:```python\\nnums = [1, 2, 3]\\nprint(sum(nums))\\n```" in res.output  # gold replay
    assert "<the interpreter's output for turn 1>" in res.output
    assert res.output.count("You are a assistant who can utilize external tools.") == 3  # one per turn
