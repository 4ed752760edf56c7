"""``promptweave run`` with max_seq_len and normalizing_str on the tiny local transformers model."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.config import load_config
from promptweave.errors import PromptweaveWarning
from promptweave.infer.ppl import average_nll
from promptweave.models.hf import HFModel
from promptweave.run.plan import plan_config

ROWS = [{"question": f"What is {i} plus {i}?" + " Think it over." * (i % 3), "answer": "ABCD"[i % 4]}
        for i in range(6)]

CONFIG = '''
_ice = "Q: {{question}}\\nA: {{answer}}"
_reader = dict(input_columns=["question"], output_column="answer")
fit_gen = dict(
    abbr="fit-gen", path="rows.jsonl", reader_cfg=_reader,
    infer_cfg=dict(
        ice_template=dict(type="PromptTemplate", template=_ice),
        prompt_template=dict(type="PromptTemplate", template="</E>\\nQ: {{question}}\\nA:", ice_token="</E>"),
        retriever=dict(type="FixKRetriever", fix_id_list=[2, 0, 1, 3]),
        inferencer=dict(type="GenInferencer", max_out_len=2{gen_msl})),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator")),
)
fit_ppl = dict(
    abbr="fit-ppl", path="rows.jsonl", reader_cfg=_reader,
    infer_cfg=dict(
        ice_template=dict(type="PromptTemplate", template=_ice),
        prompt_template=dict(type="PromptTemplate", ice_token="</E>",
                             template={{lab: "</E>\\nQ: {{question}}\\nA: " + lab * (1 + 6 * (lab == "D"))
                                       for lab in "ABCD"}}),
        retriever=dict(type="FixKRetriever", fix_id_list=[2, 0, 1, 3]),
        inferencer=dict(type="PPLInferencer"{ppl_msl})),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator")),
)
norm_ppl = dict(
    abbr="norm-ppl", path="rows.jsonl", reader_cfg=_reader,
    infer_cfg=dict(
        prompt_template=dict(type="PromptTemplate", sep_token="</S>",
                             template={{lab: "Q: {{question}}\\nAnswer:</S> " + lab for lab in "ABCD"}}),
        retriever=dict(type="ZeroRetriever"),
        inferencer=dict(type="PPLInferencer", normalizing_str="Answer:")),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator")),
)
datasets = [fit_gen, fit_ppl, norm_ppl]
models = [dict(abbr="tiny", type="TransformersModel", path="{path}", batch_size=4,
               model_kwargs=dict(torch_dtype="float32", device_map="cpu"))]
'''


def write(folder: Path, model_dir: Path, gen_msl: int | None = None, ppl_msl: int | None = None) -> Path:
    (folder / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    cfg = folder / "config.py"
    cfg.write_text(CONFIG.format(path=model_dir, gen_msl=f", max_seq_len={gen_msl}" if gen_msl else "",
                                 ppl_msl=f", max_seq_len={ppl_msl}" if ppl_msl else ""))
    return cfg


@pytest.fixture(scope="module")
def lm(tiny_model_dir):
    return HFModel(str(tiny_model_dir), device="cpu", dtype="float32")


def preds(work: Path, abbr: str) -> list[dict]:
    return [json.loads(x) for x in (work / "predictions" / "tiny" / f"{abbr}.jsonl").read_text().splitlines()]


def test_run_fits_examples_and_records_kept_ids(tiny_model_dir, lm, tmp_path) -> None:
    # measure the unfitted prompts first, then ask for a budget that keeps only some examples
    full = plan_config(load_config(write(tmp_path, tiny_model_dir)), datasets=[0, 1])
    two_gen = min(lm.count_tokens(r.rendered) for r in full[0].records) - 25
    two_ppl = min(lm.count_tokens(r.rendered) for r in full[1].records) - 25
    cfg = write(tmp_path, tiny_model_dir, gen_msl=two_gen, ppl_msl=two_ppl)
    res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w"), "--no-progress"])
    assert res.exit_code == 0, res.output

    gen = preds(tmp_path / "w", "fit-gen")
    assert len(gen) == len(ROWS)
    for p in gen:
        assert lm.count_tokens(p["prompt"]) <= two_gen
        assert p["retrieved_ids"] == [2, 0, 1, 3]
        assert p["shot_ids"] == [2, 0, 1, 3][:len(p["shot_ids"])] and len(p["shot_ids"]) < 4
        assert p["prompt"].startswith("" if not p["shot_ids"] else "Q: " + ROWS[p["shot_ids"][0]]["question"])
    assert len({len(p["shot_ids"]) for p in gen}) > 1  # longer questions keep fewer examples

    ppl = preds(tmp_path / "w", "fit-ppl")
    for p in ppl:
        n = len(p["shot_ids"])
        assert p["retrieved_ids"] == [2, 0, 1, 3] and n < 4
        for lab, prompt in p["prompt"].items():
            assert lm.count_tokens(prompt) <= two_ppl
            # every label scored after the same examples
            assert prompt.count("\nA: ") == n + 1
            if n:
                assert prompt.startswith("Q: " + ROWS[p["shot_ids"][0]]["question"])


def test_run_normalizing_str(tiny_model_dir, lm, tmp_path) -> None:
    cfg = write(tmp_path, tiny_model_dir)
    res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w"), "-d", "norm-ppl", "--limit", "2",
                                   "--no-progress"])
    assert res.exit_code == 0, res.output
    norm_len = lm.count_tokens("Answer:")
    for p in preds(tmp_path / "w", "norm-ppl"):
        row = ROWS[p["index"]]
        for lab in "ABCD":
            context, answer = f"Q: {row['question']}\nAnswer:", f" {lab}"
            assert p["prompt"][lab] == context + answer  # the sep token is gone
            [full] = lm.score_ids([lm.encode(context + answer)])
            [norm] = lm.score_ids([lm.encode("Answer:" + answer)])
            want = average_nll(full, lm.count_tokens(context)) - average_nll(norm, norm_len)
            assert p["output"][lab] == pytest.approx(want, abs=1e-4)
        assert p["prediction"] == min(p["output"], key=p["output"].get)


def test_http_model_without_tokenizer_is_not_fitted_and_says_so(tmp_path) -> None:
    cfg = write(tmp_path, Path("unused"), gen_msl=10)
    text = cfg.read_text().replace('type="TransformersModel", path="unused"',
                                   'type="OpenAISDK", path="served", base_url="http://127.0.0.1:9/v1"')
    cfg.write_text(text)
    with pytest.warns(PromptweaveWarning, match="no tokenizer") as got:
        [task] = plan_config(load_config(cfg), datasets=[0])
    assert len([w for w in got if "no tokenizer" in str(w.message)]) == 1
    assert all(r.shot_ids == [2, 0, 1, 3] for r in task.records)  # sent as retrieved
