"""``view`` shows the final prompt: chat templates through the tokenizer, max_seq_len fitting as the run does,
token ids per segment, and side-by-side comparison."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from promptweave.cli.app import app
from tests.report.tiny_tokenizer import CHATML, LLAMA3, build_tokenizer

transformers = pytest.importorskip("transformers")
runner = CliRunner()

ROWS = [{"q": "Ada has 23 apples and buys 6 more. How many?", "a": "29"},
        {"q": "Ben has 10 pencils and gives 4 away. How many?", "a": "6"},
        {"q": "Chen packs 3 boxes with 13 stamps each. How many?", "a": "39"},
        {"q": "Dara has 35 marbles and buys 8 more. How many?", "a": "43"}]

CONFIG = """
datasets = [dict(
    abbr="arith", rows={rows},
    reader_cfg=dict(input_columns=["q"], output_column="a", train_range="[0:3]", test_range="[3:]"),
    infer_cfg=dict(
        ice_template=dict(type="PromptTemplate", ice_token="</E>", template=dict(begin="</E>", round=[
            dict(role="HUMAN", prompt="Q: {{q}}"), dict(role="BOT", prompt="{{a}}")])),
        retriever=dict(type="FixKRetriever", fix_id_list=[0, 1, 2]),
        inferencer=dict(type="GenInferencer", max_out_len=8{max_seq_len})),
)]
models = [{models}]
"""
API_META = ('meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"), '
            'dict(role="BOT", api_role="BOT", generate=True)])')
CHATML_META = ('meta_template=dict(begin="<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n", round=['
               'dict(role="HUMAN", begin="<|im_start|>user\\n", end="<|im_end|>\\n"), '
               'dict(role="BOT", begin="<|im_start|>assistant\\n", end="<|im_end|>\\n", generate=True)])')


@pytest.fixture(scope="module")
def toks(tmp_path_factory):
    return {"chatml": build_tokenizer(tmp_path_factory.mktemp("chatml"), CHATML),
            "llama3": build_tokenizer(tmp_path_factory.mktemp("llama3"), LLAMA3)}


def write(tmp_path: Path, models: list[str], max_seq_len: int | None = None) -> Path:
    cfg = tmp_path / "cfg.py"
    cfg.write_text(CONFIG.format(rows=json.dumps(ROWS), models=", ".join(models),
                                 max_seq_len="" if max_seq_len is None else f", max_seq_len={max_seq_len}"))
    return cfg


def chat_model(abbr: str, path: Path, meta: bool = False) -> str:
    return (f'dict(abbr="{abbr}", type="HuggingFacewithChatTemplate", path="{path}", max_out_len=8'
            + (f", {API_META}" if meta else "") + ")")


def expected_messages(shots=(0, 1, 2)) -> list[dict]:
    msgs = []
    for i in shots:
        msgs += [{"role": "user", "content": f"Q: {ROWS[i]['q']}"}, {"role": "assistant", "content": ROWS[i]["a"]}]
    return msgs + [{"role": "user", "content": f"Q: {ROWS[3]['q']}"}]


def view_json(*args) -> list[dict]:
    res = runner.invoke(app, ["view", *map(str, args), "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("kind", ["chatml", "llama3"])
@pytest.mark.parametrize("meta", [False, True])
def test_chat_template_model_shows_the_template_text(tmp_path, toks, kind, meta):
    cfg = write(tmp_path, [chat_model("chat", toks[kind], meta)])
    (rec,) = view_json(cfg)
    tok = transformers.AutoTokenizer.from_pretrained(str(toks[kind]))
    want = tok.apply_chat_template(expected_messages(), tokenize=False, add_generation_prompt=True)
    assert rec["prompt"] == want and rec["chat_template"] is True
    assert rec["chars"] == len(want)
    res = runner.invoke(app, ["view", str(cfg)])
    assert res.exit_code == 0 and "chat template" in res.output
    assert want.rstrip("\n").split("\n")[-1] in res.output


def _count(tok, shots) -> int:
    return len(tok.apply_chat_template(expected_messages(shots), tokenize=True, add_generation_prompt=True,
                                       return_dict=False))


def test_fitting_drops_the_shots_the_run_drops(tmp_path, toks):
    from promptweave.config import load_config
    from promptweave.run.plan import plan_config

    tok = transformers.AutoTokenizer.from_pretrained(str(toks["chatml"]))
    budget = _count(tok, (0, 1, 2)) - 1  # the full prompt does not fit
    cfg = write(tmp_path, [chat_model("chat", toks["chatml"], meta=True)], max_seq_len=budget)
    (rec,) = view_json(cfg)
    kept = rec["shot_ids"]
    assert rec["retrieved_ids"] == [0, 1, 2] and rec["max_seq_len"] == budget
    assert rec["dropped_shot_ids"] and rec["dropped_shot_ids"] == [0, 1, 2][len(kept):]
    assert rec["prompt"] == tok.apply_chat_template(expected_messages(kept), tokenize=False,
                                                    add_generation_prompt=True)
    assert _count(tok, kept) <= budget
    (task,) = plan_config(load_config(cfg), limit=1)
    assert [r.shot_ids for r in task.records] == [kept]  # the same shots as the run sends
    res = runner.invoke(app, ["view", str(cfg)])
    assert (f"fitted to max_seq_len={budget} tokens: kept shots {kept}, dropped {rec['dropped_shot_ids']}"
            in res.output)


def test_tokens_per_segment_add_up_to_the_model_input(tmp_path, toks):
    cfg = write(tmp_path, [chat_model("chat", toks["llama3"], meta=True)])
    (rec,) = view_json(cfg, "--tokens")
    tok = transformers.AutoTokenizer.from_pretrained(str(toks["llama3"]))
    ids = tok.apply_chat_template(expected_messages(), tokenize=True, add_generation_prompt=True, return_dict=False)
    assert rec["token_count"] == len(ids)
    assert [i for s in rec["tokens"] for i in s["ids"]] == list(ids)
    assert "".join(s["text"] for s in rec["tokens"]) == rec["prompt"]
    assert {"tag": "role:assistant", "text": "29"} in [{"tag": s["tag"], "text": s["text"]} for s in rec["tokens"]]
    res = runner.invoke(app, ["view", str(cfg), "--tokens"])
    assert res.exit_code == 0 and f"tokens: {len(ids)}" in res.output


def test_tokens_of_a_text_model_with_meta_template(tmp_path, toks):
    model = f'dict(abbr="lm", type="HuggingFaceCausalLM", path="{toks["chatml"]}", {CHATML_META})'
    (rec,) = view_json(write(tmp_path, [model]), "--tokens")
    tok = transformers.AutoTokenizer.from_pretrained(str(toks["chatml"]))
    assert rec["token_count"] == len(tok(rec["prompt"])["input_ids"])
    assert {s["tag"] for s in rec["tokens"]} >= {"meta", "role:HUMAN", "role:BOT"}


def test_tokens_without_a_tokenizer_say_so(tmp_path):
    model = f'dict(abbr="api", type="OpenAICompatModel", kind="api", base_url="http://x/v1", {API_META})'
    (rec,) = view_json(write(tmp_path, [model]), "--tokens")
    assert rec["tokens"] is None
    res = runner.invoke(app, ["view", str(write(tmp_path, [model])), "--tokens"])
    assert "has no tokenizer here" in res.output


def test_compare_two_models_marks_the_differences(tmp_path, toks):
    cfg = write(tmp_path, [chat_model("qwenish", toks["chatml"]), chat_model("llamaish", toks["llama3"])])
    (rec,) = view_json(cfg, "--compare")
    assert rec["left"] == "qwenish" and rec["right"] == "llamaish" and rec["identical"] is False
    for key, kind in (("left_prompt", "chatml"), ("right_prompt", "llama3")):
        tok = transformers.AutoTokenizer.from_pretrained(str(toks[kind]))
        assert rec[key] == tok.apply_chat_template(expected_messages(), tokenize=False, add_generation_prompt=True)
    res = runner.invoke(app, ["view", str(cfg), "--compare"])
    assert res.exit_code == 0 and "line(s) differ" in res.output
    assert "qwenish" in res.output and "llamaish" in res.output


def test_meta_template_vs_own_chat_template(tmp_path, toks):
    same = f'dict(abbr="same", type="HuggingFaceCausalLM", path="{toks["chatml"]}", {CHATML_META})'
    differs = same.replace('abbr="same"', 'abbr="differs"').replace("You are a helpful assistant.", "Be terse.")
    cfg = write(tmp_path, [same, differs])
    res = runner.invoke(app, ["view", str(cfg)])
    assert res.exit_code == 0
    assert "model differs: its meta_template renders arith row 0 differently" in res.output
    assert "model same:" not in res.output
    (rec,) = view_json(cfg, "--compare", "-m", "same")
    assert rec["identical"] is True and rec["right"] == "same · tokenizer chat template"
    (rec,) = view_json(cfg, "--compare", "-m", "differs")
    assert rec["identical"] is False
    res = runner.invoke(app, ["view", str(cfg), "--compare", "-m", "differs"])
    assert "1 line(s) differ" in res.output


def test_compare_needs_a_chat_template_or_two_models(tmp_path):
    model = f'dict(abbr="api", type="OpenAICompatModel", kind="api", base_url="http://x/v1", {API_META})'
    res = runner.invoke(app, ["view", str(write(tmp_path, [model])), "--compare"])
    assert res.exit_code == 2 and "PW100" in res.output and "tokenizer_path" in res.output


def test_chat_template_model_without_local_tokenizer_warns(tmp_path):
    cfg = write(tmp_path, [chat_model("remote", Path("Qwen/Qwen2.5-0.5B-Instruct"), meta=True)])
    res = runner.invoke(app, ["view", str(cfg)])
    assert res.exit_code == 0
    assert "chat template" in res.output and "tokenizer_path" in res.output
