"""Start-up of a local-model run: a fully cached rerun and ``run --dry-run`` import neither torch nor
transformers (checked in a fresh interpreter); torch's threads follow the CPUs the process may use."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from typer.testing import CliRunner  # noqa: E402

from promptweave.cli.app import app  # noqa: E402
from promptweave.models.threads import available_cpus, cgroup_cpu_quota, choose_threads  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CONFIG = '''
_q = "Question: {{question}}\\nAnswer:"
gen = dict(abbr="qa-gen", path="qa.jsonl", reader_cfg=dict(input_columns=["question"], output_column="answer"),
           infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template=_q),
                          retriever=dict(type="ZeroRetriever"), inferencer=dict(type="GenInferencer", max_out_len=4)),
           eval_cfg=dict(evaluator=dict(type="AccEvaluator")))
ppl = dict(abbr="qa-ppl", path="qa.jsonl", reader_cfg=dict(input_columns=["question"], output_column="answer"),
           infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template={{lab: _q + " " + lab for lab in "AB"}}),
                          retriever=dict(type="ZeroRetriever"), inferencer=dict(type="PPLInferencer")),
           eval_cfg=dict(evaluator=dict(type="AccEvaluator")))
datasets = [gen, ppl]
models = [dict(abbr="tiny", type="TransformersModel", path="{path}", batch_size=4,
               model_kwargs=dict(torch_dtype="float32", device_map="cpu"))]
'''

# runs the CLI in a fresh interpreter, then says which heavy modules it imported
PROBE = """
import runpy, sys
sys.argv = ["promptweave", *sys.argv[1:]]
code = 0
try:
    runpy.run_module("promptweave", run_name="__main__")
except SystemExit as exc:
    code = exc.code or 0
print("IMPORTED=" + ",".join(m for m in ("torch", "transformers") if m in sys.modules))
sys.exit(code)
"""


def _config(tmp_path: Path, model_dir: Path) -> Path:
    rows = [{"question": f"What is {i} plus {i}?", "answer": "A"} for i in range(5)]
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = tmp_path / "config.py"
    cfg.write_text(CONFIG.format(path=model_dir))
    return cfg


def _probe(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env, timeout=600)


def _imported(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("IMPORTED="))[len("IMPORTED="):]


def test_cached_rerun_and_dry_run_import_no_torch(tiny_model_dir, tmp_path) -> None:
    cfg = _config(tmp_path, tiny_model_dir)
    work = tmp_path / "w"
    first = CliRunner().invoke(app, ["run", str(cfg), "-w", str(work), "--no-progress"])
    assert first.exit_code == 0, first.output
    assert [s["sent"] for s in json.loads((work / "summary.json").read_text())] == [5, 10]
    preds = (work / "predictions" / "tiny" / "qa-gen.jsonl").read_text()

    again = _probe("run", str(cfg), "-w", str(work), "--no-progress")
    assert again.returncode == 0, again.stdout + again.stderr
    assert _imported(again.stdout) == ""  # the identity came from the cache; nothing was sent
    assert [s["sent"] for s in json.loads((work / "summary.json").read_text())] == [0, 0]
    assert (work / "predictions" / "tiny" / "qa-gen.jsonl").read_text() == preds

    dry = _probe("run", str(cfg), "-w", str(tmp_path / "dry"), "--dry-run", "--no-progress")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert _imported(dry.stdout) == ""
    assert "batches: tiny: sorted by token length (longest first), at most 4 rows per batch" in dry.stdout


def test_a_changed_tokenizer_file_recomputes_the_identity(tiny_model_dir, tmp_path) -> None:
    import shutil

    from promptweave.infer.cache import ResponseCache
    from promptweave.infer.dispatch import model_identity
    from promptweave.models.hf import HFModel

    folder = tmp_path / "m"
    shutil.copytree(tiny_model_dir, folder)
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        first = model_identity(HFModel(str(folder), device="cpu", dtype="float32"), cache)
        again = HFModel(str(folder), device="cpu", dtype="float32")
        assert model_identity(again, cache) == first and not again._ready  # read back; no tokenizer loaded
        assert cache.writes == 0  # remembering the identity is not an answer sent
        tc = json.loads((folder / "tokenizer_config.json").read_text())
        tc["chat_template"] = "{{ messages }}"
        (folder / "tokenizer_config.json").write_text(json.dumps(tc))
        changed = HFModel(str(folder), device="cpu", dtype="float32")
        got = model_identity(changed, cache)
        assert changed._ready and got["chat_template"] != first["chat_template"]


def test_cpu_quota_from_cgroup_v2_and_v1(tmp_path) -> None:
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert cgroup_cpu_quota(tmp_path) == 1.5
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert cgroup_cpu_quota(tmp_path) is None
    v1 = tmp_path / "v1"
    (v1 / "cpu").mkdir(parents=True)
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("100000\n")
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert cgroup_cpu_quota(v1) == 1.0 and available_cpus(v1) == 1
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    assert available_cpus(v1) == len(os.sched_getaffinity(0))


def test_threads_follow_available_cpus_unless_the_user_chose(monkeypatch) -> None:
    import torch

    before = torch.get_num_threads()
    try:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
        monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
        assert choose_threads(torch, 1) == 1  # the config's num_threads
        assert choose_threads(torch) == available_cpus()
        torch.set_num_threads(available_cpus() + 5)  # the user's own choice before the model loads
        assert choose_threads(torch, imported_before=True) == available_cpus() + 5
        monkeypatch.setenv("OMP_NUM_THREADS", "3")
        torch.set_num_threads(3)
        assert choose_threads(torch) == 3
    finally:
        torch.set_num_threads(before)


ICE_CONFIG = '''
ds = dict(abbr="qa-ice", path="qa.jsonl",
          reader_cfg=dict(input_columns=["question"], output_column="answer", train_split="test"),
          infer_cfg=dict(ice_template=dict(type="PromptTemplate", template="Q: {{question}}\\nA: {{answer}}\\n"),
                         prompt_template=dict(type="PromptTemplate", template="</E>Question: {{question}}\\nAnswer:",
                                              ice_token="</E>"),
                         retriever=dict(type="FixKRetriever", fix_id_list=[0, 1, 2, 3]),
                         inferencer=dict(type="GenInferencer", max_out_len=4, max_seq_len=60)),
          eval_cfg=dict(evaluator=dict(type="AccEvaluator")))
datasets = [ds]
models = [dict(abbr="tiny", type="TransformersModel", path="{path}", batch_size=4,
               model_kwargs=dict(torch_dtype="float32", device_map="cpu"))]
'''


def _ice_config(tmp_path: Path, model_dir: Path) -> Path:
    rows = [{"question": f"What is {i} plus {i}, and {'then some ' * (i % 3)}more?", "answer": str(2 * i)}
            for i in range(6)]
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = tmp_path / "ice.py"
    cfg.write_text(ICE_CONFIG.format(path=model_dir))
    return cfg


def test_dry_run_fitting_in_context_examples_imports_no_torch(tiny_model_dir, tmp_path) -> None:
    cfg = _ice_config(tmp_path, tiny_model_dir)
    dry = _probe("run", str(cfg), "-w", str(tmp_path / "dry"), "--dry-run", "--no-progress")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert _imported(dry.stdout) == ""  # the examples were fitted with tokenizer.json read by tokenizers alone
    lint = _probe("lint", str(cfg))
    assert lint.returncode == 0 and _imported(lint.stdout) == "", lint.stdout + lint.stderr


def test_examples_fitted_without_transformers_are_the_ones_transformers_fits(tiny_model_dir, tmp_path) -> None:
    from transformers import AutoTokenizer

    from promptweave.config import load_config
    from promptweave.models.hf import token_counter
    from promptweave.run.plan import plan_config

    cfg = load_config(_ice_config(tmp_path, tiny_model_dir))
    full = token_counter(AutoTokenizer.from_pretrained(str(tiny_model_dir)))

    def planned(**kw):
        [task] = plan_config(cfg, make_model=lambda m: None, **kw)
        return [(r.rendered, list(r.shot_ids)) for r in task.records]

    light = planned()
    assert light == planned(token_counter=lambda m: full)
    kept = [len(shots) for _, shots in light]
    assert min(kept) < 4 and max(kept) > 0  # max_seq_len dropped examples from some rows, kept some
    assert all(full(p) <= 60 - 4 for p, _ in light)
