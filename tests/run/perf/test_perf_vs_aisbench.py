"""The statistics files against AISBench's own calculators: the same per-request figures through both must give
the same CSV and JSON, byte for byte (total stage and steady-state stage). Needs AISBench installed with its
dependencies in a separate venv, named by ``$PROMPTWEAVE_AIS_FULL_VENV``."""
from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
from pathlib import Path

import numpy as np

from promptweave.run.perf.files import csv_text, json_text
from promptweave.run.perf.measure import RequestResult
from promptweave.run.perf.stable import stable_window
from promptweave.run.perf.stats import stage_figures

VENV = os.environ.get("PROMPTWEAVE_AIS_FULL_VENV")
RECORD = Path(__file__).with_name("aisbench_perf_record.json")
"""AISBench's own files for the requests below, recorded from a venv with AISBench and its dependencies; with
``$PROMPTWEAVE_AIS_FULL_VENV`` set the test computes them live, checks the record and (``PROMPTWEAVE_RECORD=1``)
writes it."""

REFERENCE = r'''
import json, sys, tempfile, os
import numpy as np
from ais_bench.benchmark.calculators.default_perf_metric_calculator import DefaultPerfMetricCalculator
from ais_bench.benchmark.calculators.stable_perf_metric_calculator import StablePerfMetricCalculator
d = json.load(sys.stdin)
out = {}
for name, cls in (("total", DefaultPerfMetricCalculator), ("stable", StablePerfMetricCalculator)):
    details = {k: (list(v) if k != "itl" else [np.array(x, dtype=np.float64) for x in v]) for k, v in d["details"].items()}
    if name == "total":  # a failed request is only {"success": false} in AISBench's details
        details["success"] += [False] * d["failed"]
    calc = cls()
    calc._init_datas(details, d["max"])
    calc.calculate()
    path = os.path.join(tempfile.mkdtemp(), "x.csv")
    calc.save_performance(path)
    with open(path, newline="") as f:
        out[name] = {"csv": f.read(), "json": json.dumps(calc.get_common_res(), indent=4, ensure_ascii=False)}
print(json.dumps(out))
'''


def _q(x: float) -> float:
    """A value exact in 4-byte floats (the ITL store keeps gaps as such)."""
    return round(x * 4096) / 4096


def closed_loop_requests(n: int, conc: int, seed: int) -> list[tuple[RequestResult, list[float]]]:
    rng = random.Random(seed)
    free = [0.001 * w for w in range(conc)]
    out = []
    for i in range(n):
        w = min(range(conc), key=lambda k: free[k])
        start = free[w]
        tokens = rng.randint(2, 12)
        ttft = _q(rng.uniform(0.05, 0.3))
        gaps = [_q(rng.uniform(0.01, 0.05)) for _ in range(tokens - 1)]
        e2el = ttft + sum(gaps)
        r = RequestResult(i, start, start + e2el, True, ttft=ttft, e2el=e2el,
                          tpot=(e2el - ttft) / (tokens - 1), itl_count=len(gaps), input_tokens=rng.randint(5, 50),
                          output_tokens=tokens, decoded=True)
        free[w] = start + e2el
        out.append((r, gaps))
    return out


def test_the_files_are_aisbench_s_for_the_same_requests():
    conc = 4
    reqs = closed_loop_requests(60, conc, seed=7)
    ok = [r for r, _ in reqs]
    itl_all = np.array([g for _, gaps in reqs for g in gaps])
    duration = max(r.end for r in ok) - min(r.start for r in ok)
    failed = 3  # counted in the total stage, left out of every statistic
    ours = {"total": stage_figures("total", ok, failed, duration, itl_all, conc)}
    window = stable_window([r.start for r in ok], [r.end for r in ok], conc)
    assert window is not None
    members = [ok[i] for i in window.members]
    ids = {r.index for r in members}
    ours["stable"] = stage_figures("stable", members, 0, window.duration,
                                   np.array([g for r, gaps in reqs if r.index in ids for g in gaps]), conc,
                                   cap_concurrency=True)
    details = {"id": list(range(len(ok))), "success": [True] * len(ok),
               "start_time": [r.start for r in ok], "end_time": [r.end for r in ok],
               "latency": [r.e2el for r in ok], "ttft": [r.ttft for r in ok], "tpot": [r.tpot for r in ok],
               "itl": [gaps for _, gaps in reqs], "input_tokens": [r.input_tokens for r in ok],
               "output_tokens": [r.output_tokens for r in ok],
               "generate_tokens_speed": [r.output_tokens / r.e2el for r in ok]}
    payload = json.dumps({"details": details, "max": conc, "failed": failed}, sort_keys=True)
    digest = hashlib.sha256((payload + REFERENCE).encode()).hexdigest()
    record = json.loads(RECORD.read_text()) if RECORD.is_file() else None
    if VENV and (Path(VENV) / "bin" / "python").exists():
        proc = subprocess.run([str(Path(VENV) / "bin" / "python"), "-c", REFERENCE], input=payload,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        theirs = json.loads(proc.stdout.strip().splitlines()[-1])
        if os.environ.get("PROMPTWEAVE_RECORD") == "1":
            RECORD.write_text(json.dumps({"digest": digest, "files": theirs}, indent=1) + "\n")
        else:
            assert record is not None and record["files"] == theirs, "the record differs from AISBench's own run"
    else:
        assert record is not None and record["digest"] == digest, (
            f"{RECORD.name} is missing or was made from other requests: rerun this test with "
            "PROMPTWEAVE_AIS_FULL_VENV=<venv> PROMPTWEAVE_RECORD=1")
        theirs = record["files"]
    for stage in ("total", "stable"):
        assert csv_text(ours[stage]) == theirs[stage]["csv"], stage
        assert json.loads(json_text(ours[stage])) == json.loads(theirs[stage]["json"]), stage
        assert json_text(ours[stage]) == theirs[stage]["json"], stage
