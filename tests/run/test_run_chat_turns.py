"""OpenCompass's ChatInferencer with infer_mode='every' / 'every_with_gt' (the MT-Bench / CompassArena multi-turn
judge configs' form), end to end through ``promptweave run`` against the loopback stand-in OpenAI server
(tests/servers/openai_stub.py), which serves both the evaluated model and the LMEvaluator's judge and records
every request. The expected requests are written out here from the reference's rules."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_stub import Fault, StubServer
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.errors import DataError, PromptweaveWarning, UnsupportedError

USERS = [["Plan a trip.", "Make it cheaper.", "Now in French."],
         ["Write a haiku.", "Shorter please.", "Give it a title."]]
GOLD = [["Go to Rome.", "Take the bus.", "Allez a Rome."],
        ["Leaves fall slowly", "Leaves fall", "Autumn"]]
# the stand-in model's reply, by the message it was last sent
REPLIES = {"Plan a trip.": "Visit Oslo.", "Make it cheaper.": "Hostels.", "Now in French.": "Auberges.",
           "Write a haiku.": "Snow on pine", "Shorter please.": "Snow", "Give it a title.": "Winter"}
JUDGE_REPLY = "Rating: [[7]]"


def _dialogue(users: list[str], golds: list[str]) -> list[dict]:
    out = []
    for q, g in zip(users, golds, strict=True):
        out += [{"role": "user", "content": q}, {"role": "assistant", "content": g}]
    return out


ROWS = [{"dialogue": _dialogue(USERS[i], GOLD[i]), "capability": f"cap{i}", "judge": {"id": i}} for i in range(2)]

CONFIG = '''
_meta = dict(round=[dict(role="HUMAN", api_role="HUMAN"), dict(role="BOT", api_role="BOT", generate=True)])
judge_models = [dict(abbr="judge", type="OpenAICompatModel", kind="api", base_url="{url}", model="judge-model",
                     key="EMPTY", batch_size=4, backoff_base=0, meta_template=_meta)]
models = [dict(abbr="api", type="OpenAICompatModel", kind="api", base_url="{url}", model="served", key="EMPTY",
               batch_size=4, backoff_base=0, max_retries=1, meta_template=_meta)]
mt = dict(
    abbr="mt", path="mt.jsonl", mode="singlescore",
    reader_cfg=dict(input_columns=["dialogue", "capability"], output_column="judge"),
    infer_cfg=dict(
        prompt_template=dict(type="PromptTemplate", template="""{{dialogue}}"""),
        retriever=dict(type="ZeroRetriever"),
        inferencer=dict(type="ChatInferencer", max_seq_len=4096, max_out_len=64, temperature=0.7, do_sample=True,
                        infer_mode="{mode}")),
    eval_cfg=dict(evaluator=dict(
        type="LMEvaluator", {extra}
        prompt_template=dict(type="PromptTemplate", template=dict(round=[dict(role="HUMAN", prompt="{judge}")]))),
        pred_role="BOT"),
)
datasets = [mt]
'''
PER_ROUND = "JUDGE {capability}: {prediction_r1} / {prediction_r2} / {prediction_r3}"  # put in as is
PACKED = "JUDGE {capability}: {prediction}"


def answer(body: dict) -> str:
    if body.get("model") == "judge-model":
        return JUDGE_REPLY
    return REPLIES[body["messages"][-1]["content"]]


def write_config(folder: Path, url: str, mode: str, judge: str, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mt.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    cfg = folder / "config.py"
    cfg.write_text(CONFIG.format(url=url, mode=mode, judge=judge, extra=extra))
    return cfg


def run(*args: str):
    return CliRunner().invoke(app, ["run", *args, "--no-progress"])


def model_requests(srv: StubServer) -> list[list[dict]]:
    return [e["body"]["messages"] for e in srv.log if e["body"].get("model") == "served"]


def judge_prompts(srv: StubServer) -> list[str]:
    return [e["body"]["messages"][-1]["content"] for e in srv.log if e["body"].get("model") == "judge-model"]


def predictions(work: Path) -> list[dict]:
    return [json.loads(x) for x in (work / "predictions" / "api" / "mt.jsonl").read_text().splitlines()]


def expected_requests(history_from: str) -> list[list[dict]]:
    """Request k of each row: the user messages and, before them, the model's replies or the ground truth."""
    out = []
    for i, users in enumerate(USERS):
        for k in range(len(users)):
            msgs = []
            for j in range(k):
                msgs.append({"role": "user", "content": users[j]})
                said = REPLIES[users[j]] if history_from == "model" else GOLD[i][j]
                msgs.append({"role": "assistant", "content": said})
            msgs.append({"role": "user", "content": users[k]})
            out.append(msgs)
    return out


def test_every_sends_the_models_own_replies_and_the_judge_gets_each_round(tmp_path) -> None:
    work = tmp_path / "w"
    with StubServer(answer=answer) as srv:
        res = run(str(write_config(tmp_path, srv.url, "every", PER_ROUND)), "-w", str(work))
        assert res.exit_code == 0, res.output
        sent = model_requests(srv)
        judged = judge_prompts(srv)
        # a second run sends nothing new to the model: every turn comes from the response cache
        res = run(str(write_config(tmp_path, srv.url, "every", PER_ROUND)), "-w", str(work))
        assert res.exit_code == 0, res.output
        assert len(model_requests(srv)) == len(sent)
    assert sorted(map(json.dumps, sent)) == sorted(map(json.dumps, expected_requests("model")))
    assert len(sent) == 6
    rows = predictions(work)
    assert [r["index"] for r in rows] == [0, 1]
    for i, r in enumerate(rows):
        replies = [REPLIES[q] for q in USERS[i]]
        assert r["output"] == replies
        # the reference's dialogue-mode record: one {'round', 'user', 'assistant'} per assistant turn
        assert r["prediction"] == [{"round": n + 1, "user": q, "assistant": REPLIES[q]}
                                   for n, q in enumerate(USERS[i])]
        assert len(r["prompt"]) == 3 and "error" not in r
    assert sorted(judged) == sorted(f"JUDGE cap{i}: " + " / ".join(REPLIES[q] for q in USERS[i]) for i in range(2))


def test_every_with_gt_sends_the_ground_truth_and_stores_the_replies(tmp_path) -> None:
    work = tmp_path / "w"
    with StubServer(answer=answer) as srv:
        cfg = write_config(tmp_path, srv.url, "every_with_gt", PACKED, extra="pack_all_predictions=True,")
        res = run(str(cfg), "-w", str(work))
        assert res.exit_code == 0, res.output
        sent = model_requests(srv)
        judged = judge_prompts(srv)
    assert sorted(map(json.dumps, sent)) == sorted(map(json.dumps, expected_requests("gold")))
    rows = predictions(work)
    for i, r in enumerate(rows):
        replies = [REPLIES[q] for q in USERS[i]]
        assert r["prediction"] == replies and r["output"] == replies
        assert r["turn_golds"] == GOLD[i]
    # pack_all_predictions: the judge sees the whole prediction list as text
    assert sorted(judged) == sorted(f"JUDGE cap{i}: {[REPLIES[q] for q in USERS[i]]!s}" for i in range(2))


def test_a_failed_turn_ends_its_chat_and_the_row_says_why(tmp_path) -> None:
    def faults(key, attempt, body):
        if body.get("model") == "served" and body["messages"][-1]["content"] == "Shorter please.":
            return Fault("status", 400, message="maximum context length exceeded")
        return None

    work = tmp_path / "w"
    with StubServer(answer=answer, faults=faults) as srv:
        with pytest.warns(PromptweaveWarning, match=r"mt: 1 row\(s\) failed and were scored as wrong"):
            res = run(str(write_config(tmp_path, srv.url, "every", PER_ROUND)), "-w", str(work))
        sent = model_requests(srv)
    assert "Traceback" not in res.output
    # row 1 stops after its failed second request: "Give it a title." is never sent
    assert not any(m[-1]["content"] == "Give it a title." for m in sent)
    rows = predictions(work)
    assert "error" not in rows[0] and rows[0]["prediction"][2]["assistant"] == "Auberges."
    assert rows[1]["prediction"] is None and rows[1]["error"]["kind"] == "turn_failed"
    assert "request 1" in rows[1]["error"]["message"] and rows[1]["output"] == ["Snow on pine"]


def test_chat_rows_must_hold_messages(tmp_path) -> None:
    from promptweave.forms.chat_loop import ChatDialogueTemplate

    tpl = ChatDialogueTemplate(["dialogue", "capability"], file="cfg.py")
    with pytest.raises(DataError, match="role") as ei:
        tpl.conversation({"dialogue": [{"role": "robot", "content": "x"}]}, index=3)
    assert ei.value.field == "test[3].dialogue[0]" and "cfg.py" in str(ei.value)
    with pytest.raises(DataError, match="no assistant message"):
        tpl.conversation({"dialogue": [{"role": "user", "content": "x"}]}, index=0)
    with pytest.raises(UnsupportedError, match="several text columns") as ei:
        ChatDialogueTemplate(["question", "answer"], file="cfg.py")
    assert ei.value.field == "reader_cfg.input_columns"


def test_view_shows_each_turns_request(tmp_path) -> None:
    cfg = write_config(tmp_path, "http://127.0.0.1:9/v1", "every", PER_ROUND)
    res = CliRunner().invoke(app, ["view", str(cfg), "--json", "-i", "1"])
    assert res.exit_code == 0, res.output
    recs = [r for r in json.loads(res.stdout) if r["model"] == "api"]
    assert [r["turn"] for r in recs] == [0, 1, 2]
    # the third request: the user messages, the model's earlier replies as placeholders (every mode)
    assert recs[2]["prompt"] == [
        {"role": "HUMAN", "prompt": USERS[1][0]}, {"role": "BOT", "prompt": "<model reply to turn 0>"},
        {"role": "HUMAN", "prompt": USERS[1][1]}, {"role": "BOT", "prompt": "<model reply to turn 1>"},
        {"role": "HUMAN", "prompt": USERS[1][2]}]


def test_an_ice_template_without_ice_token_is_accepted_only_where_no_template_is_read() -> None:
    """SciCode's configs: ChatInferencer every replays the row's chat and reads no template, so OpenCompass
    takes an ice_template without an ice_token there; a GenInferencer would render it and needs one."""
    import pytest as _pytest

    from promptweave.engine.spec import DatasetSpec
    from promptweave.errors import TemplateError

    def cfg(inferencer):
        return {"abbr": "d", "reader_cfg": {"input_columns": ["prompt"], "output_column": None},
                "infer_cfg": {"ice_template": {"type": "PromptTemplate", "template": ""},
                              "retriever": {"type": "ZeroRetriever"}, "inferencer": inferencer}}

    rows = [{"prompt": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x"}]}]
    for mode in ("every", "every_with_gt"):
        DatasetSpec.from_config(cfg({"type": "ChatInferencer", "infer_mode": mode}), train=rows, test=rows)
    for inferencer in ({"type": "GenInferencer"}, {"type": "ChatInferencer", "infer_mode": "last"}):
        with _pytest.raises(TemplateError, match="ice_token"):
            DatasetSpec.from_config(cfg(inferencer), train=rows, test=rows)
