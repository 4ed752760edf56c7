"""render_with_chat_template against transformers' own apply_chat_template, on tokenizers built here."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.errors import ChatTemplateError
from promptweave.render.chat_template import (
    load_chat_template,
    render_with_chat_template,
    segments_of,
)

from .tiny_tokenizer import CHATML, LLAMA3, build_tokenizer

transformers = pytest.importorskip("transformers")

CONVERSATIONS = [
    [{"role": "user", "content": "Question: 2+2?"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
     {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Question: {x} </E> {{y}}"}],
]


@pytest.fixture(scope="module", params=["chatml", "llama3"])
def tok_dir(request, tmp_path_factory):
    tpl = CHATML if request.param == "chatml" else LLAMA3
    return build_tokenizer(tmp_path_factory.mktemp(request.param), tpl)


@pytest.mark.parametrize("conv", CONVERSATIONS)
@pytest.mark.parametrize("gen", [True, False])
def test_equals_apply_chat_template(tok_dir, conv, gen):
    tok = transformers.AutoTokenizer.from_pretrained(str(tok_dir))
    want = tok.apply_chat_template(conv, tokenize=False, add_generation_prompt=gen)
    assert render_with_chat_template(conv, tok_dir, add_generation_prompt=gen) == want
    assert render_with_chat_template(conv, tok, add_generation_prompt=gen) == want  # a loaded tokenizer too


def test_renderer_form_maps_roles_and_skips_empty_turns(tok_dir):
    tok = transformers.AutoTokenizer.from_pretrained(str(tok_dir))
    ours = [{"role": "HUMAN", "prompt": "Q1"}, {"role": "BOT", "prompt": "A1"}, {"role": "HUMAN", "prompt": "Q2"},
            {"role": "BOT", "prompt": ""}]
    want = tok.apply_chat_template([{"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A1"},
                                    {"role": "user", "content": "Q2"}], tokenize=False, add_generation_prompt=True)
    assert render_with_chat_template(ours, tok_dir) == want


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30).filter(lambda s: s.strip() == s and s), min_size=1, max_size=5))
def test_any_text_renders_like_transformers(tmp_path_factory, texts):
    folder = _chatml(tmp_path_factory)
    tok = _TOKS.setdefault(str(folder), transformers.AutoTokenizer.from_pretrained(str(folder)))
    conv = [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(texts)]
    assert render_with_chat_template(conv, folder) == tok.apply_chat_template(conv, tokenize=False,
                                                                              add_generation_prompt=True)


_TOKS: dict = {}
_DIRS: dict = {}


def _chatml(factory):
    if "d" not in _DIRS:
        _DIRS["d"] = build_tokenizer(factory.mktemp("chatml-h"), CHATML)
    return _DIRS["d"]


def test_raise_exception_becomes_a_typed_error(tok_dir):
    with pytest.raises(ChatTemplateError) as e:
        render_with_chat_template([{"role": "tool", "content": "x"}, {"role": "tool", "content": "y"}], tok_dir)
    assert e.value.code == "PW810" and "chat_template" in str(e.value)


def test_sandbox_refuses_dunder_access(tmp_path):
    folder = build_tokenizer(tmp_path / "evil", "{{ messages.__class__.__mro__ }}")
    with pytest.raises(ChatTemplateError):
        render_with_chat_template([{"role": "user", "content": "x"}], folder)
    folder2 = build_tokenizer(tmp_path / "evil2", "{% set ns = namespace() %}{% set ns._x = 1 %}{{ ns._x }}")
    with pytest.raises(ChatTemplateError):
        render_with_chat_template([{"role": "user", "content": "x"}], folder2)


def test_bad_jinja_names_the_file_and_line(tmp_path):
    folder = build_tokenizer(tmp_path / "bad", "{% for m in messages %}\n{{ m.content }\n")
    with pytest.raises(ChatTemplateError) as e:
        render_with_chat_template([{"role": "user", "content": "x"}], folder)
    assert "tokenizer_config.json" in str(e.value) or "chat_template" in str(e.value)


def test_no_template_and_missing_folder(tmp_path):
    folder = build_tokenizer(tmp_path / "plain", None)
    assert load_chat_template(folder) is None
    with pytest.raises(ChatTemplateError, match="no chat_template"):
        render_with_chat_template([{"role": "user", "content": "x"}], folder)
    with pytest.raises(ChatTemplateError, match="no tokenizer folder"):
        render_with_chat_template([{"role": "user", "content": "x"}], tmp_path / "nope")


def test_template_file_and_named_templates(tmp_path):
    folder = build_tokenizer(tmp_path / "named", None)
    cfg = json.loads((folder / "tokenizer_config.json").read_text())
    cfg["chat_template"] = [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D{{ bos_token }}"}]
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
    assert render_with_chat_template([{"role": "user", "content": "x"}], folder) == "D<|begin_of_text|>"
    folder2 = build_tokenizer(tmp_path / "jinja", None)
    (folder2 / "chat_template.jinja").write_text("J{{ messages[0].content }}")
    assert render_with_chat_template([{"role": "user", "content": "x"}], folder2) == "Jx"


def test_segments_cover_the_text(tok_dir):
    conv = CONVERSATIONS[1]
    text = render_with_chat_template(conv, tok_dir)
    segs = segments_of(text, conv)
    assert "".join(p for p, _ in segs) == text
    assert ("Hello", "role:assistant") in segs
