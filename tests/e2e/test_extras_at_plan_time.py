"""A missing optional package is refused while planning, before any request: ``run``, ``run --dry-run`` and
``lint`` give the same verdict (one typed PW640 line naming the task and the extra to install).

The package is hidden in a child process by a ``sys.meta_path`` finder that refuses it (as an environment
without it would answer), so the test runs whatever this machine has installed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from openai_stub import StubServer

from tests.data import layouts
from tests.e2e.harness import EVAL

SRC = Path(__file__).resolve().parents[2] / "src"

CHILD = textwrap.dedent('''
    import sys

    HIDDEN = set(sys.argv[1].split(","))


    class Refuse:
        """An environment without these packages: their import fails, find_spec says so."""

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in HIDDEN:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None


    sys.meta_path.insert(0, Refuse())
    sys.argv = ["promptweave", *sys.argv[2:]]
    from promptweave.cli.app import main

    main()
''')


def _promptweave(hidden: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", CHILD, hidden, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def _math_config(tmp_path: Path, url: str) -> Path:
    cfg = tmp_path / "eval_math.py"
    cfg.write_text(EVAL.format(package="opencompass.configs.datasets", module="math.math_gen_a58d9d",
                               name="math_datasets", select="math_datasets", url=url), encoding="utf-8")
    return cfg


def test_a_missing_extra_is_refused_at_plan_time_with_nothing_sent(tmp_path, cache):
    layouts.math(cache, [("[q0] 1+1?", "$\\boxed{2}$"), ("[q1] 2+2?", "$\\boxed{4}$")])
    with StubServer(answer=lambda body: "$\\boxed{2}$") as server:
        cfg = _math_config(tmp_path, server.url)
        outs = {name: _promptweave("math_verify", *args, str(cfg), cwd=tmp_path)
                for name, args in (("run", ("run", "-w", str(tmp_path / "work"), "--no-progress")),
                                   ("dry-run", ("run", "--dry-run", "-w", str(tmp_path / "work"))),
                                   ("lint", ("lint",)))}
        assert server.total_received == 0
    for name, out in outs.items():
        text = out.stdout + out.stderr
        assert out.returncode != 0, (name, text)
        assert "[PW640]" in text and "Traceback" not in text, (name, text)
        assert "math_verify" in text and "pip install 'promptweave[math]'" in text, (name, text)
        assert "× stub" in text, (name, text)  # the task is named
    codes = {out.returncode for out in outs.values()}
    assert len(codes) == 1, {n: o.returncode for n, o in outs.items()}  # one verdict, one exit code


def test_with_the_package_the_same_config_plans(tmp_path, cache):
    pytest.importorskip("math_verify")
    layouts.math(cache, [("[q0] 1+1?", "$\\boxed{2}$")])
    cfg = _math_config(tmp_path, "http://127.0.0.1:9/v1")
    out = _promptweave("pw_nothing_hidden", "lint", str(cfg), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


def test_parquet_without_datasets_and_pyarrow_names_the_data_extra(tmp_path, cache):
    """MMLU-Pro's data as the hub lays it out (``data/test-*.parquet``): without ``datasets``/``pyarrow`` the
    error is the missing extra, not "no data files"."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    folder = cache / "data" / "mmlu_pro" / "data"
    folder.mkdir(parents=True)
    row = {"question_id": 0, "question": "[q0] 2+2?", "options": ["3", "4"], "answer": "B", "answer_index": 1,
           "cot_content": "", "category": "math", "src": "x"}
    pq.write_table(pa.Table.from_pylist([row]), folder / "test-00000-of-00001.parquet")
    pq.write_table(pa.Table.from_pylist([row]), folder / "validation-00000-of-00001.parquet")
    cfg = tmp_path / "eval_mmlu_pro.py"
    cfg.write_text(EVAL.format(package="opencompass.configs.datasets", module="mmlu_pro.mmlu_pro_gen_cdbebf",
                               name="mmlu_pro_datasets", select="mmlu_pro_datasets[:1]",
                               url="http://127.0.0.1:9/v1"), encoding="utf-8")
    outs = [_promptweave("datasets,pyarrow", *args, str(cfg), cwd=tmp_path)
            for args in (("lint",), ("run", "--dry-run", "-w", str(tmp_path / "work")))]
    for out in outs:
        text = out.stdout + out.stderr
        assert out.returncode != 0 and "[PW640]" in text, text
        assert "pip install 'promptweave[data]'" in text and "no data files" not in text, text
    assert json.dumps(sorted({o.returncode for o in outs})) and outs[0].returncode == outs[1].returncode
