"""``promptweave data fetch`` for Hugging Face hub datasets, against a loopback stand-in hub (``fake_hub.py``,
``HF_ENDPOINT=http://127.0.0.1:PORT``): the repo is downloaded with ``huggingface_hub`` into the hub cache at a
pinned revision (recorded in the fetch manifest), a refetch sends no request, an unknown repo is a typed error, and
``run`` / ``lint`` then read the rows offline from the cache."""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptweave.cli.app import run_cli
from promptweave.data.fetch import plan_fetch
from promptweave.data.hub_cache import find_snapshot
from promptweave.data.hub_fetch import HUB_TYPES, hub_id, parse_revisions
from promptweave.errors import DataFetchError
from tests.data.fake_hub import FakeHub

pytest.importorskip("huggingface_hub", reason="data fetch of hub datasets needs huggingface_hub (promptweave[data])")
pytest.importorskip("datasets", reason="reading a hub dataset needs datasets (promptweave[data])")

ROWS = [{"question": f"What is {i} + 0?", "answer": str(i)} for i in range(3)]
REPO = "acme/tiny-sums"


def repo_files(rows: list[dict] = ROWS) -> dict[str, bytes]:
    return {"README.md": b"---\nlicense: mit\n---\n# tiny sums\n",
            "data/test.jsonl": "".join(json.dumps(r) + "\n" for r in rows).encode()}


@pytest.fixture
def hub_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh hub cache and data root; ``HF_HUB_OFFLINE=1`` as ``.ci/run`` exports it (fetch must go online
    anyway, run must not)."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_DATASETS_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("COMPASS_DATA_CACHE", str(tmp_path / "root"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cli(*args: object) -> int:
    return run_cli([str(a) for a in args])


def config(tmp_path: Path, url: str = "http://127.0.0.1:9/v1", **extra: object) -> Path:
    ds = {"abbr": "sums", "path": REPO,
          "reader_cfg": {"input_columns": ["question"], "output_column": "answer", "train_split": "test",
                         "test_split": "test"},
          "infer_cfg": {"prompt_template": {"type": "PromptTemplate",
                                            "template": {"round": [{"role": "HUMAN", "prompt": "{question}"}]}},
                        "retriever": {"type": "ZeroRetriever"},
                        "inferencer": {"type": "GenInferencer", "max_out_len": 8}},
          "eval_cfg": {"evaluator": {"type": "AccEvaluator"}}, **extra}
    model = {"abbr": "stub", "type": "OpenAICompatModel", "kind": "api", "base_url": url, "model": "m",
             "key": "EMPTY", "batch_size": 2, "max_out_len": 8,
             "meta_template": {"round": [{"role": "HUMAN", "api_role": "HUMAN"},
                                         {"role": "BOT", "api_role": "BOT", "generate": True}]}}
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"datasets": [ds], "models": [model]}), encoding="utf-8")
    return cfg


def manifest(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "root/.promptweave-fetch/manifest.json").read_text(encoding="utf-8"))


def test_first_fetch_records_the_commit_and_a_refetch_sends_no_request(hub_env: Path, monkeypatch, capsys) -> None:
    with FakeHub({REPO: repo_files()}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        cfg = config(hub_env)
        assert cli("data", "fetch", cfg) == 0
        commit = hub.commit_of(REPO)
        entry = manifest(hub_env)[f"hf-dataset:{REPO}"]
        assert entry["revision"] == commit and entry["requested"] is None
        assert sorted(entry["files"]) == ["README.md", "data/test.jsonl"]
        snap = hub_env / "hf/hub/datasets--acme--tiny-sums/snapshots" / commit
        assert (snap / "data/test.jsonl").read_bytes() == repo_files()["data/test.jsonl"]
        assert any(path.startswith("/api/datasets/acme/tiny-sums/revision/main") for _, path in hub.log)
        sent = len(hub.log)
        assert cli("data", "fetch", cfg) == 0
        assert len(hub.log) == sent  # recorded and present: not one request
    out = capsys.readouterr().out
    assert f"fetched   {REPO}@{commit}" in out and f"present   {REPO}@{commit}" in out


def test_a_refetch_keeps_the_recorded_commit_when_main_moves(hub_env: Path, monkeypatch) -> None:
    with FakeHub({REPO: repo_files()}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        cfg = config(hub_env)
        assert cli("data", "fetch", cfg) == 0
        first = hub.commit_of(REPO)
        shutil.rmtree(hub_env / "hf")  # the cache is emptied ...
        hub.move_main(REPO, repo_files(ROWS[:1]))  # ... and main moves on
        sent = len(hub.log)
        assert cli("data", "fetch", cfg) == 0
        asked = [p for _, p in hub.log[sent:] if REPO in p]  # the repo's requests (not the client's own)
        assert asked and not any("/revision/" in p for p in asked) and all(first in p for p in asked)
        assert manifest(hub_env)[f"hf-dataset:{REPO}"]["revision"] == first
    snap = hub_env / "hf/hub/datasets--acme--tiny-sums/snapshots" / first
    assert (snap / "data/test.jsonl").read_bytes() == repo_files()["data/test.jsonl"]


def test_an_unknown_repo_is_a_typed_error(hub_env: Path, monkeypatch, capsys) -> None:
    with FakeHub({REPO: repo_files()}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        cfg = config(hub_env)
        cfg.write_text(cfg.read_text().replace(REPO, "acme/no-such-set"))
        assert cli("data", "fetch", cfg) != 0
    err = capsys.readouterr().err
    assert "[PW273]" in err and "acme/no-such-set" in err and "Traceback" not in err


def test_an_unknown_revision_is_a_typed_error(hub_env: Path, monkeypatch, capsys) -> None:
    with FakeHub({REPO: repo_files()}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        assert cli("data", "fetch", config(hub_env), "--revision", f"{REPO}=v9") != 0
    err = capsys.readouterr().err
    assert "[PW274]" in err and "'v9'" in err


def test_an_unreachable_hub_is_a_typed_error(hub_env: Path, monkeypatch, capsys) -> None:
    with FakeHub({}) as hub:
        url = hub.url  # a port that was just ours and is closed now
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "2")
    assert cli("data", "fetch", config(hub_env)) != 0
    err = capsys.readouterr().err
    assert "[PW275]" in err and url in err


def test_a_config_revision_is_the_pin(hub_env: Path, monkeypatch) -> None:
    with FakeHub({REPO: repo_files()}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        commit = hub.commit_of(REPO)
        assert cli("data", "fetch", config(hub_env, revision=commit)) == 0
        # a commit pin needs no resolving: the hub is asked for the tree and files only
        assert not any("/revision/" in p for _, p in hub.log)
        assert manifest(hub_env)[f"hf-dataset:{REPO}"]["requested"] == commit
    assert find_snapshot(REPO, commit) is not None


def test_run_reads_the_fetched_rows_offline(hub_env: Path, monkeypatch, capsys) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "servers"))
    from openai_stub import StubServer

    with FakeHub({REPO: repo_files()}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        with StubServer(answer=lambda body: "1") as server:
            cfg = config(hub_env, url=server.url)
            assert cli("run", cfg, "-w", hub_env / "w0", "--no-progress") != 0  # not fetched: not there
            assert "data fetch" in capsys.readouterr().err
            assert cli("data", "fetch", cfg) == 0
            sent = len(hub.log)
            assert cli("lint", cfg) == 0
            assert "present in the hub cache" in capsys.readouterr().out
            assert cli("run", cfg, "-w", hub_env / "w1", "--no-progress") == 0
            assert len(hub.log) == sent  # run and lint never touch the hub
    preds = hub_env / "w1"
    got = [json.loads(line) for p in sorted(preds.rglob("*.jsonl")) if "sums" in str(p)
           for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert got, sorted(str(p) for p in preds.rglob("*"))
    results = [json.loads(p.read_text()) for p in preds.rglob("*.json") if "sums" in p.name]
    assert any(r.get("metrics", {}).get("accuracy") == pytest.approx(100 / 3) for r in results), results


def test_planning_sorts_hub_ids_from_local_data_and_archives(tmp_path: Path) -> None:
    dss = [{"path": REPO}, {"path": "opencompass/gsm8k"}, {"path": "json", "data_files": "x.jsonl"},
           {"path": "data/x.jsonl"}, {"path": REPO, "type": "opencompass.datasets.HFDataset", "revision": "v1"},
           {"path": "acme/other", "type": "MMLUDataset"}]
    plan = plan_fetch(dss, [f"d{i}" for i in range(len(dss))], data_root=tmp_path,
                      revisions={"acme/other": "x"})
    assert [(r.repo_id, r.revision, r.needs) for r in plan.hub] == [(REPO, None, ["d0"]), (REPO, "v1", ["d4"])]
    assert [a.name for a in plan.archives] == ["gsm8k.zip"]
    assert "HFDataset" in HUB_TYPES and hub_id({"path": "acme/other", "type": "MMLUDataset"}) is None


def test_every_hub_type_is_a_registered_loader_and_a_snapshot_reads_offline(hub_env: Path) -> None:
    """Each class ``data fetch`` treats as hub-reading is a registered loader; a cached snapshot reads by its id."""
    from promptweave.compat.loaders import LOADERS

    assert all(name in LOADERS for name in HUB_TYPES)
    snap = hub_env / "hf/hub/datasets--acme--tiny-sums/snapshots" / ("1" * 40)
    (snap / "data").mkdir(parents=True)
    for name, body in repo_files().items():
        (snap / name).write_bytes(body)
    from promptweave.data.sources import read_hf_named

    got = read_hf_named(REPO)
    assert isinstance(got, dict) and got["test"].rows == ROWS


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(max_size=30), max_size=3))
def test_revision_options_parse_or_fail_typed(values: list[str]) -> None:
    try:
        got = parse_revisions(values)
    except DataFetchError as exc:
        assert exc.code == "PW270" and "--revision" in str(exc)
    else:
        assert len(got) <= len(values)
        assert all("=" in v for v in values)


def test_without_huggingface_hub_the_error_names_the_extra(hub_env: Path) -> None:
    import subprocess

    blocker = hub_env / "blocker/huggingface_hub"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('huggingface_hub is not installed here')\n")
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker.parent), str(src)]),
           "HF_ENDPOINT": "http://127.0.0.1:9"}
    proc = subprocess.run([sys.executable, "-m", "promptweave", "data", "fetch", str(config(hub_env))], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode != 0
    assert "[PW272]" in proc.stderr and "promptweave[data]" in proc.stderr and "Traceback" not in proc.stderr


@settings(deadline=None, max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(repo=st.text(alphabet="ab./-_", min_size=1, max_size=12),
       rev=st.none() | st.text(alphabet="ab./0", min_size=1, max_size=12))
def test_a_snapshot_lookup_stays_inside_the_hub_cache(tmp_path_factory, repo: str, rev: str | None) -> None:
    home = tmp_path_factory.mktemp("hf")
    cache = home / "hub"
    commit = "0" * 40
    for name in ("datasets--a--b", "datasets--a", "outside"):
        (cache / name / "snapshots" / commit).mkdir(parents=True, exist_ok=True)
        (cache / name / "refs").mkdir(exist_ok=True)
        (cache / name / "refs" / "main").write_text(commit)
    (home / "refs-escape").write_text(commit)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_CACHE", str(cache))
        got = find_snapshot(repo, rev)
    if got is not None:
        assert got.resolve().is_relative_to(cache.resolve()) and got.parent.parent.name.startswith("datasets--")
        assert got.name == commit
