"""``promptweave run`` on multi-turn datasets (MultiTurnGenInferencer), end to end through the CLI.

API models talk to the loopback stand-in OpenAI server (a stand-in for a remote vLLM /
llama.cpp service), which records every request it receives; the local model is a real
tiny transformers model built in the test.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from openai_stub import Fault, StubServer
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.errors import PromptweaveWarning

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"

ROWS = [
    {"question": ["3 plus 2?", "Minus 1?"], "answer": ["5", "4"]},
    {"question": ["Name a colour.", "Another one?", "Mix them?"], "answer": ["Red", "Blue", "Purple"]},
    {"question": ["Capital of France?", "And of Italy?"], "answer": ["Paris", "Rome"]},
]
# the stand-in model's replies, by the question it was last asked
REPLIES = {"3 plus 2?": "five", "Minus 1?": "4", "Name a colour.": "Red", "Another one?": "Green",
           "Mix them?": "Yellow", "Capital of France?": "Paris", "And of Italy?": "Rome"}
N_CALLS = 7

CONFIG = '''
chat = dict(
    abbr="chat", path="conversations.jsonl",
    reader_cfg=dict(input_columns=["question", "answer"], output_column="answer"),
    infer_cfg=dict(
        prompt_template=dict(type="MultiTurnPromptTemplate", template=dict(round=[
            dict(role="HUMAN", prompt="{{question}}"), dict(role="BOT", prompt="{{answer}}")])),
        retriever=dict(type="ZeroRetriever"),
        inferencer=dict(type="MultiTurnGenInferencer", infer_mode="{mode}", max_out_len=8)),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator"){eval_extra}),
)
datasets = [chat]
models = [{model}]
'''
API_MODEL = '''dict(abbr="api", type="OpenAICompatModel", kind="api", base_url="{url}", model="served",
              key="EMPTY", batch_size={concurrency}, backoff_base=0, max_retries=1,
              meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                        dict(role="BOT", api_role="BOT", generate=True)]))'''
LOCAL_MODEL = '''dict(abbr="tiny", type="TransformersModel", path="{path}", batch_size=4,
              model_kwargs=dict(torch_dtype="float32", device_map="cpu"),
              meta_template=dict(round=[dict(role="HUMAN", begin="<|im_start|>user\\n", end="<|im_end|>\\n"),
                                        dict(role="BOT", begin="<|im_start|>assistant\\n", end="<|im_end|>\\n",
                                             generate=True)]))'''


def reply(body: dict) -> str:
    return REPLIES[body["messages"][-1]["content"]]


def write_config(folder: Path, model: str, mode: str = "every", eval_extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "conversations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    cfg = folder / "config.py"
    cfg.write_text(CONFIG.format(mode=mode, model=model, eval_extra=eval_extra))
    return cfg


def api(url: str, concurrency: int = 4) -> str:
    return API_MODEL.format(url=url, concurrency=concurrency)


def run(*args: str):
    return CliRunner().invoke(app, ["run", *args, "--no-progress"])


def predictions(work: Path, model: str = "api") -> list[dict]:
    return [json.loads(x) for x in (work / "predictions" / model / "chat.jsonl").read_text().splitlines()]


def result(work: Path, model: str = "api") -> dict:
    return json.loads((work / "results" / model / "chat.json").read_text())


def u(text: str) -> dict:
    return {"role": "user", "content": text}


def a(text: str) -> dict:
    return {"role": "assistant", "content": text}


def sent_messages(srv: StubServer) -> list[list[dict]]:
    return [e["body"]["messages"] for e in srv.log]


# --------------------------------------------------------------------------- every, end to end
def test_every_run_feeds_the_models_own_replies_and_scores_per_turn(tmp_path) -> None:
    with StubServer(answer=reply) as srv:
        cfg = write_config(tmp_path, api(srv.url))
        res = run(str(cfg), "-w", str(tmp_path / "w"))
        assert res.exit_code == 0, res.output
        got = sent_messages(srv)
    # every request's history holds the model's own earlier replies ("five", "Green"), not the answers
    assert sorted(map(json.dumps, got)) == sorted(map(json.dumps, [
        [u("3 plus 2?")], [u("3 plus 2?"), a("five"), u("Minus 1?")],
        [u("Name a colour.")], [u("Name a colour."), a("Red"), u("Another one?")],
        [u("Name a colour."), a("Red"), u("Another one?"), a("Green"), u("Mix them?")],
        [u("Capital of France?")], [u("Capital of France?"), a("Paris"), u("And of Italy?")],
    ]))
    for messages in got:  # and each reply in a history is what the server answered to that history
        for j, m in enumerate(messages):
            if m["role"] == "assistant":
                assert m["content"] == REPLIES[messages[j - 1]["content"]]

    rows = predictions(tmp_path / "w")
    assert [(r["index"], r["turn_id"]) for r in rows] == [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (2, 0), (2, 1)]
    assert rows[1]["prompt"] == [{"role": "HUMAN", "prompt": "3 plus 2?"}, {"role": "BOT", "prompt": "five"},
                                 {"role": "HUMAN", "prompt": "Minus 1?"}]
    assert [r["output"] for r in rows] == ["five", "4", "Red", "Green", "Yellow", "Paris", "Rome"]
    assert [r["gold"] for r in rows] == ["5", "4", "Red", "Blue", "Purple", "Paris", "Rome"]
    assert [r["correct"] for r in rows] == [False, True, True, False, False, True, True]
    assert all(r["success"] for r in rows)

    out = result(tmp_path / "w")
    assert out["mode"] == "multiturn" and out["infer_mode"] == "every" and out["score_per"] == "turn"
    assert out["rows"] == 3 and out["turns"] == 7 and out["failed_conversations"] == []
    assert out["metrics"] == pytest.approx({"accuracy": 400 / 7, "accuracy@turn0": 200 / 3,
                                            "accuracy@turn1": 200 / 3, "accuracy@turn2": 0.0,
                                            "accuracy/conversation": 100 / 3})
    assert "57.14" in res.output


def test_rerun_sends_nothing_and_score_per_conversation_is_chosen_in_eval_cfg(tmp_path) -> None:
    with StubServer(answer=reply) as srv:
        res = run(str(write_config(tmp_path, api(srv.url))), "-w", str(tmp_path / "w"))
        assert res.exit_code == 0, res.output
        cfg = write_config(tmp_path, api(srv.url), eval_extra=', score_per="conversation", '
                                                              'conversation_reduce="mean"')
        res = run(str(cfg), "-w", str(tmp_path / "w"))
        assert res.exit_code == 0, res.output
        assert srv.total_received == N_CALLS  # every call of the second run came from the cache
    out = result(tmp_path / "w")
    assert out["score_per"] == "conversation"
    # mean of each conversation's share of correct turns: (1/2 + 1/3 + 2/2) / 3
    assert out["metrics"]["accuracy"] == pytest.approx(100 * (0.5 + 1 / 3 + 1) / 3)
    assert out["metrics"]["accuracy/turn"] == pytest.approx(400 / 7)


def test_bad_score_per_is_a_config_error_naming_the_field(tmp_path) -> None:
    cfg = write_config(tmp_path, api("http://127.0.0.1:9/v1"), eval_extra=', score_per="row"')
    res = run(str(cfg), "-w", str(tmp_path / "w"))
    assert res.exit_code != 0
    text = " ".join(res.output.split())
    assert "datasets[0].eval_cfg.score_per" in text and "'row'" in text


# --------------------------------------------------------------------------- request shapes per mode
def test_every_with_gt_and_last_request_shapes(tmp_path) -> None:
    with StubServer(answer=reply) as srv:
        res = run(str(write_config(tmp_path / "gt", api(srv.url), mode="every_with_gt")), "-w", str(tmp_path / "w1"))
        assert res.exit_code == 0, res.output
        gt = sent_messages(srv)
        srv.log.clear()
        res = run(str(write_config(tmp_path / "last", api(srv.url), mode="last")), "-w", str(tmp_path / "w2"))
        assert res.exit_code == 0, res.output
        last = sent_messages(srv)
    # every_with_gt: one call per turn, the history holds the reference answers
    assert sorted(map(json.dumps, gt)) == sorted(map(json.dumps, [
        [u("3 plus 2?")], [u("3 plus 2?"), a("5"), u("Minus 1?")],
        [u("Name a colour.")], [u("Name a colour."), a("Red"), u("Another one?")],
        [u("Name a colour."), a("Red"), u("Another one?"), a("Blue"), u("Mix them?")],
        [u("Capital of France?")], [u("Capital of France?"), a("Paris"), u("And of Italy?")],
    ]))
    # last: one call per conversation, every reference answer but the last
    assert sorted(map(json.dumps, last)) == sorted(map(json.dumps, [
        [u("3 plus 2?"), a("5"), u("Minus 1?")],
        [u("Name a colour."), a("Red"), u("Another one?"), a("Blue"), u("Mix them?")],
        [u("Capital of France?"), a("Paris"), u("And of Italy?")],
    ]))
    rows = predictions(tmp_path / "w2")
    assert [(r["index"], r["turn_id"], r["gold"], r["correct"]) for r in rows] == [
        (0, 0, "4", True), (1, 0, "Purple", False), (2, 0, "Rome", True)]
    assert result(tmp_path / "w2")["metrics"]["accuracy"] == pytest.approx(200 / 3)
    assert result(tmp_path / "w1")["metrics"]["accuracy@turn1"] == pytest.approx(200 / 3)


# --------------------------------------------------------------------------- failures
def test_a_failed_request_ends_only_its_conversation_and_a_rerun_retries_it(tmp_path) -> None:
    def plan(key, attempt, body):  # one request is refused: say, past the server's context length
        if body["messages"][-1]["content"] == "Another one?":
            return Fault("status", 400, message="maximum context length exceeded")
        return None

    work = tmp_path / "w"
    with StubServer(answer=reply, faults=plan) as srv:
        cfg = write_config(tmp_path, api(srv.url))
        with pytest.warns(PromptweaveWarning, match="1 conversation"):
            res = run(str(cfg), "-w", str(work))
        assert res.exit_code == 3, res.output  # finished with failed rows (ExitCode.FAILED_ROWS): a rerun retries them
        assert "partial" in res.output
        asked = [m[-1]["content"] for m in sent_messages(srv)]
        assert "Mix them?" not in asked  # the conversation ended at the failed request
        # the failed batch is sent again one request at a time (what was in flight with it, and the failing
        # request itself), so no request goes out more than twice
        assert all(n <= 2 for n in srv.received.values())
        rows = predictions(work)
        assert [(r["index"], r["turn_id"], r["success"]) for r in rows] == [
            (0, 0, True), (0, 1, True), (1, 0, True), (1, 1, False), (1, 2, False), (2, 0, True), (2, 1, True)]
        assert "HTTP 400" in rows[3]["error"] and "context length" in rows[3]["error"]
        assert rows[3]["prompt"] == [{"role": "HUMAN", "prompt": "Name a colour."},
                                     {"role": "BOT", "prompt": "Red"}, {"role": "HUMAN", "prompt": "Another one?"}]
        assert rows[4]["prompt"] is None and rows[4]["error"].startswith("not sent")
        assert not rows[3]["correct"] and not rows[4]["correct"]
        out = result(work)
        assert out["status"] == "partial"  # a conversation ended on a failed request: never "done"
        assert [(f["index"], f["turn_id"]) for f in out["failed_conversations"]] == [(1, 1)]
        assert out["metrics"]["accuracy"] == pytest.approx(400 / 7)  # failed and unsent turns are wrong

        srv.faults = None  # the server is fixed: the same command finishes the conversation
        srv.log.clear()
        res = run(str(cfg), "-w", str(work))
        assert res.exit_code == 0, res.output
        # only the unfinished conversation's two calls went out; everything else came from the cache
        assert [m[-1]["content"] for m in sent_messages(srv)] == ["Another one?", "Mix them?"]
    assert all(r["success"] for r in predictions(work)) and result(work)["failed_conversations"] == []


def test_a_rejected_key_stops_the_task_instead_of_failing_each_conversation(tmp_path) -> None:
    with StubServer(faults=lambda k, a, b: Fault("status", 401, message="Incorrect API key")) as srv:
        res = run(str(write_config(tmp_path, api(srv.url, concurrency=1))), "-w", str(tmp_path / "w"))
        assert res.exit_code == 1
        assert srv.total_received == 1  # the first refusal stops the task
    out = result(tmp_path / "w")
    assert out["status"] == "failed" and "401" in out["error"] and "API key" in out["error"]
    assert not (tmp_path / "w" / "predictions" / "api" / "chat.jsonl").exists()


# --------------------------------------------------------------------------- kill and resume
def _spawn(cfg: Path, work: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.Popen([sys.executable, "-m", "promptweave", "run", str(cfg), "-w", str(work), "--no-progress"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def test_killed_multiturn_run_resumes_without_resending_finished_calls(tmp_path) -> None:
    with StubServer(answer=reply) as ref:
        cfg = write_config(tmp_path / "ref", api(ref.url, concurrency=1))
        proc = _spawn(cfg, tmp_path / "ref" / "w")
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out.decode()
    expected = predictions(tmp_path / "ref" / "w")

    work = tmp_path / "resumed" / "w"
    kills = 0
    with StubServer(answer=reply) as srv:
        cfg = write_config(tmp_path / "resumed", api(srv.url, concurrency=1))
        # kill points: inside the first wave of calls, then inside the second (whose histories hold replies)
        for hold_after in (2, 5):
            srv.hold_after = hold_after
            srv.held.clear()
            proc = _spawn(cfg, work)
            assert srv.held.wait(timeout=120), "the run never reached the kill point"
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=30)
            kills += 1
        assert not (work / "predictions").exists()
        srv.hold_after = None
        proc = _spawn(cfg, work)
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out.decode()
        assert len(srv.answered) == N_CALLS and max(srv.answered.values()) == 1
        # only the request held in flight at each kill was sent a second time
        assert srv.total_received == N_CALLS + kills
        assert sorted(srv.received.values()).count(2) == kills
    assert predictions(work) == expected


# --------------------------------------------------------------------------- a local text model
def test_local_text_model_every_history_holds_its_own_replies(tiny_model_dir, tmp_path) -> None:
    cfg = write_config(tmp_path, LOCAL_MODEL.format(path=tiny_model_dir))
    res = run(str(cfg), "-w", str(tmp_path / "w"), "--limit", "2")
    assert res.exit_code == 0, res.output
    rows = predictions(tmp_path / "w", "tiny")
    assert [(r["index"], r["turn_id"]) for r in rows] == [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)]
    assert rows[0]["prompt"] == "<|im_start|>user\n3 plus 2?<|im_end|>\n<|im_start|>assistant\n"
    for prev, cur in ((rows[0], rows[1]), (rows[2], rows[3]), (rows[3], rows[4])):
        assert isinstance(cur["prompt"], str)
        assert cur["prompt"].startswith(prev["prompt"] + prev["output"] + "<|im_end|>\n<|im_start|>user\n")
    before = (tmp_path / "w" / "predictions" / "tiny" / "chat.jsonl").read_text()
    cache_rows = _cache_rows(tmp_path / "w")
    assert cache_rows == 5
    res = run(str(cfg), "-w", str(tmp_path / "w"), "--limit", "2")  # resumed: every call from the cache
    assert res.exit_code == 0, res.output
    assert _cache_rows(tmp_path / "w") == cache_rows
    assert (tmp_path / "w" / "predictions" / "tiny" / "chat.jsonl").read_text() == before


def _cache_rows(work: Path) -> int:
    import sqlite3

    with sqlite3.connect(str(work / "cache.sqlite")) as db:
        return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def test_text_model_over_http_gets_the_rendered_history_with_its_own_replies(tmp_path) -> None:
    model = LOCAL_MODEL.replace('type="TransformersModel", path="{path}"', 'type="OpenAICompatModel", kind="lm", '
                                'base_url="{url}", model="served", backoff_base=0').replace(
        'model_kwargs=dict(torch_dtype="float32", device_map="cpu"),', '')

    def complete(body: dict) -> str:  # the question of the last user turn in the text prompt
        return REPLIES[body["prompt"].rsplit("<|im_start|>user\n", 1)[1].split("<|im_end|>", 1)[0]]

    with StubServer(answer=complete) as srv:
        res = run(str(write_config(tmp_path, model.format(url=srv.url))), "-w", str(tmp_path / "w"), "--limit", "1")
        assert res.exit_code == 0, res.output
        prompts = sorted(e["body"]["prompt"] for e in srv.log)
        assert {e["path"] for e in srv.log} == {"/v1/completions"}
    assert prompts == [
        "<|im_start|>user\n3 plus 2?<|im_end|>\n<|im_start|>assistant\n",
        "<|im_start|>user\n3 plus 2?<|im_end|>\n<|im_start|>assistant\nfive<|im_end|>\n"
        "<|im_start|>user\nMinus 1?<|im_end|>\n<|im_start|>assistant\n",
    ]
    assert [r["correct"] for r in predictions(tmp_path / "w", "tiny")] == [False, True]
