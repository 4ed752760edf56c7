"""Multi-turn generation with a real (tiny, randomly initialised) local transformers model.

The reference leaves local models unimplemented for multi-turn; here each turn
goes through the text renderer and the model's own replies enter the history.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from promptweave.engine import DatasetSpec, ModelSpec  # noqa: E402
from promptweave.forms.turn_loop import MultiTurnGenInferencer  # noqa: E402
from promptweave.models.base import GenerationParams  # noqa: E402

EOS = 256


class TinyByteLM:
    """A real GPT-2 with 2 layers over a byte vocabulary, built here (nothing downloaded)."""

    name = "tiny-gpt2"

    def __init__(self) -> None:
        torch.manual_seed(0)
        cfg = transformers.GPT2Config(vocab_size=257, n_positions=256, n_embd=32, n_layer=2, n_head=2,
                                      bos_token_id=EOS, eos_token_id=EOS)
        self.model = transformers.GPT2LMHeadModel(cfg).eval()
        self.seen: list[str] = []

    def _greedy(self, prompt: str, n: int) -> str:
        ids = torch.tensor([list(prompt.encode("utf-8"))])
        with torch.no_grad():
            out = self.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, do_sample=False,
                                      pad_token_id=EOS)
        new = [t for t in out[0, ids.shape[1]:].tolist() if t < 256]
        return bytes(new).decode("latin-1")

    def generate(self, prompts, params: GenerationParams):
        self.seen.extend(prompts)
        return [self._greedy(p, params.max_out_len) for p in prompts]

    def loglikelihood(self, requests):  # part of the TextModel protocol; unused here
        raise NotImplementedError


def test_every_mode_feeds_a_local_models_own_replies_back_through_the_text_renderer():
    rows = [{"question": ["hi", "and?"], "answer": ["a", "b"]}]
    cfg = {"abbr": "chat", "reader_cfg": {"input_columns": ["question", "answer"], "output_column": "answer"},
           "infer_cfg": {"prompt_template": {"type": "MultiTurnPromptTemplate", "template": {"round": [
               {"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT", "prompt": "{answer}"}]}},
               "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "MultiTurnGenInferencer",
                                                                       "infer_mode": "every"}}}
    ds = DatasetSpec.from_config(cfg, train=rows, test=rows, check_columns=False)
    meta = {"round": [{"role": "HUMAN", "begin": "<u>", "end": "</u>"},
                      {"role": "BOT", "begin": "<b>", "end": "</b>", "generate": True}]}
    model = ModelSpec.from_config({"kind": "lm", "meta_template": meta, "abbr": "tiny"})
    lm = TinyByteLM()
    (res,) = MultiTurnGenInferencer(ds, model, lm, params=GenerationParams(max_out_len=3)).run()
    r0, r1 = (t.prediction for t in res.turns)
    assert all(t.success for t in res.turns) and len(r0) == 3
    assert lm.seen == ["<u>hi</u><b>", f"<u>hi</u><b>{r0}</b><u>and?</u><b>"]
    assert r1 == lm._greedy(lm.seen[1], 3)  # the second answer really continues the history with reply 1
