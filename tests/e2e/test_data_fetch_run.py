"""``data fetch`` then ``run``: OpenCompass's gsm8k config, its archive from a loopback mirror at OpenCompass's URL
path, the same score as the data laid out by hand, and not one download during ``run``."""
from __future__ import annotations

import json
import shutil

import pytest
from openai_stub import StubServer

from tests.data import layouts
from tests.data.test_data_fetch import GSM8K_URL_PATH, Mirror, cli, table, zip_of
from tests.e2e.harness import EVAL, OPENCOMPASS, by_marker, result


def test_fetch_then_run_scores_as_with_data_laid_out_by_hand(tmp_path, cache, capsys) -> None:
    gold = ["42", "1,000", "7", "13"]
    replies = {0: "The answer is 42", 1: "The answer is 1000", 2: "The answer is 8", 3: "I cannot tell."}
    layouts.gsm8k(tmp_path / "src", [(f"[q{i}] How many?", f"Work.\n#### {g}") for i, g in enumerate(gold)])
    members = {f"gsm8k/{p.name}": p.read_bytes() for p in (tmp_path / "src/data/gsm8k").iterdir()}
    archive = zip_of(members)
    with StubServer(answer=by_marker(replies)) as server, Mirror({GSM8K_URL_PATH: archive}) as mirror:
        cfg = tmp_path / "eval_gsm8k.py"
        cfg.write_text(EVAL.format(package=OPENCOMPASS, module="gsm8k.gsm8k_gen_1d7fe4", name="gsm8k_datasets",
                                   select="gsm8k_datasets", url=server.url), encoding="utf-8")
        assert cli("run", cfg, "-w", tmp_path / "w0", "--no-progress") != 0  # no data yet
        err = capsys.readouterr().err
        assert "promptweave data fetch" in err
        assert cli("data", "fetch", cfg, "--mirror", mirror.url, "--md5-table", table(tmp_path, gsm8k=archive)) == 0
        fetched = len(mirror.log)
        assert cli("run", cfg, "-w", tmp_path / "w1", "--no-progress") == 0
        assert len(mirror.log) == fetched == 1  # run never downloads
        by_fetch = result(tmp_path / "w1", "gsm8k")["metrics"]["accuracy"]
        shutil.rmtree(cache / "data")
        shutil.copytree(tmp_path / "src/data", cache / "data")
        assert cli("run", cfg, "-w", tmp_path / "w2", "--no-progress") == 0
    assert by_fetch == result(tmp_path / "w2", "gsm8k")["metrics"]["accuracy"] == pytest.approx(50.0)
    assert json.loads((cache / ".promptweave-fetch/manifest.json").read_text())["gsm8k.zip"]["md5"]
