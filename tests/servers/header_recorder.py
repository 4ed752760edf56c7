"""A loopback OpenAI-style chat server that records the headers of every request (to see what a run sends).

    with HeaderRecorder() as server:   # server.url -> http://127.0.0.1:PORT/v1, server.seen -> [headers, ...]
        ...
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.server.seen.append({k.lower(): v for k, v in self.headers.items()})  # type: ignore[attr-defined]
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        key = self.server.require  # type: ignore[attr-defined]
        if key is not None and self.headers.get("authorization") != f"Bearer {key}":
            data = json.dumps({"error": {"message": "a valid API key is required", "type": "auth"}}).encode()
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        reply = {"id": "x", "object": "chat.completion", "model": body.get("model", "m"),
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": "2"}}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST

    def log_message(self, *args: Any) -> None:
        pass


class HeaderRecorder:
    """Answers every request with the chat completion "2" and keeps its headers (lower-cased names); with
    ``require``, a request without ``Authorization: Bearer <require>`` gets 401 instead."""

    def __init__(self, require: str | None = None) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.seen = []  # type: ignore[attr-defined]
        self.httpd.require = require  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def seen(self) -> list[dict[str, str]]:
        return self.httpd.seen  # type: ignore[attr-defined]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def __enter__(self) -> HeaderRecorder:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
