"""Issue 22, item 4: a tokenizer folder is untrusted input.

Its chat template renders inside budgets (steps, sizes, depth, integers, no template loading) and
each hostile template ends in a typed ChatTemplateError, never an internal error; its files are read
only inside the folder (Hugging Face cache links into the same repository's ``blobs/`` excepted).
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.errors import ChatTemplateError
from promptweave.render.chat_template import (
    ChatTemplate,
    check_tokenizer_folder,
    load_chat_template,
    render_with_chat_template,
)
from tests.outcome import value_or_error

MSGS = [{"role": "user", "content": "hi"}]

HOSTILE = {
    "include": ("{% include 'x' %}", "include"),
    "import": ("{% import 'x' as y %}", "import"),
    "from_import": ("{% from 'x' import y %}", "import"),
    "extends": ("{% extends 'x' %}", "extends"),
    "range": ("{{ range(10**9)|list }}", "max_items"),
    "range_huge": ("{% for i in range(10**30) %}{% endfor %}", "max_items"),
    "nested_loops": ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
                     "max_steps"),
    "power_tower": ("{{ 9 ** (9 ** 9) }}", "max_int_bits"),
    "string_times": ("{{ 'a' * 10**10 }}", "max_str_len"),
    "list_times": ("{{ ([1] * 100000) * 100000 }}", "max_items"),
    "join_bomb": ("{% set s = 'a' * 100000 %}{{ s.join(['b'] * 100000) }}", "max_str_len"),
    "join_filter_bomb": ("{% set s = 'a' * 100000 %}{{ (['b'] * 100000)|join(s) }}", "max_str_len"),
    "doubling_tilde": ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
                       "{% endfor %}{{ ns.s }}", "max_str_len"),
    "doubling_plus": ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}"
                      "{% endfor %}{{ ns.s }}", "max_str_len"),
    "macro_recursion": ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "max_depth"),
    "loop_recursion": ("{% for m in [[1]] recursive %}{{ loop([m]) }}{% endfor %}", "max_depth"),
    "percent_width": ("{{ '%0999999999d' % 1 }}", "max_str_len"),
    "format_width": ("{{ '{:>999999999}'.format('a') }}", "max_str_len"),
    "format_nested_width": ("{{ '{:{w}}'.format('a', w=10**9) }}", "max_str_len"),
    "center": ("{{ 'a'.center(10**9) }}", "max_str_len"),
    "center_filter": ("{{ 'a'|center(1000000000) }}", "max_str_len"),
    "indent_filter": ("{{ ('a\\n' * 10000)|indent(100000) }}", "max_str_len"),
    "replace_filter": ("{{ ('a' * 100000)|replace('a', 'b' * 200) }}", "max_str_len"),
    "lipsum": ("{{ lipsum(10**8) }}", "max_items"),
    "tojson_indent": ("{{ messages|tojson(indent=1000000000) }}", "indent"),
    "slice_filter": ("{{ [1]|slice(1000000000)|list }}", "max_items"),
    "expandtabs": ("{{ ('\\t' * 1000).expandtabs(1000000000) }}", "max_str_len"),
    "float_overflow": ("{{ 10.0 ** 400 }}", "OverflowError"),
    "huge_literal": ("{{ " + "9" * 5000 + " }}", "compiled"),
    "deep_parens": ("{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}", "compiled"),
    "dunder": ("{{ ''.__class__.__mro__ }}", "unsafe"),
    "division": ("{{ 1 // 0 }}", "ZeroDivisionError"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_template_is_a_typed_error(name):
    source, says = HOSTILE[name]
    with pytest.raises(ChatTemplateError) as err:
        render_with_chat_template(MSGS, ChatTemplate(source, {}, f"{name}.jinja"))
    assert err.value.code == "PW810" and says in str(err.value) and f"{name}.jinja" in str(err.value)


def test_ordinary_templates_still_render():
    src = ("{% macro turn(m) %}<{{ m.role }}>{{ m.content|trim }}{% endmacro %}"
           "{% for m in messages %}{{ turn(m) ~ '|' }}{% if loop.last %}{{ '%03d' % loop.length }}{% endif %}"
           "{% endfor %}{{ '{:>4}'.format('x') }}{{ messages|tojson(indent=2)|length > 0 }}")
    out = render_with_chat_template(MSGS * 3, ChatTemplate(src, {}, "ok.jinja"))
    assert out == "<user>hi|<user>hi|<user>hi|003   xTrue"


_PIECES = st.sampled_from([
    "{{ 'a' * N }}", "{{ N ** N }}", "{% for i in range(N) %}X{% endfor %}", "{{ range(N)|list|length }}",
    "{% for i in range(N) %}{% for j in range(N) %}{% endfor %}{% endfor %}", "{{ ('ab' * N)|join('cd') }}",
    "{{ 'x'.center(N) }}", "{{ '%0Nd' % 3 }}", "{{ messages[0].content * N }}", "{{ N * N * N }}",
    "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(N) }}", "{{ lipsum(N) }}", "{{ 'a'|indent(N) }}",
    "{{ [N]|batch(N)|list }}", "{% set ns = namespace(s='x') %}{% for i in range(N) %}{% set ns.s = ns.s ~ ns.s %}"
    "{% endfor %}{{ ns.s|length }}", "{{ raise_exception('no') }}", "{% if %}", "{{ messages[N] }}",
    "{{ ('x' * N).replace('', 'yy') }}", "{{ '{:N}'.format(1) }}", "{{ N // (N - N) }}",
])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.tuples(_PIECES, st.sampled_from(["0", "1", "7", "64", "100000", "999999999",
                                                             "10**12", "(9**9)"])), min_size=1, max_size=4))
def test_any_mix_of_hostile_pieces_renders_or_is_typed(pieces):
    source = "".join(p.replace("N", n) for p, n in pieces)
    out, exc = value_or_error(render_with_chat_template, MSGS, ChatTemplate(source, {}, "fuzz.jinja"),
                              expected=ChatTemplateError)
    if exc is not None:
        assert exc.code == "PW810"
    else:
        assert isinstance(out, str) and len(out) <= 10_000_000


# ------------------------------------------------------------------------------------------ tokenizer folders
def _folder(path: Path, template: str = "{% for m in messages %}[{{ m.content }}]{% endfor %}") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "tokenizer_config.json").write_text(json.dumps({"chat_template": template, "eos_token": "</s>"}))
    return path


def test_template_link_outside_the_folder_is_refused(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("TOP-SECRET-OUTSIDE")
    tok = _folder(tmp_path / "tok")
    (tok / "chat_template.jinja").symlink_to(outside)
    with pytest.raises(ChatTemplateError, match="outside the tokenizer folder"):
        load_chat_template(tok)
    (tok / "chat_template.jinja").unlink()
    (tok / "special_tokens_map.json").symlink_to(outside)  # any of its files
    with pytest.raises(ChatTemplateError, match="outside the tokenizer folder"):
        load_chat_template(tok)


def test_link_loops_and_dangling_links_are_typed(tmp_path):
    tok = _folder(tmp_path / "tok")
    (tok / "chat_template.jinja").symlink_to(tok / "chat_template.jinja")
    with pytest.raises(ChatTemplateError, match="resolves nowhere"):
        load_chat_template(tok)
    (tok / "chat_template.jinja").unlink()
    (tok / "chat_template.jinja").symlink_to(tmp_path / "gone")
    with pytest.raises(ChatTemplateError, match="resolves nowhere"):
        load_chat_template(tok)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(ChatTemplateError, match="no tokenizer folder"):
        load_chat_template(loop)


def test_bad_bytes_and_deep_json_are_typed(tmp_path):
    tok = _folder(tmp_path / "a")
    (tok / "chat_template.jinja").write_bytes(b"\xff\xfe{{ x }}")
    with pytest.raises(ChatTemplateError, match="UTF-8"):
        load_chat_template(tok)
    deep = tmp_path / "b"
    deep.mkdir()
    (deep / "tokenizer_config.json").write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ChatTemplateError):
        load_chat_template(deep)


def test_hugging_face_cache_links_into_its_own_blobs_are_read(tmp_path):
    repo = tmp_path / "hub" / "models--org--tiny"
    (repo / "blobs").mkdir(parents=True)
    snap = repo / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    blob = repo / "blobs" / "0f1e2d"
    blob.write_text(json.dumps({"chat_template": "{{ messages[0].content }}!", "bos_token": "<s>"}))
    (snap / "tokenizer_config.json").symlink_to(Path("../../blobs/0f1e2d"))
    assert render_with_chat_template(MSGS, snap) == "hi!"
    # a blob of another repository of the same cache is outside this one
    other = tmp_path / "hub" / "models--org--other" / "blobs"
    other.mkdir(parents=True)
    (other / "ff").write_text("{{ 'other' }}")
    (snap / "chat_template.jinja").symlink_to(other / "ff")
    with pytest.raises(ChatTemplateError, match="outside the tokenizer folder"):
        check_tokenizer_folder(snap)  # (load_chat_template keeps the folder it read first)


def _view_config(tmp_path: Path, tok: Path) -> Path:
    cfg = tmp_path / "c.py"
    cfg.write_text(textwrap.dedent(f"""
        datasets = [dict(abbr='d', rows=[dict(q='1+1', a='2')],
                         reader_cfg=dict(input_columns=['q'], output_column='a'),
                         infer_cfg=dict(prompt_template=dict(type='PromptTemplate',
                                                             template=dict(round=[dict(role='HUMAN', prompt='{{q}}')])),
                                        retriever=dict(type='ZeroRetriever'),
                                        inferencer=dict(type='GenInferencer')))]
        models = [dict(abbr='m', type='HuggingFacewithChatTemplate', path={str(tok)!r})]
    """))
    return cfg


def test_view_with_a_hostile_tokenizer_folder(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("TOP-SECRET-OUTSIDE")
    tok = _folder(tmp_path / "tok")
    (tok / "chat_template.jinja").symlink_to(outside)
    res = CliRunner().invoke(app, ["view", str(_view_config(tmp_path, tok))])
    assert "TOP-SECRET-OUTSIDE" not in res.output and "[PW001]" not in res.output
    assert "outside the tokenizer folder" in res.output
    for name, (source, _) in HOSTILE.items():
        tok = _folder(tmp_path / f"tok_{name}", source)
        res = CliRunner().invoke(app, ["view", str(_view_config(tmp_path, tok))])
        assert res.exit_code in (0, 2) and "[PW810]" in res.output and "[PW001]" not in res.output, (name, res.output)


def test_view_tokens_never_loads_a_tokenizer_file_linked_outside(tmp_path):
    pytest.importorskip("transformers")
    outside = tmp_path / "outside.json"
    outside.write_text('{"TOP-SECRET-OUTSIDE": 1}')
    tok = _folder(tmp_path / "tok")
    (tok / "tokenizer.json").symlink_to(outside)
    res = CliRunner().invoke(app, ["view", str(_view_config(tmp_path, tok)), "--tokens"])
    out = " ".join(res.output.split())
    assert "[PW001]" not in out and "TOP-SECRET-OUTSIDE" not in out
    assert "cannot load its tokenizer" in out and "outside the tokenizer folder" in out


def test_token_counting_refuses_a_tokenizer_folder_linking_out(tmp_path):
    from promptweave.errors import ConfigError
    from promptweave.models.factory import load_token_counter

    pytest.importorskip("transformers")
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    tok = _folder(tmp_path / "tok")
    (tok / "tokenizer.json").symlink_to(outside)
    with pytest.raises(ConfigError, match="outside the tokenizer folder"):
        load_token_counter({"type": "HuggingFacewithChatTemplate", "path": str(tok)})
