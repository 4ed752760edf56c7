"""Fitting in-context examples into max_seq_len with a real tiny tokenizer, and normalizing_str records."""
from __future__ import annotations

import warnings

import pytest

from promptweave.engine.fit import ShotFitter
from promptweave.errors import ConfigError, ModelError, PromptweaveWarning, TemplateError
from promptweave.infer import infer_ppl
from promptweave.infer.ppl import average_nll
from promptweave.models.base import GenerationParams
from promptweave.models.factory import load_token_counter
from promptweave.models.hf import HFModel, token_counter
from promptweave.run.plan import prompt_budget
from tests.helpers import API_META, CHATML, make_builder

TRAIN = [{"question": f"What is {i} plus {i}?" + " Think about it." * (i % 3), "answer": str(2 * i)}
         for i in range(8)]
TEST = [{"question": "What is the capital of France?" + " Explain." * k, "answer": "Paris"} for k in range(6)]
IDS = [3, 1, 4, 0, 2]


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tiny_model_dir))


class Recorder:
    """The real tokenizer counter, remembering what it was asked to count."""

    def __init__(self, tokenizer) -> None:
        self.count = token_counter(tokenizer)
        self.seen: list = []

    def __call__(self, rendered) -> int:
        self.seen.append(rendered)
        return self.count(rendered)


def cfg(mode="gen", ice=None, prompt=None, labels=None, **inf):
    c = {"ice_template": {"type": "PromptTemplate", **(ice or {"template": "Q: {question}\nA: {answer}"})},
         "prompt_template": {"type": "PromptTemplate", "ice_token": "</E>",
                             **(prompt or {"template": "</E>\nQ: {question}\nA:"})},
         "retriever": {"type": "FixKRetriever", "fix_id_list": IDS},
         "inferencer": {"type": "PPLInferencer" if mode == "ppl" else "GenInferencer", **inf}}
    if labels is not None:
        c["inferencer"]["labels"] = labels
    return c


def builder(c, **kw):
    return make_builder(c, TEST, train=TRAIN, **kw)


def test_gen_prompts_fit_and_examples_go_from_the_end(tokenizer) -> None:
    count = token_counter(tokenizer)
    b = builder(cfg())
    full = [count(b.build(i).rendered) for i in range(len(TEST))]
    budget = (min(full) + count(b.build(0, ids=IDS[:2]).rendered)) // 2  # a few examples must go
    fitter = ShotFitter(b, count, budget)
    recs = fitter.build_all(range(len(TEST)))
    kept_counts = set()
    for r in recs:
        n = count(r.rendered)
        assert n <= budget
        assert r.shot_ids == IDS[:len(r.shot_ids)]  # a leading run: dropped from the end
        assert r.rendered == b.build(r.index, ids=r.shot_ids).rendered
        if len(r.shot_ids) < len(IDS):
            assert r.extra["retrieved_ids"] == IDS
            # not wasteful: one more example would not have fitted
            assert count(b.build(r.index, ids=IDS[:len(r.shot_ids) + 1]).rendered) > budget
        kept_counts.add(len(r.shot_ids))
    assert len(kept_counts) > 1  # longer questions keep fewer examples
    assert fitter.stats.rows_cut == len(TEST) and fitter.stats.rows_over == 0


def test_dialogue_examples_under_a_meta_template_fit(tokenizer) -> None:
    dlg = {"round": [{"role": "HUMAN", "prompt": "Q: {question}"}, {"role": "BOT", "prompt": "A: {answer}"}]}
    c = cfg(ice={"template": dlg},
            prompt={"template": {"begin": "</E>", "round": dlg["round"]}})
    count = token_counter(tokenizer)
    b = builder(c, meta=CHATML)
    base = count(b.build(0, ids=()).rendered)
    budget = count(b.build(0, ids=IDS[:3]).rendered)  # exactly three examples of row 0 fit
    fitter = ShotFitter(b, count, budget)
    [r] = fitter.build_row(0)
    assert r.shot_ids == IDS[:3] and count(r.rendered) == budget
    assert r.rendered.startswith("<u>Q: " + TRAIN[IDS[0]]["question"])
    # each example's measured share adds up to the real prompt
    assert base + sum(fitter._shot_tokens[i] for i in IDS[:3]) == budget


def test_chat_model_dialogue_examples_fit(tokenizer) -> None:
    dlg = {"round": [{"role": "HUMAN", "prompt": "Q: {question}"}, {"role": "BOT", "prompt": "A: {answer}"}]}
    c = cfg(ice={"template": dlg}, prompt={"template": {"begin": "</E>", "round": dlg["round"]}})
    count = token_counter(tokenizer)
    b = builder(c, meta=API_META, kind="api")
    assert count(b.build(0).rendered) > count(b.build(0, ids=IDS[:3]).rendered) > count(b.build(0, ids=()).rendered)
    budget = count(b.build(0, ids=IDS[:3]).rendered)
    for i, r in enumerate(ShotFitter(b, count, budget).build_all(range(3))):
        assert count(r.rendered) <= budget and r.shot_ids == IDS[:len(r.shot_ids)]
        assert r.rendered[-1] == {"role": "HUMAN", "prompt": "Q: " + TEST[i]["question"]}
    assert b.build(0, ids=IDS[:3]).rendered[0]["prompt"] == "Q: " + TRAIN[IDS[0]]["question"]


def test_ppl_labels_of_a_row_share_the_examples(tokenizer) -> None:
    labels = ["yes", "no, because the question asks about something else entirely and at great length"]
    c = cfg("ppl", prompt={"template": "</E>\nQ: {question}\nA: {label}"}, labels=labels)
    c["prompt_template"]["template"] = {lab: "</E>\nQ: {question}\nA: " + lab for lab in labels}
    count = token_counter(tokenizer)
    b = builder(c)
    short = count(b.build(0, labels[0], ids=IDS[:3]).rendered)
    fitter = ShotFitter(b, count, short)
    recs = fitter.build_row(0)
    assert [r.label for r in recs] == labels
    assert recs[0].shot_ids == recs[1].shot_ids  # the same examples for every label
    assert len(recs[0].shot_ids) < 3  # the long label decided, though three examples fit the short one
    assert all(count(r.rendered) <= short for r in recs)


def test_each_example_is_counted_once(tokenizer) -> None:
    rec = Recorder(tokenizer)
    b = builder(cfg())
    budget = rec.count(b.build(0, ids=IDS[:4]).rendered)
    fitter = ShotFitter(b, rec, budget)
    recs = fitter.build_all(range(len(TEST)))
    rows = len(TEST)
    pieces = [b.example_piece(i) for i in IDS]
    for p in pieces:
        assert sum(1 for s in rec.seen if s == p) == 1  # counted once across all rows
    # "" (special tokens) and the separator, once each; per row: its zero-shot prompt, then its final prompt
    with_examples = sum(1 for r in recs if r.shot_ids)
    assert len(rec.seen) == fitter.stats.counts == 2 + len(IDS) + rows + with_examples + fitter.stats.rechecks \
        + fitter.stats.grow_tries
    assert fitter.stats.grow_tries == 0  # exact estimates: no prefix is counted twice over
    assert not any(s == b.build(0).rendered for s in rec.seen)  # the full five-example prompt is never counted


def test_an_overestimated_example_is_added_back_when_the_real_prompt_fits(tokenizer) -> None:
    """A counter that over-counts examples measured on their own (as a chat template's framing can)
    must not cost the row examples that fit: the kept run is the longest prefix that really fits."""
    count = token_counter(tokenizer)
    b = builder(cfg())
    pieces = {b.example_piece(i) for i in IDS}

    def inflated(rendered) -> int:
        return count(rendered) + (40 if rendered in pieces else 0)

    budget = count(b.build(0, ids=IDS[:3]).rendered)
    fitter = ShotFitter(b, inflated, budget)
    rec = fitter.build_row(0)[0]
    assert rec.shot_ids == IDS[:3]
    assert fitter.stats.grown >= 1 and count(rec.rendered) <= budget  # the estimate alone kept fewer
    assert count(b.build(0, ids=IDS[:4]).rendered) > budget


def test_rows_without_examples_are_not_counted(tokenizer) -> None:
    rec = Recorder(tokenizer)
    c = cfg()
    c["retriever"] = {"type": "ZeroRetriever"}
    fitter = ShotFitter(builder(c), rec, 5)
    recs = fitter.build_all(range(3))
    assert len(recs) == 3 and rec.seen == []


def test_zero_shot_still_too_long_is_warned(tokenizer) -> None:
    fitter = ShotFitter(builder(cfg()), token_counter(tokenizer), 3)
    with pytest.warns(PromptweaveWarning, match="2 row"):
        recs = fitter.build_all(range(2))
    assert all(r.shot_ids == [] and r.extra["retrieved_ids"] == IDS for r in recs)


def test_prompt_budget() -> None:
    assert prompt_budget(None, None, mode="gen", max_out_len=10) is None
    assert prompt_budget(100, None, mode="gen", max_out_len=10) == 100
    assert prompt_budget(None, 100, mode="gen", max_out_len=10) == 90  # the model must also hold the answer
    assert prompt_budget(None, 100, mode="ppl", max_out_len=10) == 100
    assert prompt_budget(50, 100, mode="gen", max_out_len=10) == 50
    with pytest.raises(ConfigError, match="no room"):
        prompt_budget(None, 10, mode="gen", max_out_len=10)
    with pytest.raises(ConfigError, match="positive"):
        prompt_budget("2048", None, mode="gen", max_out_len=10)


def test_token_counter_loading(tiny_model_dir, tokenizer) -> None:
    local = load_token_counter({"type": "HuggingFaceCausalLM", "path": str(tiny_model_dir)})
    assert local("Q: hello") == len(tokenizer("Q: hello")["input_ids"])
    assert local(["Q:", [5, 6, 7]]) == len(tokenizer("Q:", add_special_tokens=False)["input_ids"]) + 3
    assert load_token_counter({"type": "OpenAISDK", "path": "served"}) is None
    api = load_token_counter({"type": "OpenAISDK", "path": "served", "tokenizer_path": str(tiny_model_dir)})
    assert api([{"role": "user", "content": "hi"}]) > 0
    with pytest.raises(ConfigError, match="tokenizer"):
        load_token_counter({"type": "OpenAISDK", "tokenizer_path": str(tiny_model_dir / "nope")})


# --------------------------------------------------------------------------- normalizing_str
NORM_LABELS = ["A", "B"]


def norm_cfg(**extra):
    c = cfg("ppl", labels=NORM_LABELS, normalizing_str="Answer:")
    c["prompt_template"] = {"type": "PromptTemplate", "ice_token": "</E>", "sep_token": "</S>",
                            "template": {lab: "</E>\nQ: {question}\nAnswer:</S> " + lab for lab in NORM_LABELS},
                            **extra}
    return c


def test_normalizing_records_split_at_the_templates_sep() -> None:
    c = norm_cfg()
    c["ice_template"]["template"] = "Q: {question}</S>\nAnswer: {answer}"  # a sep inside every example
    b = builder(c)
    r = b.build(1, "B")
    assert r.ppl_answer == " B"
    assert r.ppl_context.endswith("\nQ: " + TEST[1]["question"] + "\nAnswer:")
    assert "</S>" in r.ppl_context  # examples keep theirs, as in every ppl prompt; the cut is the template's
    assert r.rendered == r.ppl_context + r.ppl_answer


def test_normalizing_needs_a_sep_token_and_a_string_template() -> None:
    c = norm_cfg()
    del c["prompt_template"]["sep_token"]
    with pytest.raises(ConfigError, match="sep_token"):
        builder(c).build(0, "A")
    c = norm_cfg()
    c["prompt_template"]["template"] = {lab: "</E>\nQ: {question}\nAnswer: " + lab for lab in NORM_LABELS}
    with pytest.raises(TemplateError, match="does not occur"):
        builder(c).build(0, "A")


def test_normalizing_scores_on_the_tiny_model(tiny_model_dir) -> None:
    lm = HFModel(str(tiny_model_dir), device="cpu", dtype="float32", batch_size=4)
    b = builder(norm_cfg())
    recs = [r for i in range(2) for r in b.build_row(i)]
    res = infer_ppl(lm, recs, normalizing_str="Answer:")
    norm_len = lm.count_tokens("Answer:")
    for row, r in zip(res, recs[::2], strict=True):
        for rec in [x for x in recs if x.index == row.index]:
            [full] = lm.score_ids([lm.encode(rec.rendered)])
            [norm] = lm.score_ids([lm.encode("Answer:" + rec.ppl_answer)])
            want = average_nll(full, lm.count_tokens(rec.ppl_context)) - average_nll(norm, norm_len)
            assert row.ppl[rec.label] == pytest.approx(want, abs=1e-4)


# --------------------------------------------------------------------------- the model's own cut
def test_hf_left_cut_is_counted_and_warned(tiny_model_dir) -> None:
    lm = HFModel(str(tiny_model_dir), device="cpu", dtype="float32", batch_size=2, max_seq_len=12)
    long = "Question: What is two plus two? Answer: four " * 3
    with pytest.warns(PromptweaveWarning, match="2 prompt"):
        lm.generate([long, long, "Answer:"], GenerationParams(max_out_len=2))
    assert lm.stats.truncated_prompts == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per model
        lm.generate([long], GenerationParams(max_out_len=2))
    assert lm.stats.truncated_prompts == 3
    with pytest.raises(ModelError, match="max_seq_len"):
        lm.token_logprobs([long])  # a scored prompt is never cut
