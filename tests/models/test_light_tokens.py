"""``run --dry-run`` counts a local model's prompt tokens from ``tokenizer.json`` alone (no transformers, no torch):
the counts must equal what transformers' tokenizer gives the run's model, for texts, segments and chat messages."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from tiny_tokenizer import build_tokenizer  # noqa: E402

from promptweave.models.hf import token_counter  # noqa: E402
from promptweave.models.light_tokens import light_token_counter  # noqa: E402

TEXTS = ["Question: what is 2 plus 2?\nAnswer:", "", "ünïcødé and emoji 🙂 <|im_start|> inside", "a " * 300]
MESSAGES = [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there"}],
            [{"role": "HUMAN", "prompt": "first"}, {"role": "BOT", "prompt": "ok"}, {"role": "HUMAN", "prompt": "2"}]]


@pytest.mark.parametrize("template", [True, False])
def test_light_counts_equal_transformers(tmp_path, template) -> None:
    folder = build_tokenizer(tmp_path / "tok", **({} if template else {"chat_template": None}))
    light = light_token_counter(folder)
    assert light is not None
    full = token_counter(transformers.AutoTokenizer.from_pretrained(str(folder)))
    for text in TEXTS:
        assert light(text) == full(text), text
    segments = ["<|im_start|>user\n", [5, 6, 7], "tail text"]
    assert light(segments) == full(segments)
    for msgs in MESSAGES:
        assert light(msgs) == full(msgs), msgs


def test_no_tokenizer_json_or_kwargs_means_estimate(tmp_path) -> None:
    folder = build_tokenizer(tmp_path / "tok")
    assert light_token_counter(folder, {"use_fast": False}) is None  # kwargs may change the encoding
    (folder / "tokenizer.json").unlink()
    assert light_token_counter(folder) is None
    assert light_token_counter(None) is None
