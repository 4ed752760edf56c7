"""A loopback stand-in for the Hugging Face hub: just the endpoints ``huggingface_hub.snapshot_download`` calls
for a dataset repo (repo info at a revision, the recursive tree listing, ``resolve`` HEAD and GET of each file),
with the headers its downloader reads (``X-Repo-Commit``, ``ETag``, ``Content-Length``) and the ``X-Error-Code``
header it turns into typed errors. Every request is logged, so a test can count them."""
from __future__ import annotations

import hashlib
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeHub:
    """``repos`` maps ``owner/name`` to its files (path -> bytes) at ``main``'s commit (``commit_of``);
    :meth:`move_main` commits new files, and the older commits stay servable by their hash."""

    def __init__(self, repos: dict[str, dict[str, bytes]]) -> None:
        self.repos = repos
        self.older: dict[str, dict[str, dict[str, bytes]]] = {}
        self.log: list[tuple[str, str]] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: object) -> None:
                pass

            def do_HEAD(self) -> None:  # noqa: N802 - the stdlib's name
                hub.log.append(("HEAD", self.path))
                hub.answer(self, head=True)

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                hub.log.append(("GET", self.path))
                hub.answer(self, head=False)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def commit_of(self, repo: str) -> str:
        return _commit(self.repos[repo])

    def move_main(self, repo: str, files: dict[str, bytes]) -> None:
        self.older.setdefault(repo, {})[self.commit_of(repo)] = self.repos[repo]
        self.repos[repo] = files

    def _files_at(self, repo: str, rev: str) -> tuple[str, dict[str, bytes]] | None:
        if rev in ("main", self.commit_of(repo)):
            return self.commit_of(repo), self.repos[repo]
        old = self.older.get(repo, {}).get(rev)
        return (rev, old) if old is not None else None

    def _repo_rev(self, parts: list[str]) -> tuple[str, str, list[str]] | None:
        """``owner/name/<kind>/<rev>/rest...`` -> (repo, rev, rest) for a known repo and revision."""
        for n in (2, 1):
            repo = "/".join(parts[:n])
            if repo in self.repos and len(parts) > n + 1:
                return repo, parts[n + 1], parts[n + 2:]
        return None

    def answer(self, h: BaseHTTPRequestHandler, *, head: bool) -> None:
        url = urllib.parse.urlsplit(h.path)
        parts = [urllib.parse.unquote(p) for p in url.path.strip("/").split("/")]
        if parts[:2] == ["api", "datasets"]:
            found = self._repo_rev(parts[2:])
            if found is None:
                return self._error(h, 404, "RepoNotFound")
            repo, rev, _ = found
            at = self._files_at(repo, rev)
            if at is None:
                return self._error(h, 404, "RevisionNotFound")
            commit, files = at
            kind = parts[2 + repo.count("/") + 1]
            if kind == "revision":
                body = {"id": repo, "sha": commit, "private": False,
                        "siblings": [{"rfilename": p} for p in sorted(files)]}
            else:  # tree
                body = [{"type": "file", "path": p, "size": len(b), "oid": hashlib.sha1(b).hexdigest()}
                        for p, b in sorted(files.items())]
            return self._send(h, 200, json.dumps(body).encode(), {"Content-Type": "application/json"}, head)
        if parts[:1] == ["datasets"]:
            found = self._repo_rev(parts[1:])
            if found is None:
                return self._error(h, 404, "RepoNotFound")
            repo, rev, rest = found
            at = self._files_at(repo, rev)
            if at is None:
                return self._error(h, 404, "RevisionNotFound")
            commit, files = at
            body = files.get("/".join(rest))
            if body is None:
                return self._error(h, 404, "EntryNotFound")
            etag = '"' + hashlib.sha1(body).hexdigest() + '"'
            return self._send(h, 200, body, {"X-Repo-Commit": commit, "ETag": etag}, head)
        return self._error(h, 404, "RepoNotFound")

    def _error(self, h: BaseHTTPRequestHandler, status: int, code: str) -> None:
        self._send(h, status, json.dumps({"error": code}).encode(),
                   {"X-Error-Code": code, "Content-Type": "application/json"}, False)

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str], head: bool) -> None:
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if not head:
            h.wfile.write(body)

    def __enter__(self) -> "FakeHub":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _commit(files: dict[str, bytes]) -> str:
    h = hashlib.sha1(usedforsecurity=False)
    for path, body in sorted(files.items()):
        h.update(path.encode() + b"\0" + body)
    return h.hexdigest()
