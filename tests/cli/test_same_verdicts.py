"""``lint``, ``run --dry-run`` and ``run`` give the same verdict on the same bad configs (and ``view`` says so too).

Each config is bad in a way found without calling a model; all three commands go through the same planning
(``run.plan.plan_config`` and ``work.verdicts``), so each must name the same error code.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptweave.cli.app import run_cli
from promptweave.cli.common import ExitCode
from tests.report.tiny_tokenizer import build_tokenizer

ROOT = Path(__file__).resolve().parents[2]

_DATA = ('[{"question": "1+1?", "answer": "2"}, {"question": "2+2?", "answer": "4"}]')
_GEN = ('dict(abbr="arith", path="rows.json", reader_cfg=dict(input_columns=["question"], output_column="answer"), '
        'infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template=dict(round=[dict(role="HUMAN", '
        'prompt="Q: {question}")])), retriever=dict(type="ZeroRetriever"), inferencer=dict(type="GenInferencer", '
        'max_out_len=4)), eval_cfg=dict(evaluator=dict(type="AccEvaluator")))')
_PPL = ('dict(abbr="mc", path="rows.json", reader_cfg=dict(input_columns=["question"], output_column="answer"), '
        'infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template={"2": "Q: {question} 2", '
        '"4": "Q: {question} 4"}), retriever=dict(type="ZeroRetriever"), inferencer=dict(type="PPLInferencer")), '
        'eval_cfg=dict(evaluator=dict(type="AccEvaluator")))')


def _config(tmp_path: Path, dataset: str, model: str) -> Path:
    (tmp_path / "rows.json").write_text(_DATA)
    cfg = tmp_path / "cfg.py"
    cfg.write_text(f"datasets = [{dataset}]\nmodels = [{model}]\n")
    return cfg


def _no_template_model(tmp_path: Path) -> str:
    folder = build_tokenizer(tmp_path / "tok", chat_template=None)
    return f'dict(abbr="chatless", type="HuggingFacewithChatTemplate", path={str(folder)!r})'


# (name, dataset, model, expected code, does the plan stop (2) or refuse the task (dry-run 6, run 1))
CASES = [
    ("no-chat-template", _GEN, None, "PW400", "refused"),
    ("ppl-on-chat-api", _PPL, 'dict(abbr="api", type="OpenAISDK", path="m", openai_api_base="http://127.0.0.1:9/v1")',
     "PW160", "refused"),
    ("unknown-type-typo", _GEN, 'dict(abbr="typo", type="OpenAICompatModle", path="m")', "PW160", "stops"),
    ("unknown-type-case", _GEN, 'dict(abbr="case", type="HuggingFaceCausalLm", path="m")', "PW160", "stops"),
]


def _cli(capsys, *args: str) -> tuple[int, str]:
    code = run_cli(list(args))
    out = capsys.readouterr()
    return code, " ".join((out.out + out.err).split())


@pytest.mark.parametrize("name, dataset, model, code, kind", CASES, ids=[c[0] for c in CASES])
def test_lint_dry_run_and_run_agree(capsys, tmp_path, name, dataset, model, code, kind) -> None:
    cfg = _config(tmp_path, dataset, model or _no_template_model(tmp_path))
    lint_code, lint_out = _cli(capsys, "lint", str(cfg))
    dry_code, dry_out = _cli(capsys, "run", str(cfg), "--dry-run")
    run_code, run_out = _cli(capsys, "run", str(cfg), "-w", str(tmp_path / "w"), "--no-progress", "--no-report")
    view_code, view_out = _cli(capsys, "view", str(cfg))

    assert lint_code == ExitCode.BAD_INPUT and f"[{code}]" in lint_out, lint_out
    assert f"[{code}]" in dry_out and f"[{code}]" in run_out, (dry_out, run_out)
    assert view_code == 0 or f"[{code}]" in view_out  # view renders prompts; it never hides the verdict
    if kind == "stops":
        assert dry_code == run_code == ExitCode.BAD_INPUT
        assert "did you mean" in lint_out and "did you mean" in dry_out
        assert "warning:" in view_out and f"[{code}]" in view_out  # view shows prompts, and warns
    else:
        assert dry_code == ExitCode.WILL_FAIL and "will fail:" in dry_out
        assert run_code == ExitCode.FAILURES
        [result] = (tmp_path / "w" / "results").rglob("*.json")
        assert f"[{code}]" in json.loads(result.read_text())["error"]
    if name == "no-chat-template":
        assert "warning:" in view_out and "no chat_template" in view_out


def test_a_tokenizer_with_a_chat_template_passes(capsys, tmp_path) -> None:
    folder = build_tokenizer(tmp_path / "tok")
    cfg = _config(tmp_path, _GEN, f'dict(abbr="chat", type="HuggingFacewithChatTemplate", path={str(folder)!r})')
    code, out = _cli(capsys, "lint", str(cfg))
    assert code == 0, out
    code, out = _cli(capsys, "run", str(cfg), "--dry-run")
    assert code == 0 and "will fail" not in out, out


def test_combinations_pair_datasets_with_models(capsys, tmp_path) -> None:
    """``model_dataset_combinations`` sends the ppl dataset to the model that can score it: nothing is refused."""
    (tmp_path / "rows.json").write_text(_DATA)
    cfg = tmp_path / "cfg.py"
    cfg.write_text(f"gen = {_GEN}\nmc = {_PPL}\ndatasets = [gen, mc]\n"
                   'lm = dict(abbr="lm", type="HuggingFaceCausalLM", path="m")\n'
                   'api = dict(abbr="api", type="OpenAISDK", path="m", openai_api_base="http://127.0.0.1:9/v1")\n'
                   "models = [lm, api]\n"
                   "model_dataset_combinations = [dict(models=[lm], datasets=[gen, mc]), "
                   "dict(models=[api], datasets=[gen])]\n")
    code, out = _cli(capsys, "run", str(cfg), "--dry-run")
    assert code == 0 and "plan: 3 task(s)" in out and "will fail" not in out, out
    code, out = _cli(capsys, "lint", str(cfg))
    assert code == 0, out
    code, out = _cli(capsys, "view", str(cfg))
    assert code == 0 and "mc × lm" in out and "mc × api" not in out
    bad = cfg.read_text().replace("datasets=[gen])", 'datasets=["nope"])')
    cfg.write_text(bad)
    code, out = _cli(capsys, "lint", str(cfg))
    assert code == ExitCode.BAD_INPUT and "model_dataset_combinations[1].datasets[0]" in out, out


def test_every_bundled_example_passes_lint(capsys) -> None:
    examples = sorted(str(p) for p in (ROOT / "examples").glob("*.py"))
    assert examples
    code, out = _cli(capsys, "lint", *examples)
    assert code == 0, out
    assert f"{len(examples)} file(s): {len(examples)} ok" in out
