"""``run --dry-run`` estimates what the run sends: requests, prompt tokens (exact with a local tokenizer, else
estimated and marked so), and cost when the model config gives prices per million tokens."""
from __future__ import annotations

import json

import pytest

from promptweave.cli.app import run_cli
from promptweave.config import load_config
from promptweave.run.estimate import estimate
from promptweave.run.plan import plan_config
from tests.report.tiny_tokenizer import build_tokenizer

ROWS = [{"q": f"What is {i} plus {i}?", "a": str(2 * i)} for i in range(7)]
DATASET = ('dict(abbr="sums", path="rows.json", reader_cfg=dict(input_columns=["q"], output_column="a"), '
           'infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template="Q: {q}\\nA:"), '
           'retriever=dict(type="ZeroRetriever"), inferencer=dict(type="GenInferencer", max_out_len=8)))')


def _config(tmp_path, model: str):
    (tmp_path / "rows.json").write_text(json.dumps(ROWS))
    cfg = tmp_path / "cfg.py"
    cfg.write_text(f"datasets = [{DATASET}]\nmodels = [{model}]\n")
    return cfg


def test_exact_tokens_and_cost_with_a_local_tokenizer(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    from transformers import AutoTokenizer

    folder = build_tokenizer(tmp_path / "tok")
    cfg = _config(tmp_path, f'dict(abbr="lm", type="HuggingFaceCausalLM", path={str(folder)!r}, max_out_len=32, '
                            'input_price=2.0, output_price=10.0)')
    tok = AutoTokenizer.from_pretrained(str(folder))
    want = sum(len(tok(f"Q: {r['q']}\nA:")["input_ids"]) for r in ROWS)
    loaded = load_config(cfg)
    [est] = estimate(plan_config(loaded), loaded)
    assert est.exact and est.prompt_tokens == want and est.requests == 7 and est.max_out_len == 8
    assert est.cost == pytest.approx(want / 1e6 * 2.0 + 7 * 8 / 1e6 * 10.0)

    assert run_cli(["run", str(cfg), "--dry-run"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"{want:,}" in out and "exact" in out and "cost (at most)" in out
    assert f"{est.cost:,.4f}" in out
    # both set max_out_len: the plan says which wins
    assert "max_out_len 8 from the inferencer is used, not the model's 32" in out


def test_estimated_without_a_tokenizer(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    cfg = _config(tmp_path, 'dict(abbr="api", type="OpenAISDK", path="m", openai_api_base="http://127.0.0.1:9/v1")')
    loaded = load_config(cfg)
    [est] = estimate(plan_config(loaded), loaded)
    chars = [len(f"Q: {r['q']}\nA:") for r in ROWS]
    assert not est.exact and est.cost is None
    assert est.prompt_tokens == sum(-(-c // 4) for c in chars)
    assert run_cli(["run", str(cfg), "--dry-run"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "estimated" in out and "cost" not in out.split("prompt tokens: exact")[0]


def test_a_bad_price_is_the_same_error_in_lint_and_dry_run(tmp_path, capsys) -> None:
    cfg = _config(tmp_path, 'dict(abbr="api", type="OpenAISDK", path="m", openai_api_base="http://127.0.0.1:9/v1", '
                            'input_price="cheap")')
    assert run_cli(["lint", str(cfg)]) == 2
    lint = capsys.readouterr().out
    assert run_cli(["run", str(cfg), "--dry-run"]) == 2
    dry = capsys.readouterr()
    for out in (lint, dry.out + dry.err):
        assert "models[0].input_price" in " ".join(out.split())


@pytest.mark.parametrize("price", ["10**400", "1e400", "-1e400", "2e9", "-0.5", "True"])
def test_a_price_must_be_a_finite_number(tmp_path, capsys, price) -> None:
    cfg = _config(tmp_path, 'dict(abbr="api", type="OpenAISDK", path="m", openai_api_base="http://127.0.0.1:9/v1", '
                            f'input_price={price})')
    assert run_cli(["run", str(cfg), "--dry-run"]) == 2
    out = capsys.readouterr()
    text = " ".join((out.out + out.err).split())
    assert "[PW723]" in text and "models[0].input_price" in text and "finite number" in text
    assert "[PW001]" not in text


@pytest.mark.parametrize("price", [float("nan"), float("inf"), float("-inf"), 10**400, 1e300])
def test_nan_and_infinite_prices_are_refused(price) -> None:
    from promptweave.errors import PriceError
    from promptweave.run.estimate import prices

    with pytest.raises(PriceError) as err:
        prices({"output_price": price}, file="cfg.py", where="models[0]")
    assert err.value.field == "models[0].output_price"
    assert prices({"input_price": 0, "output_price": 1e9}, file=None, where="m") == (0.0, 1e9)
