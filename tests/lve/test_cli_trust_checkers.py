"""``--trust-checkers`` on the command line: a test folder's own ``checker/checker.py`` is refused without it (a
typed error naming the flag, nothing run) and runs with it, for ``lve replay`` and ``lve run``."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from typer.testing import CliRunner

from promptweave.cli.app import app
from tests.lve.lve_helpers import base_test

runner = CliRunner()

CUSTOM = '''
from lve.checkers.base import BaseChecker


class StartsWith(BaseChecker):
    def __init__(self, prefix):
        super().__init__()
        self.prefix = prefix

    def is_safe(self, prompt_out, param_values=None):
        return not self.extract_response_from_prompt(prompt_out).startswith(self.prefix)
'''


def _folder(make_lve):
    instances = [{"args": {"p": "bad"}, "response": "bad words", "passed": False},
                 {"args": {"p": "bad"}, "response": "fine words", "passed": True}]
    return make_lve(base_test(prompt=[{"content": "q {p}"}], prompt_parameters=["p"],
                              checker_args={"checker_name": "StartsWith", "prefix": "{p}"}),
                    files={"checker/checker.py": CUSTOM,
                           "instances/instances.jsonl": "".join(json.dumps(i) + "\n" for i in instances)})


def test_replay_runs_a_custom_checker_only_with_the_flag(make_lve):
    folder = _folder(make_lve)
    refused = runner.invoke(app, ["lve", "replay", str(folder)])
    assert refused.exit_code == 1
    assert "--trust-checkers" in refused.stderr and "Traceback" not in refused.output
    trusted = runner.invoke(app, ["lve", "replay", str(folder), "--trust-checkers"])
    assert trusted.exit_code == 0, trusted.output
    rows = [json.loads(line) for line in trusted.stdout.splitlines() if line.startswith("{")]
    assert [r["passed"] for r in rows] == [False, True] and all(r["agrees"] for r in rows)
    assert "2 instances: 2 agree, 0 disagree" in trusted.stderr


class _Replies(BaseHTTPRequestHandler):
    """A stand-in chat endpoint answering every request with ``reply``."""

    reply = "bad answer"

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        data = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": self.reply}}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def test_run_runs_a_custom_checker_only_with_the_flag(make_lve):
    folder = _folder(make_lve)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Replies)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = ["lve", "run", str(folder), "--base-url", f"http://127.0.0.1:{server.server_port}/v1", "--model", "m",
            "--api-key", "k", "--args", "p=bad"]
    try:
        refused = runner.invoke(app, base)
        trusted = runner.invoke(app, [*base, "--trust-checkers"])
    finally:
        server.shutdown()
        server.server_close()
    assert refused.exit_code == 1 and "--trust-checkers" in refused.stderr
    assert "0 runs, 1 errors" in refused.stderr
    assert trusted.exit_code == 0, trusted.output
    (row,) = [json.loads(line) for line in trusted.stdout.splitlines() if line.startswith("{")]
    assert row["response"] == "bad answer" and row["passed"] is False  # the custom checker judged it
