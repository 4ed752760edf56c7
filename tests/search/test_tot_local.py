"""The ToT search on a real local model (a tiny GPT-2 built by the test): ``n`` samples per prompt are ``n`` calls,
each cached under its own key, and a second search over the same cache sends nothing and finds the same answers."""
from __future__ import annotations

import importlib.util

import pytest

from promptweave.infer.cache import ResponseCache
from promptweave.infer.records import Record
from promptweave.infer.tot import ToTSettings, infer_tot
from promptweave.models.base import GenerationParams
from promptweave.suites.game24.wrapper import Game24Wrapper

pytestmark = pytest.mark.skipif(importlib.util.find_spec("opencompass") is None,
                                reason="needs the reference's prompt texts: pip install --no-deps opencompass==0.5.4")


class CountingHF:
    """The real transformers backend, counting the prompts it generates for."""

    def __init__(self, path: str) -> None:
        from promptweave.models.hf import HFModel

        self.inner = HFModel(path, device="cpu", dtype="float32", max_seq_len=500)  # the tiny model: 512 positions
        self.name, self.batch_size, self.prompts = "tiny", 4, []

    def identity(self) -> dict:
        return self.inner.identity()

    def generate(self, prompts, params):
        self.prompts += list(prompts)
        return self.inner.generate(prompts, params)


def test_local_samples_are_separate_cached_calls_and_resume(tiny_model_dir, tmp_path) -> None:
    lm = CountingHF(str(tiny_model_dir))
    settings = ToTSettings(method_generate="sample", prompt_sample="cot", n_generate_sample=2, n_evaluate_sample=2,
                           n_select_sample=1)
    wrapper = Game24Wrapper()
    records = [Record(0, "4 6 1 1")]
    params = GenerationParams(max_out_len=2, temperature=0.0)
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        first = infer_tot(lm, records, params, settings, wrapper, cache)
        sent = list(lm.prompts)
        assert cache.writes == len(sent)
        again = infer_tot(lm, records, params, settings, wrapper, cache)
    assert lm.prompts == sent  # nothing new was sent
    assert [r.answers for r in again] == [r.answers for r in first]
    for r in first:
        assert len(r.steps) == wrapper.steps and len(r.answers) == 1
        for step in r.steps:
            assert len(step["new_ys"]) == 2  # one kept answer x two samples
    # each sampling prompt went out twice (sample 0 and 1), as did each distinct value prompt
    assert sent.count(wrapper.cot("4 6 1 1")) == 2
    assert all(sent.count(p) == 2 for p in set(sent))
