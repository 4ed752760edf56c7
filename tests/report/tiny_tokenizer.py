"""A tiny real tokenizer folder (files only, no weights) with a chat template, built offline in the test."""
from __future__ import annotations

from pathlib import Path

CHATML = (
    "{%- if messages[0]['role'] == 'system' %}{%- set system = messages[0]['content'] %}"
    "{%- set rest = messages[1:] %}{%- else %}{%- set system = 'You are a helpful assistant.' %}"
    "{%- set rest = messages %}{%- endif %}"
    "{{- '<|im_start|>system\\n' + system + '<|im_end|>\\n' }}"
    "{%- for message in rest %}"
    "{%- if message['role'] not in ['user', 'assistant'] %}{{ raise_exception('roles must be user or assistant') }}"
    "{%- endif %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] | trim + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

# Llama-3 style: a bos token, header ids, a dated system preamble (strftime_now), tojson for tools
LLAMA3 = """{{- bos_token }}
{%- set ns = namespace(sys='') %}
{%- if messages[0]['role'] == 'system' %}{%- set ns.sys = messages[0]['content'] | trim %}{%- set messages = messages[1:] %}{%- endif %}
{{- '<|start_header_id|>system<|end_header_id|>\\n\\n' }}
{{- 'Cutting Knowledge Date: December 2023\\n' }}
{%- if tools is not none %}{{- tools | tojson }}{%- endif %}
{{- ns.sys + '<|eot_id|>' }}
{%- for message in messages %}
{%- if loop.index0 % 2 == 0 and message['role'] != 'user' %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{%- endif %}
{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}
"""

CORPUS = ["Question: What is two plus two? Answer: four", "The answer is A. The answer is B.",
          "Ada has 23 apples and buys 6 more. How many apples does Ada have now?"] * 10


def build_tokenizer(folder: Path, chat_template: str | None = CHATML, special=("<|im_start|>", "<|im_end|>")) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>", *special]
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|begin_of_text|>", eos_token="<|eot_id|>",
                                   additional_special_tokens=list(specials[1:]))
    if chat_template is not None:
        fast.chat_template = chat_template
    fast.save_pretrained(folder)
    return folder
