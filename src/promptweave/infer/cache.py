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
import os
import sqlite3
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Iterable, Mapping

from promptweave.errors import CacheUnusableError, PromptweaveWarning, WorkdirLinkError
from promptweave.safe_files import check_not_link, no_space

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
# the tables a response cache holds, with their columns in order: anything else is another program's database
_TABLES = {"responses": ["key", "model", "kind", "request", "response", "created"],
           "memos": ["key", "value", "created"]}
_SIDE_FILES = ("-wal", "-shm", "-journal")
_SQLITE_FULL, _SQLITE_CORRUPT, _SQLITE_NOTADB = 13, 11, 26  # SQLite's primary result codes


def _disk_full(path: Path) -> bool:
    """Whether the file system of ``path`` has no block left (SQLite reports some writes on a full disk as
    plain I/O errors)."""
    try:
        st = os.statvfs(path.parent)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 65536


class _Unusable(Exception):
    """The file at the cache's path is no response cache (its reason is the message)."""


def _no_space_or(exc: sqlite3.Error, path: Path) -> Exception:
    """A full disk as :class:`~promptweave.errors.NoSpaceError`; any other SQLite failure as a typed error."""
    code = getattr(exc, "sqlite_errorcode", None)
    if (code is not None and code & 0xFF == _SQLITE_FULL) or "disk is full" in str(exc) or _disk_full(path):
        return no_space(path)
    return CacheUnusableError(f"the response cache failed ({exc})", file=str(path),
                              expected="the file moved aside (the next run rebuilds it), then the same command")


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
        try:
            self._db = self._open()
        except _Unusable as why:
            # a work dir is data: a damaged or foreign file is kept for whoever wants it, and a new cache begins
            aside = self._set_aside()
            warnings.warn(f"{self.path}: not a usable response cache ({why}); moved aside to {aside.name} and "
                          "rebuilt: calls it held are sent again", PromptweaveWarning, stacklevel=2)
            try:
                self._db = self._open()
            except _Unusable as again:
                raise CacheUnusableError(f"the response cache cannot be created ({again})", file=str(self.path),
                                         expected="a writable work dir (-w)") from None
        self.writes = 0  # answers stored by this process (= calls sent and answered, whatever the backend)

    def _open(self) -> sqlite3.Connection:
        """A connection to a checked cache file: no links (SQLite would follow them), the expected tables only."""
        try:
            for suffix in ("", *_SIDE_FILES):
                check_not_link(f"{self.path}{suffix}")
        except WorkdirLinkError as exc:
            raise _Unusable(exc.message) from None
        try:
            db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        except sqlite3.Error as exc:
            raise self._failed(exc) from None
        try:
            # checked before anything is written: another program's database is set aside as it was
            tables = {name: [c[1] for c in db.execute("PRAGMA table_info('{}')".format(name.replace("'", "''")))]
                      for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
            for name, columns in tables.items():
                if _TABLES.get(name) != columns:
                    raise _Unusable(f"it holds a table {name!r} with columns {columns}")
            db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode survives a killed process; only power loss can drop the last commits
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(_SCHEMA)
        except sqlite3.Error as exc:
            db.close()
            raise self._failed(exc) from None
        except _Unusable:
            db.close()
            raise
        return db

    def _failed(self, exc: sqlite3.Error) -> Exception:
        """A damaged file or another program's database is :class:`_Unusable` (set aside); a full disk or an I/O
        failure leaves the file where it is, as a typed error (the cache may be whole: a rerun reuses it)."""
        code = getattr(exc, "sqlite_errorcode", None)
        if code is not None and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
            return _Unusable(str(exc))
        if code is None and ("not a database" in str(exc) or "malformed" in str(exc)):
            return _Unusable(str(exc))
        return _no_space_or(exc, self.path)

    def _set_aside(self) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        aside = self.path.with_name(f"{self.path.name}.unusable-{stamp}")
        n = 0
        while any(Path(f"{aside}{s}").exists() or Path(f"{aside}{s}").is_symlink() for s in ("", *_SIDE_FILES)):
            n += 1
            aside = self.path.with_name(f"{self.path.name}.unusable-{stamp}-{n}")
        for suffix in ("", *_SIDE_FILES):
            src = Path(f"{self.path}{suffix}")
            if src.exists() or src.is_symlink():
                try:
                    os.replace(src, f"{aside}{suffix}")  # a link is renamed itself, its target left alone
                except OSError as exc:
                    raise CacheUnusableError(f"the unusable response cache cannot be moved aside ({exc.strerror})",
                                             file=str(src), expected="the file removed by hand") from None
        return aside

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        keys = list(dict.fromkeys(keys))
        found: dict[str, Any] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                marks = ",".join("?" * len(chunk))
                try:
                    got = self._db.execute(f"SELECT key, response FROM responses WHERE key IN ({marks})",
                                           chunk).fetchall()
                except sqlite3.Error as exc:
                    raise _no_space_or(exc, self.path) from None
                for key, resp in got:
                    try:
                        found[key] = json.loads(resp)
                    except (TypeError, ValueError, RecursionError):
                        continue  # an edited or damaged answer is no answer: the call is sent again
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
            try:
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR REPLACE INTO responses VALUES (?,?,?,?,?,?)", rows)
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise _no_space_or(exc, self.path) from None
            self.writes += len(rows)

    def put(self, key: str, model_name: str, kind: str, request: Any, response: Any) -> None:
        self.put_many([(key, model_name, kind, request, response)])

    def remember(self, key: str, value: Any) -> None:
        """Keep something the run worked out (a model's identity), not an answer: a table of its own."""
        with self._lock:
            try:
                self._db.execute(_MEMO_SCHEMA)
                self._db.execute("INSERT OR REPLACE INTO memos VALUES (?,?,?)",
                                 (key, _dumps(_canon(value)), time.time()))
            except sqlite3.Error as exc:
                raise _no_space_or(exc, self.path) from None

    def recall(self, key: str) -> Any:
        """What :meth:`remember` kept under ``key``, or None (also in a work dir from before memos)."""
        with self._lock:
            try:
                row = self._db.execute("SELECT value FROM memos WHERE key = ?", (key,)).fetchone()
            except sqlite3.OperationalError:  # no memos table yet
                return None
        try:
            return json.loads(row[0]) if row else None
        except (TypeError, ValueError, RecursionError):
            return None  # a damaged memo is worked out again

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
