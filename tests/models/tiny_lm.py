"""Builds a real, tiny, randomly initialised causal LM offline (nothing is downloaded).

The tokenizer is a byte-level BPE trained on the fly with ``tokenizers``; the model is
a 2-layer, hidden-32 GPT-2. Both are saved to a folder and loaded back by path, as a
user's checkpoint would be.
"""
from __future__ import annotations

from pathlib import Path

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Question: What is two plus two? Answer: four",
    "Answer: A Answer: B Answer: C Answer: D",
    "Paris is the capital of France. Berlin is the capital of Germany.",
    "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\nhi<|im_end|>",
] * 20


def build_tiny_lm(folder: Path, seed: int = 0, arch: str = "gpt2", hidden: int = 32, layers: int = 2) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<pad>"]
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=special,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>",
                                   pad_token="<pad>", additional_special_tokens=["<|im_start|>", "<|im_end|>"])
    fast.save_pretrained(folder)
    torch.manual_seed(seed)
    vocab = tok.get_vocab_size()
    if arch == "llama":
        cfg = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                          num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                          eos_token_id=fast.eos_token_id, bos_token_id=fast.bos_token_id,
                          pad_token_id=fast.pad_token_id)
        model = LlamaForCausalLM(cfg)
    else:
        cfg = GPT2Config(vocab_size=vocab, n_positions=512, n_embd=hidden, n_layer=layers, n_head=2,
                         eos_token_id=fast.eos_token_id, bos_token_id=fast.bos_token_id,
                         pad_token_id=fast.pad_token_id)
        model = GPT2LMHeadModel(cfg)
    model.save_pretrained(folder)
    return folder


try:
    import pytest

    @pytest.fixture(scope="session")
    def tiny_model_dir(tmp_path_factory) -> Path:
        """Folder holding a tiny GPT-2 + trained tokenizer, built once per test session."""
        return build_tiny_lm(tmp_path_factory.mktemp("tiny-gpt2"))
except ImportError:  # pragma: no cover
    pass
