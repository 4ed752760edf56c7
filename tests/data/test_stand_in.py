"""``lint --no-data`` on AISBench configs whose rows the loader builds: stand-in ``content`` for prompt_mm
templates, and the function-calling form checked against the API stand-in only."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from promptweave.data.stand_in import stand_in_columns
from promptweave.prompt.multimodal import split_content
from promptweave.run.lint import lint_file


def _ais(rel: str) -> Path:
    spec = importlib.util.find_spec("ais_bench")
    if spec is None:
        pytest.skip("needs the ais_bench config tree: pip install --no-deps ais_bench_benchmark (.ci/run does)")
    return Path(next(iter(spec.submodule_search_locations))) / "benchmark/configs/datasets" / rel


def test_stand_in_content_has_a_segment_per_modality_the_template_offers():
    raw = {"infer_cfg": {"prompt_template": {"template": {"round": [{"role": "HUMAN", "prompt_mm": {
        "text": {"type": "text", "text": "{question}"},
        "video": {"type": "video_url", "video_url": {"url": "file://{video}"}}}}]}}}}
    segs = split_content(stand_in_columns(raw)["content"])
    assert [(s.modality, s.payload) for s in segs] == [("video", "<video>"), ("text", "<question>")]
    assert stand_in_columns({"infer_cfg": {"prompt_template": {"template": "{question}"}}}) == {}
    # prompt_mm inside eval_cfg (a judge's template) is not the dataset's prompt
    assert stand_in_columns({"eval_cfg": {"prompt_mm": {"image": {}}}, "infer_cfg": {}}) == {}


@pytest.mark.parametrize("rel", ["textvqa/textvqa_gen.py", "videomme/videomme_gen.py",
                                 "vocalsound/vocalsound_gen.py", "mmstar/mmstar_gen.py", "docvqa/docvqa_gen.py"])
def test_multimodal_configs_lint_without_data(rel):
    report = lint_file(_ais(rel), no_data=True)
    assert not [p for p in report.problems if "needs a 'content' column" in p]
    if rel.startswith(("mmstar", "docvqa")):  # native loaders; evaluators are ais_bench's own
        assert not [p for p in report.problems if "PW220" in p]


def test_bfcl_single_turn_lints_and_multi_turn_is_refused_by_name():
    ok = lint_file(_ais("BFCL/BFCL_gen_parallel.py"), no_data=True)
    assert ok.ok, ok.problems
    assert any("api-chat" in line for line in ok.lines) and not any("plain-lm" in line for line in ok.lines)
    bad = lint_file(_ais("BFCL/BFCL_gen_multi_turn_base.py"), no_data=True)
    assert bad.codes == ["PW160"] and "BFCL_gen_multi_turn_base.py" in bad.problems[0]
    assert "multi_turn_base" in bad.problems[0]
