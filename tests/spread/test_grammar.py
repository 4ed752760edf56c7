"""The format grammar: only the text between placeholders changes, deterministically, and variant 0 is the
config's template exactly."""
import itertools
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.config import load_config
from promptweave.spread.grammar import Format, apply_template, apply_text, sample_formats
from promptweave.spread.stats import pair_mean_abs_diff, pss, rankings, summarize
from promptweave.spread.variants import dataset_variants, variant_config

ROOT = Path(__file__).resolve().parents[2]
MC = "Question: {question}\nA. {A}\nB. {B}\nC. {C}\nD. {D}\nAnswer:"
SLOT = re.compile(r"\{[^{}]*\}")


def test_one_format_rewrites_each_property():
    fmt = Format(separator=" - ", spacing="\n\n", casing="upper", label="({})", choice_sep="; ", cue="Response")
    assert apply_text(MC, fmt) == "QUESTION - {question}\n\n(A) {A}; (B) {B}; (C) {C}; (D) {D}\n\nRESPONSE -"


def test_identity_format_and_text_without_fields_are_untouched():
    assert apply_text(MC, Format()) == MC
    plain = "Translate {src} into French, please."
    for fmt in itertools.islice(sample_formats(0), 20):
        assert apply_text(plain, fmt) == plain


def test_protected_tokens_and_slots_survive():
    text = "</E>Question: {question}\nAnswer: {answer}<SEP>"
    fmt = Format(separator=" :: ", spacing=" || ", casing="lower", cue="Solution")
    out = apply_text(text, fmt, protect=["</E>", "<SEP>"])
    assert out == "</E>question :: {question} || solution :: {answer}<SEP>"


def test_label_dict_keys_roles_and_answer_turns_are_kept():
    tpl = {lab: {"round": [{"role": "HUMAN", "prompt": MC}, {"role": "BOT", "prompt": lab}]} for lab in "ABCD"}
    fmt = Format(label="[{}]", casing="title")
    out = apply_template(tpl, fmt)
    assert list(out) == list("ABCD")
    for lab in "ABCD":
        human, bot = out[lab]["round"]
        assert human["role"] == "HUMAN" and bot == {"role": "BOT", "prompt": lab}
        assert "[A] {A}" in human["prompt"] and human["prompt"].startswith("Question: {question}")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(["{question}", "{A}", "{B}", "</E>", "{}", "{{x}}", "\n", "A. ", "B) ",
                                           "(C) ", "Answer:", "Question: ", " : ", "Label - ", "{", "}"]),
                          st.text(max_size=8)), max_size=14),
       st.integers(0, 10_000))
def test_any_text_keeps_its_placeholders_in_order(pieces, seed):
    text = "".join(pieces)
    fmt = next(sample_formats(seed))
    out = apply_text(text, fmt, protect=["</E>"])
    assert SLOT.findall(out.replace("</E>", "")) == SLOT.findall(text.replace("</E>", ""))
    assert out.count("</E>") == text.count("</E>")


def test_variants_are_distinct_deterministic_and_start_with_the_config():
    cfg = load_config(ROOT / "examples" / "run_openai_server.py")
    a = dataset_variants(cfg.datasets[0], 16, seed=3)
    b = dataset_variants(cfg.datasets[0], 16, seed=3)
    assert len(a) == 16 and a[0].dataset is cfg.datasets[0]
    assert [v.dataset for v in a] == [v.dataset for v in b]
    texts = {str(v.dataset["infer_cfg"]["prompt_template"]["template"]) for v in a}
    assert len(texts) == 16
    assert [v.dataset for v in dataset_variants(cfg.datasets[0], 16, seed=4)] != [v.dataset for v in a]
    for v in a[1:]:  # only the template's text differs from the config entry
        assert {k: x for k, x in v.dataset.items() if k != "infer_cfg"} == {
            k: x for k, x in cfg.datasets[0].items() if k != "infer_cfg"}
        assert v.dataset["infer_cfg"]["inferencer"] == cfg.datasets[0]["infer_cfg"]["inferencer"]
    assert variant_config(cfg, 5, 3).datasets[0] == a[5].dataset


def test_prompt_variants_come_first_and_are_checked():
    from promptweave.errors import TemplateError

    cfg = load_config(ROOT / "examples" / "run_openai_server.py")
    raw = dict(cfg.datasets[0], prompt_variants=[
        {"round": [{"role": "HUMAN", "prompt": "Pick the right option.\n{question}\nA. {A}\nB. {B}\nC. {C}\nD. {D}"}]},
        {"round": [{"role": "HUMAN", "prompt": "{question} Options: {A} / {B} / {C} / {D}. Reply with A-D."}]}])
    got = dataset_variants(raw, 5)
    assert [v.source for v in got] == ["config", "prompt_variants[0]", "prompt_variants[1]", "grammar", "grammar"]
    assert got[1].dataset["infer_cfg"]["prompt_template"]["template"] == raw["prompt_variants"][0]
    bad = dict(raw, prompt_variants=[{"round": [{"role": "HUMAN", "prompt": "{questoin}"}]}])
    with pytest.raises(TemplateError) as e:
        dataset_variants(bad, 3, file="c.py", where="datasets[0]")
    assert "datasets[0].prompt_variants[0]" in str(e.value) and "questoin" in str(e.value)


def test_pss_is_the_mean_over_instances_of_pairwise_absolute_differences():
    table = [[1, 0, 1, None], [1, 1, 0, 1], [0, 1, 1, 1]]  # variants × instances
    want = []
    for i in range(4):
        vals = [r[i] for r in table if r[i] is not None]
        pairs = list(itertools.combinations(vals, 2))
        want.append(sum(abs(a - b) for a, b in pairs) / len(pairs))
    assert pss(table) == pytest.approx(sum(want) / len(want))
    assert pair_mean_abs_diff([0.2, 0.9, 0.4]) == pytest.approx((0.7 + 0.2 + 0.5) / 3)
    assert pss([[1, 1], [1, 1]]) == 0


def test_summary_figures_and_rankings():
    s = summarize([50.0, 70.0, 40.0, None, 70.0], seed=1)
    # two variants share the top score: neither is "best"; the bottom one is unique
    assert (s["min"], s["max"], s["spread"], s["best"], s["worst"], s["scored"]) == (40.0, 70.0, 30.0, None, 2, 4)
    assert s["mean"] == pytest.approx(57.5)
    assert s["std"] == pytest.approx((sum((x - 57.5) ** 2 for x in (50, 70, 40, 70)) / 3) ** 0.5)
    lo, hi = s["ci95"]
    assert 40.0 <= lo <= s["mean"] <= hi <= 70.0
    r = rankings({"m1": [80, 40, 50], "m2": [60, 70, 50]})
    assert [p["ranking"] for p in r["per_variant"]] == [["m1", "m2"], ["m2", "m1"], ["m1", "m2"]]
    assert [p["top"] for p in r["per_variant"]] == ["m1", "m2", None]  # a tie has no top model
    assert r["top_changes"] == 2


def test_colon_labels_urls_and_qa_descriptors():
    fmt = Format(separator=" = ", casing="lower", label="({})", choice_sep="; ")
    got = apply_text("Source: http://x.org/a\nQuestion: {q}\nA: {A}\nB: {B}\nAnswer:", fmt)
    assert got == "source = http://x.org/a\nquestion = {q}\n(A) {A}; (B) {B}\nanswer ="
    assert apply_text("Q: {q}\nA: {a}", fmt) == "q = {q}\na = {a}"  # a lone A: is a descriptor, not a choice
