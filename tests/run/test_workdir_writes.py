"""``run`` writes into a work dir that may hold planted links: none is followed, and a damaged or foreign
``cache.sqlite`` is set aside and rebuilt with a warning.

Runs the toy two-task run against the loopback stand-in server (``openai_stub``).
"""
from __future__ import annotations

import json
import os
import sqlite3
import warnings
from pathlib import Path

import pytest
from toy_run import toy_tasks

from promptweave.errors import PromptweaveWarning, WorkdirLinkError
from promptweave.run import run_tasks
from promptweave.safe_files import atomic_writer, ensure_dir, open_fresh, write_atomic

MARK = "OUTSIDE-UNTOUCHED"


def _target(tmp_path: Path, name: str = "target.txt") -> Path:
    out = tmp_path / "outside"
    out.mkdir(exist_ok=True)
    (out / name).write_text(MARK)
    return out / name


def _run(url: str, work: Path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outs = run_tasks(toy_tasks(url), work, show_progress=False)
    return outs, [str(w.message) for w in caught if issubclass(w.category, PromptweaveWarning)]


def test_a_planted_lock_link_is_refused_and_its_target_kept(stub_server, tmp_path) -> None:
    target = _target(tmp_path)
    work = tmp_path / "w"
    work.mkdir()
    (work / ".lock").symlink_to(target)
    with pytest.raises(WorkdirLinkError) as exc:
        run_tasks(toy_tasks(stub_server.url), work, show_progress=False)
    assert exc.value.code == "PW721" and ".lock" in str(exc.value)
    assert target.read_text() == MARK


def test_a_planted_journal_link_is_replaced_not_followed(stub_server, tmp_path) -> None:
    target = _target(tmp_path)
    work = tmp_path / "w"
    (work / "predictions" / "stub-model").mkdir(parents=True)
    (work / "predictions" / "stub-model" / "toy-gen.jsonl.partial").symlink_to(target)
    (work / "predictions" / "stub-model" / "toy-gen.jsonl").symlink_to(target)
    (work / "results" / "stub-model").mkdir(parents=True)
    (work / "results" / "stub-model" / "toy-gen.json").symlink_to(target)
    outs, _ = _run(stub_server.url, work)
    assert all(o.ok for o in outs)
    assert target.read_text() == MARK
    final = work / "predictions" / "stub-model" / "toy-gen.jsonl"
    assert final.is_file() and not final.is_symlink() and len(final.read_text().splitlines()) == 10
    assert not (work / "results" / "stub-model" / "toy-gen.json").is_symlink()


def test_a_predictions_folder_linked_out_fails_its_tasks_and_writes_nothing_there(stub_server, tmp_path) -> None:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "toy-gen.jsonl.partial").write_text(MARK)  # a file of the journal's name out there: kept too
    work = tmp_path / "w"
    (work / "predictions").mkdir(parents=True)
    (work / "predictions" / "stub-model").symlink_to(out, target_is_directory=True)
    outs, _ = _run(stub_server.url, work)
    assert outs and not any(o.ok for o in outs)
    assert all("[PW721]" in o.error and "symbolic link" in o.error for o in outs)
    assert [p.name for p in out.iterdir()] == ["toy-gen.jsonl.partial"]
    assert (out / "toy-gen.jsonl.partial").read_text() == MARK


@pytest.mark.parametrize("kind", ["garbage", "foreign", "other-columns", "link"])
def test_an_unusable_cache_is_set_aside_and_rebuilt(stub_server, tmp_path, kind) -> None:
    work = tmp_path / "w"
    work.mkdir()
    cache = work / "cache.sqlite"
    target = _target(tmp_path, "db")
    if kind == "garbage":
        cache.write_bytes(b"SQLite format 3\x00" + b"\xfe" * 5000)
    elif kind in ("foreign", "other-columns"):
        con = sqlite3.connect(cache)
        con.execute("CREATE TABLE accounts (id, name)" if kind == "foreign" else "CREATE TABLE responses (key, value)")
        con.commit()
        con.close()
    else:
        cache.symlink_to(target)
    before = cache.read_bytes() if kind != "link" else None
    outs, warned = _run(stub_server.url, work)
    assert all(o.ok for o in outs)
    assert any("not a usable response cache" in w and "moved aside" in w for w in warned), warned
    aside = [p for p in work.iterdir() if p.name.startswith("cache.sqlite.unusable-")]
    assert len(aside) == 1
    if kind == "link":
        assert aside[0].is_symlink() and target.read_text() == MARK
    else:
        assert aside[0].read_bytes() == before
    con = sqlite3.connect(cache)
    assert con.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 26
    con.close()
    # the rebuilt cache answers a rerun: nothing is sent again
    sent = stub_server.total_answered
    outs, warned = _run(stub_server.url, work)
    assert all(o.ok for o in outs) and stub_server.total_answered == sent and not warned


def test_a_damaged_cached_answer_is_asked_again(stub_server, tmp_path) -> None:
    work = tmp_path / "w"
    outs, _ = _run(stub_server.url, work)
    con = sqlite3.connect(work / "cache.sqlite")
    con.execute("UPDATE responses SET response = 'not json' WHERE rowid IN (SELECT rowid FROM responses LIMIT 2)")
    con.commit()
    con.close()
    sent = stub_server.total_answered
    outs, _ = _run(stub_server.url, work)
    assert all(o.ok for o in outs)
    assert stub_server.total_answered == sent + 2


# ---------------------------------------------------------------------- the module every writer goes through
def test_safe_files_refuse_links_below_the_root_and_keep_targets(tmp_path) -> None:
    target = _target(tmp_path)
    root = tmp_path / "w"
    (root / "a").mkdir(parents=True)
    (root / "a" / "link").symlink_to(target.parent, target_is_directory=True)
    with pytest.raises(WorkdirLinkError):
        write_atomic(root / "a" / "link" / "x.json", "{}", root=root)
    with pytest.raises(WorkdirLinkError):
        ensure_dir(root / "a" / "link" / "deeper", root)
    with pytest.raises(WorkdirLinkError):
        write_atomic(root / ".." / "escape.json", "{}", root=root)
    (root / "f.partial").symlink_to(target)
    with open_fresh(root / "f.partial", root=root) as fh:
        fh.write(b"rows")
    assert target.read_text() == MARK and (root / "f.partial").read_bytes() == b"rows"
    with pytest.raises(RuntimeError), atomic_writer(root / "page.html", root=root) as fh:
        fh.write("half")
        raise RuntimeError("stop")
    assert not (root / "page.html").exists()
    assert [p.name for p in root.iterdir() if p.name.endswith(".tmp")] == []
    # the work dir itself may be a link the user chose
    (tmp_path / "chosen").symlink_to(root, target_is_directory=True)
    write_atomic(tmp_path / "chosen" / "results" / "ok.json", "{}", root=tmp_path / "chosen")
    assert (root / "results" / "ok.json").read_text() == "{}"
    assert os.listdir(target.parent) == ["target.txt"]


def test_the_lock_file_must_be_a_regular_file(tmp_path) -> None:
    from promptweave.run.lock import workdir_lock

    work = tmp_path / "w"
    work.mkdir()
    os.mkfifo(work / ".lock")
    with pytest.raises(WorkdirLinkError), workdir_lock(work):
        pass
    (work / ".lock").unlink()
    with workdir_lock(work) as path:
        assert json.loads(path.read_text()) == os.getpid()
