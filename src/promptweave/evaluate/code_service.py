"""OpenCompass's code evaluation service: multi-language code is scored by a service the user runs.

The reference posts a JSONL file of ``{"task_id": "<Language>/<i>", "generation": <code>}`` lines as the
multipart field ``file``, with ``dataset=humanevalx/<language>``, to ``http://<ip>[:<port>]/evaluate``; the
service answers with its metrics (a JSON object, possibly JSON-encoded a second time). Nothing runs locally;
the service executes the model's code, so, like the local sandbox, it is only used with ``--allow-code-exec``.
"""
from __future__ import annotations

import ast
import json
import re
import urllib.error
import urllib.request
import uuid
import warnings
from typing import Any

from promptweave.errors import EvaluationError

SERVICE_DOC = "https://opencompass.readthedocs.io/en/latest/advanced_guides/code_eval_service.html"


def service_url(ip_address: str, port: Any) -> str:
    base = ip_address if "://" in ip_address else f"http://{ip_address}"
    return f"{base}:{port}/evaluate" if port not in ("", None) else f"{base}/evaluate"


def _multipart(fields: dict[str, str], filename: str, payload: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
                 "Content-Type: application/json\r\n\r\n".encode() + payload + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def evaluate_remote(url: str, dataset: str, filename: str, lines: list[dict], *, timeout: float = 600,
                    retry: int = 2) -> dict[str, Any]:
    """POST the generations; the service's metrics as a dict. A refused connection is retried ``retry`` times."""
    payload = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines).encode("utf-8")
    body, ctype = _multipart({"dataset": dataset}, filename, payload)
    last = ""
    for _ in range(max(1, int(retry))):
        req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": ctype})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - the config's own service
                text = resp.read().decode("utf-8", errors="replace")
            break
        except urllib.error.HTTPError as exc:
            raise EvaluationError(f"the code evaluation service at {url} answered HTTP {exc.code}",
                                  field="evaluator", expected=f"a running service for {dataset} ({SERVICE_DOC})"
                                  ) from None
        except (urllib.error.URLError, OSError) as exc:
            last = str(getattr(exc, "reason", exc))
    else:
        raise EvaluationError(f"the code evaluation service at {url} cannot be reached ({last})",
                              field="evaluator.ip_address",
                              expected=f"the service started for {dataset} (see {SERVICE_DOC}); predictions are kept "
                              "in the work dir, re-run to score them")
    try:
        out: Any = json.loads(text)
        if isinstance(out, str):
            out = json.loads(out)
    except ValueError:
        out = None
    if not isinstance(out, dict):
        raise EvaluationError(f"the code evaluation service at {url} did not answer with metrics",
                              field="evaluator", value=text[:200], expected="a JSON object")
    return out


_END_WORDS = ("\ndef", "\nclass", "\n#", "\nassert", '\n"""', "\nprint", "\nif", "\n\n\n")


def _python_body(text: str) -> str:
    from promptweave.compat.postprocessors import POSTPROCESSORS  # HumanEval's rule, found through its suite

    text = "    " + POSTPROCESSORS["humaneval_postprocess_v2"](text).lstrip()
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.strip() and line[0] not in " \t":  # the body ends at the first unindented line
            return "\n".join(lines[:i])
    for w in _END_WORDS:
        if w in text:
            text = text[:text.rfind(w)]
    return text


def _close_at_last_brace(text: str) -> str:
    return text[:text.rfind("}")] + "}" if "}" in text else text


def clean_up_code(text: str, language: str, declaration: str) -> str:
    """The completion the service expects: code taken out of fences, the function head (the declaration's last
    line) and anything after the function dropped, per language as the reference does."""
    try:
        with warnings.catch_warnings():  # odd replies make the parser warn (e.g. '1x'); they are just not literals
            warnings.simplefilter("ignore")
            literal = ast.literal_eval(text)  # replies quoted as a string literal; never evaluated as code
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        literal = None
    if isinstance(literal, str):
        text = literal
    text = text.lstrip("\n")
    if "```" in text:
        blocks = re.findall(r"```(.*?)```", text, re.DOTALL)
        if not blocks:
            text = text.split("```")[1]
        else:
            text = blocks[0]
            if not text.startswith("\n"):  # drop the info string after the opening fence
                text = text[max(text.find("\n") + 1, 0):]
    lang = language.lower()
    if lang == "python":
        text = _python_body(text)
    head = str(declaration).strip().split("\n")[-1]
    if head:
        head = head.strip().strip("{")
        if head in text:
            text = "\n".join(text[text.find(head):].split("\n")[1:])
    if lang == "java":
        main = text.find("public static void main")
        if main != -1:
            text = text[:main] + "}"
        text = _close_at_last_brace(text)
        if text.count("{") + 1 == text.count("}"):
            text += "\n}"
    elif lang == "go":
        if "\nfunc main(" in text:
            text = text[:text.rfind("func main(")]
        text = _close_at_last_brace(text)
    elif lang == "cpp":
        if "\nint main()" in text:
            text = text[:text.rfind("int main()")]
        text = _close_at_last_brace(text)
    elif lang in ("js", "rust"):  # the reference trims 'js' only, not 'javascript'
        text = _close_at_last_brace(text)
    return text
