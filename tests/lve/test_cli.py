"""``promptweave lve`` commands, end to end on the bundled example folder."""
from __future__ import annotations

import json
import re
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from typer.testing import CliRunner

from promptweave.cli.app import app

EXAMPLE = Path(__file__).parents[2] / "examples" / "lve" / "arithmetic_carry"
runner = CliRunner()


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_show_prints_resolved_prompts():
    res = runner.invoke(app, ["lve", "show", str(EXAMPLE), "--args", "a=12", "--args", "b=30"])
    assert res.exit_code == 0, res.output
    assert "[user] Compute 12 + 30." in res.output
    assert "[system] You are a careful calculator." in res.output
    assert "[assistant -> response] <model reply>" in res.output


def test_show_json_without_args_shows_the_templates():
    res = runner.invoke(app, ["lve", "show", str(EXAMPLE), "--json"])
    data = json.loads(res.stdout)
    assert data["prompts"][0][1]["content"] == "Compute {a} + {b}."


def test_replay_rechecks_recorded_instances_offline():
    res = runner.invoke(app, ["lve", "replay", str(EXAMPLE)])
    assert res.exit_code == 0, res.output
    rows = _lines(res.stdout)
    assert [r["passed"] for r in rows] == [True, True, False]
    assert all(r["agrees"] for r in rows)
    assert "3 instances: 3 agree, 0 disagree" in res.stderr


def test_replay_reports_disagreement(tmp_path):
    folder = tmp_path / "lve"
    shutil.copytree(EXAMPLE, folder)
    inst = folder / "instances" / "instances.jsonl"
    rows = [json.loads(line) for line in inst.read_text().splitlines()]
    rows[0]["passed"] = False  # the recorded verdict is now wrong
    inst.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = runner.invoke(app, ["lve", "replay", str(folder)])
    assert res.exit_code == 0 and "1 disagree" in res.stderr
    assert runner.invoke(app, ["lve", "replay", str(folder), "--strict"]).exit_code == 1


def test_invalid_test_is_reported_with_its_field(tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "test.json").write_text(json.dumps({"description": "d", "model": "openai/gpt-4", "prompt": [
        {"content": "hi {x.__class__}"}], "prompt_parameters": ["x"], "checker_args": {"checker_name": "RefuseChecker"}}))
    res = runner.invoke(app, ["lve", "show", str(folder)])
    assert res.exit_code == 1 and "prompt[0].content" in res.stderr and "attribute or index access" in res.stderr


def test_run_needs_a_model():
    res = runner.invoke(app, ["lve", "run", str(EXAMPLE)])
    assert res.exit_code == 2 and "--base-url" in res.stderr


class _StandInOpenAI(BaseHTTPRequestHandler):
    """A stand-in for a remote OpenAI-compatible service: answers 'Compute a + b.' with the sum."""

    seen: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        numbers = [int(n) for n in re.findall(r"\d+", body["messages"][-1]["content"])]
        reply = {"id": "x", "object": "chat.completion", "model": body.get("model"),
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": f"The sum is {sum(numbers):,}."}}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def test_run_against_an_openai_compatible_server(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StandInOpenAI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _StandInOpenAI.seen.clear()
    try:
        out = tmp_path / "runs.jsonl"
        res = runner.invoke(app, ["lve", "run", str(EXAMPLE), "--base-url", f"http://127.0.0.1:{server.server_port}/v1",
                                  "--model", "stand-in", "--api-key", "k", "--out", str(out)])
        assert res.exit_code == 0, res.output
        rows = _lines(out.read_text())
        assert [r["passed"] for r in rows] == [True, True, True]  # the stand-in adds correctly
        assert rows[1]["response"] == "The sum is 100,000."
        assert _StandInOpenAI.seen[0]["messages"] == [
            {"role": "system", "content": "You are a careful calculator. Answer with the number only."},
            {"role": "user", "content": "Compute 2381 + 4228."}]
    finally:
        server.shutdown()
        server.server_close()
