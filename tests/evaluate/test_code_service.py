"""HumanEval-XL through a code evaluation service: completions cleaned per language, posted as the reference
posts them to a real loopback HTTP service (a stand-in that records the upload and answers with metrics)."""
from __future__ import annotations

import json
import threading
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptweave.compat.evaluators import EVALUATORS
from promptweave.errors import CodeExecutionError, EvaluationError
from promptweave.evaluate import EvalContext
from promptweave.evaluate.code_service import clean_up_code
from tests.codebox import CODE_SANDBOX

PY_DECL = "def add(a, b):\n"
JAVA_DECL = "class Solution {\n    public int add(int a, int b) {\n"


def test_python_body_from_a_fenced_reply() -> None:
    reply = "Sure!\n```python\ndef add(a, b):\n    return a + b\n\nprint(add(1, 2))\n```\nDone."
    # the function head (the declaration's last line) is cut and the body ends at the first unindented line
    assert clean_up_code(reply, "python", PY_DECL) == "    return a + b\n"


def test_python_reply_quoted_as_a_literal_is_unquoted_not_run() -> None:
    assert clean_up_code(repr("    return a - b"), "python", PY_DECL) == "    return a - b"
    assert clean_up_code("__import__('os').getcwd()", "python", PY_DECL).endswith("getcwd()")


def test_java_trimmed_at_main_and_closed() -> None:
    reply = ("```java\nclass Solution {\n    public int add(int a, int b) {\n        return a + b;\n    }\n"
             "    public static void main(String[] args) {}\n}\n```")
    out = clean_up_code(reply, "java", JAVA_DECL)
    assert out.startswith("        return a + b;") and "main" not in out
    assert out.count("}") == out.count("{") + 2  # the method and the class are closed


@given(st.text(max_size=80))
def test_cleaning_never_raises(reply: str) -> None:
    for lang in ("python", "java", "javascript"):
        assert isinstance(clean_up_code(reply, lang, PY_DECL), str)


class _Service(BaseHTTPRequestHandler):
    seen: list[dict] = []
    answer = json.dumps(json.dumps({"humanevalx": 50.0}))  # the service JSON-encodes its answer twice

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        msg = BytesParser(policy=HTTP).parsebytes(
            f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode() + body)
        fields = {p.get_param("name", header="content-disposition"): p for p in msg.iter_parts()}
        _Service.seen.append({"path": self.path, "dataset": fields["dataset"].get_content().strip(),
                              "filename": fields["file"].get_filename(),
                              "lines": [json.loads(x) for x in fields["file"].get_content().splitlines() if x]})
        out = self.answer.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *a) -> None:
        pass


@pytest.fixture
def service():
    _Service.seen = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Service)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv.server_address[1]
    srv.shutdown()
    srv.server_close()


def test_posts_like_the_reference_and_reports_the_service_metrics(service) -> None:
    ev = EVALUATORS["PMMEvalHumanEvalXLEvaluator"](language="python", text_language="French",
                                                   ip_address="127.0.0.1", port=service)
    preds = ["```python\ndef add(a, b):\n    return a + b\n```", "    return a * b"]
    s = ev.score(preds, [PY_DECL, PY_DECL], EvalContext(allow_code_exec=True, code_sandbox=CODE_SANDBOX))
    assert s.metrics == {"humanevalx": 50.0}
    (req,) = _Service.seen
    assert req["path"] == "/evaluate" and req["dataset"] == "humanevalx/python"
    assert req["filename"] == "humanevalx_python_French.json"
    assert req["lines"] == [{"task_id": "Python/0", "generation": "    return a + b\n"},
                            {"task_id": "Python/1", "generation": "    return a * b"}]


def test_needs_the_flag_and_a_reachable_service(service) -> None:
    ev = EVALUATORS["PMMEvalHumanEvalXLEvaluator"](language="java", ip_address="127.0.0.1", port=service)
    with pytest.raises(CodeExecutionError, match="--allow-code-exec"):
        ev.score(["x"], [JAVA_DECL], EvalContext())
    assert _Service.seen == []
    dead = EVALUATORS["PMMEvalHumanEvalXLEvaluator"](language="java", ip_address="127.0.0.1", port=1, retry=1)
    with pytest.raises(EvaluationError, match="cannot be reached"):
        dead.score(["x"], [JAVA_DECL], EvalContext(allow_code_exec=True, code_sandbox=CODE_SANDBOX))
    with pytest.raises(EvaluationError, match="programming language"):
        EVALUATORS["PMMEvalHumanEvalXLEvaluator"](language="rust")
