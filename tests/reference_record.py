"""Recorded answers of the reference implementations (OpenCompass / AISBench installed with their dependencies).

A parity test asks the reference what it gives on the test's own stand-in data (``reference_result``). Where the
reference venv is named (``$PROMPTWEAVE_OC_FULL_VENV`` / ``$PROMPTWEAVE_AIS_FULL_VENV``) the reference runs live
and its answer must equal the record; everywhere else (CI) the recorded answer is used, so the comparison still
runs. A record is keyed by the test's node id and the call's order inside the test, and carries a digest of what
the reference was given (its code, payload and the bytes of every file the payload names, temporary paths
replaced), so a test whose inputs changed fails with "stale" until the record is refreshed:

    PROMPTWEAVE_OC_FULL_VENV=V PROMPTWEAVE_AIS_FULL_VENV=W tools/refresh_reference_fixtures.sh

(``PROMPTWEAVE_RECORD_REFERENCE=1`` makes a live run write its answer instead of checking it;
``PROMPTWEAVE_RECORD_REFERENCE=missing`` runs live only the calls without a current record.)
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

RECORD_FILE = Path(__file__).resolve().parent / "fixtures" / "reference_runs.json"
RECORD_ENV = "PROMPTWEAVE_RECORD_REFERENCE"
REFRESH = "tools/refresh_reference_fixtures.sh (with the reference venvs named; see docs: testing)"

_calls: dict[str, int] = defaultdict(int)


def _load() -> dict[str, Any]:
    if not RECORD_FILE.exists():
        return {}
    return json.loads(RECORD_FILE.read_text(encoding="utf-8"))


def _save(records: dict[str, Any]) -> None:
    RECORD_FILE.parent.mkdir(parents=True, exist_ok=True)
    RECORD_FILE.write_text(json.dumps(records, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                           encoding="utf-8")


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    if path.is_dir():
        for p in sorted(q for q in path.rglob("*") if q.is_file()):
            h.update(p.relative_to(path).as_posix().encode() + b"\0" + _content(p.read_bytes()) + b"\0")
    else:
        h.update(_content(path.read_bytes()))
    return h.hexdigest()[:16]


def _content(data: bytes) -> bytes:
    """A gzip member's header holds its write time: what the reference reads is the decompressed bytes."""
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data)
        except (OSError, EOFError):
            return data
    return data


def _normalise(value: Any, tmp: str) -> Any:
    """Paths the payload names stand for their contents: temporary and install paths differ between machines."""
    if isinstance(value, dict):
        return {str(k): _normalise(v, tmp) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalise(v, tmp) for v in value]
    if isinstance(value, str):
        if value.startswith("/") and len(value) < 4096 and Path(value).exists():
            return "file:" + _file_digest(Path(value))
        return value.replace(tmp, "<tmp>")
    return value


def digest(code: str, payload: Any, tmp: Path) -> str:
    text = json.dumps([code.replace(str(tmp), "<tmp>"), _normalise(payload, str(tmp))], sort_keys=True,
                      ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _key() -> str:
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    node = current.rsplit(" (", 1)[0] or "<outside pytest>"
    _calls[node] += 1
    return f"{node}#{_calls[node]}"


def reference_result(live: Callable[[], Any] | None, *, code: str, payload: Any, tmp: Path, venv_env: str) -> Any:
    """The reference's answer: ``live()`` when the reference venv is named (``live`` is then not None), checked
    against (or, with ``$PROMPTWEAVE_RECORD_REFERENCE``, written to) the record; the record otherwise."""
    key = _key()
    want = digest(code, payload, tmp)
    records = _load()
    mode = os.environ.get(RECORD_ENV, "")
    rec = records.get(key)
    if live is not None and mode == "missing" and rec is not None and rec["digest"] == want:
        return rec["result"]  # an incremental refresh: only what has no current record runs live
    if live is not None:
        got = json.loads(json.dumps(live()))  # what a record would read back
        if mode:
            records[key] = {"digest": want, "result": got, "venv": venv_env}
            _save(records)
        else:
            assert rec is not None and rec["digest"] == want and rec["result"] == got, (
                f"the record for {key} is not what the reference gives now; re-record: {REFRESH}")
        return got
    assert rec is not None, f"no recorded reference answer for {key}: record it with {REFRESH}"
    assert rec["digest"] == want, f"the recorded reference answer for {key} is stale (its inputs changed): {REFRESH}"
    return rec["result"]
