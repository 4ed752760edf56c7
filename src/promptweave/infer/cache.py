"""The response cache: one SQLite file (WAL) of finished model calls, keyed by what produced them.

The key hashes the model's identity (backend, name/path/URL, revision, tokenizer and
chat-template hashes), the kind of call, the exact rendered request and the decoding
parameters, so a restarted run re-sends only calls that never finished and a
different model can never read another model's answers.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""

_MEMO_SCHEMA = "CREATE TABLE IF NOT EXISTS memos (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL)"


def _canon(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _canon(dataclasses.asdict(obj))
    if isinstance(obj, Mapping):
        return {str(k): _canon(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_canon(v) for v in obj]
    return obj


def request_key(identity: Mapping[str, Any], kind: str, request: Any, params: Any = None) -> str:
    """The cache key of one model call."""
    text = json.dumps({"model": _canon(identity), "kind": kind, "request": _canon(request),
                       "params": _canon(params)}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: a lone surrogate in the data (invalid UTF-8 text) still hashes, the same way every run
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _dumps(obj: Any) -> str:
    """JSON for a SQLite text column; a lone surrogate (which SQLite cannot store as UTF-8) is \\u-escaped."""
    text = json.dumps(obj, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(obj, ensure_ascii=True)
    return text


class ResponseCache:
    """Finished model calls in a SQLite file; safe to share across threads of one process."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode survives a killed process; only power loss can drop the last commits
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        self.writes = 0  # answers stored by this process (= calls sent and answered, whatever the backend)

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        keys = list(dict.fromkeys(keys))
        found: dict[str, Any] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                marks = ",".join("?" * len(chunk))
                for key, resp in self._db.execute(f"SELECT key, response FROM responses WHERE key IN ({marks})",
                                                  chunk):
                    found[key] = json.loads(resp)
        return found

    def get(self, key: str) -> Any:
        return self.get_many([key]).get(key)

    def put_many(self, items: Iterable[tuple[str, str, str, Any, Any]]) -> None:
        """Store ``(key, model_name, kind, request, response)`` rows in one transaction."""
        now = time.time()
        rows = [(k, m, kind, _dumps(_canon(req)), _dumps(resp), now) for k, m, kind, req, resp in items]
        if not rows:
            return
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO responses VALUES (?,?,?,?,?,?)", rows)
            self._db.execute("COMMIT")
            self.writes += len(rows)

    def put(self, key: str, model_name: str, kind: str, request: Any, response: Any) -> None:
        self.put_many([(key, model_name, kind, request, response)])

    def remember(self, key: str, value: Any) -> None:
        """Keep something the run worked out (a model's identity), not an answer: a table of its own."""
        with self._lock:
            self._db.execute(_MEMO_SCHEMA)
            self._db.execute("INSERT OR REPLACE INTO memos VALUES (?,?,?)", (key, _dumps(_canon(value)), time.time()))

    def recall(self, key: str) -> Any:
        """What :meth:`remember` kept under ``key``, or None (also in a work dir from before memos)."""
        with self._lock:
            try:
                row = self._db.execute("SELECT value FROM memos WHERE key = ?", (key,)).fetchone()
            except sqlite3.OperationalError:  # no memos table yet
                return None
        return json.loads(row[0]) if row else None

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> "ResponseCache":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def stored_answers(path: str | Path) -> int:
    """How many answers a work dir's cache holds (0 when it has none or cannot be read): what a rerun keeps."""
    p = Path(path)
    if not p.is_file() or p.is_symlink():
        return 0
    try:
        db = sqlite3.connect(f"file:{p}?mode=ro", uri=True, timeout=5)
        try:
            row = db.execute("SELECT COUNT(*) FROM responses").fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return 0
    return int(row[0]) if row and isinstance(row[0], int) else 0
