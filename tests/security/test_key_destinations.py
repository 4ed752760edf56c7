"""A granted variable reaches only its listed destinations, and a value granted as a key is never text.

``--allow-env NAME`` covers the one host a config sends the key to; a config that sends it to a second host is
refused, naming every host, until each is named (``--allow-env NAME@host``). The dry run lists each host a value
goes to. A config that also reads the key as a plain variable (to put it in a prompt) is refused. The servers are
real loopback HTTP servers that record every header they get.
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.errors import SecretDestinationError
from promptweave.models import build_model
from promptweave.sandbox.env import env_policy, host_matches, origin

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "servers"))
from header_recorder import HeaderRecorder  # noqa: E402

SECRET = "pw-key-value-91ab3f"
VAR = "PWPROBE_API_KEY"


@pytest.fixture
def two_hosts():
    with HeaderRecorder() as a, HeaderRecorder() as b:
        yield a, b


def _config(tmp_path: Path, models: str, template: str = "'{q}'", head: str = "") -> Path:
    cfg = tmp_path / "c.py"
    cfg.write_text(head + textwrap.dedent(f"""
        datasets = [dict(abbr='d', rows=[dict(q='1+1', a='2')],
                         reader_cfg=dict(input_columns=['q'], output_column='a'),
                         infer_cfg=dict(prompt_template=dict(type='PromptTemplate', template={template}),
                                        retriever=dict(type='ZeroRetriever'),
                                        inferencer=dict(type='GenInferencer')),
                         eval_cfg=dict(evaluator=dict(type='AccEvaluator')))]
        models = [{models}]
    """), encoding="utf-8")
    return cfg


def _model(abbr: str, url: str) -> str:
    return f"dict(abbr='{abbr}', type='OpenAISDK', path='gpt', openai_api_base='{url}', key='ENV', api_key_env='{VAR}')"


def _origin(url: str) -> str:
    return url.rsplit("/v1", 1)[0]


def test_a_key_granted_once_does_not_reach_a_second_host(tmp_path, monkeypatch, two_hosts):
    a, b = two_hosts
    monkeypatch.setenv(VAR, SECRET)
    cfg = _config(tmp_path, _model("ma", a.url) + ", " + _model("mb", b.url))
    work = tmp_path / "w"
    # not granted: the refusal names both hosts and the flags for each
    res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(work), "--dry-run"])
    out = " ".join(res.output.split())
    assert res.exit_code == 2 and "[PW145]" in out, out
    assert _origin(a.url) in out and _origin(b.url) in out and f"--allow-env {VAR}@{_origin(b.url)}" in out, out
    # granted bare: one host only; the refusal names them all
    for argv in (["run", str(cfg), "-w", str(work), "--no-progress", "--allow-env", VAR],
                 ["run", str(cfg), "-w", str(work), "--dry-run", "--allow-env", VAR],
                 ["lint", str(cfg), "--allow-env", VAR]):
        res = CliRunner().invoke(app, argv)
        out = " ".join(res.output.split())
        assert res.exit_code == 2 and "[PW146]" in out, (argv, out)
        assert _origin(a.url) in out and _origin(b.url) in out and "models[1].api_key_env" in out, out
        assert SECRET not in out
    # narrowed to the first host: the second is refused, by name
    res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(work), "--no-progress",
                                   "--allow-env", f"{VAR}@{_origin(a.url)}"])
    out = " ".join(res.output.split())
    assert res.exit_code == 2 and "[PW146]" in out and _origin(b.url) in out, out
    assert a.seen == [] and b.seen == []  # nothing was sent by any refused command
    # each host named: the dry run lists both, the run sends the key to both
    grants = ["--allow-env", f"{VAR}@{_origin(a.url)}", "--allow-env", f"{VAR}@{_origin(b.url)}"]
    dry = CliRunner().invoke(app, ["run", str(cfg), "-w", str(work), "--dry-run", *grants])
    assert dry.exit_code == 0, dry.output
    line = " ".join(dry.output.split())
    assert (f"env {VAR} sent as an API key to: {_origin(a.url)} (models[0].api_key_env), "
            f"{_origin(b.url)} (models[1].api_key_env)") in line, line
    res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(work), "--no-progress", *grants])
    assert res.exit_code == 0, res.output
    assert a.seen and b.seen
    assert all(h.get("authorization") == f"Bearer {SECRET}" for h in a.seen + b.seen)


def test_a_bare_grant_binds_to_the_one_host_and_is_listed(tmp_path, monkeypatch, two_hosts):
    a, _ = two_hosts
    monkeypatch.setenv(VAR, SECRET)
    cfg = _config(tmp_path, _model("ma", a.url) + ", " + _model("ma2", a.url))
    dry = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w"), "--dry-run", "--allow-env", VAR])
    assert dry.exit_code == 0, dry.output
    assert f"{_origin(a.url)} (models[0].api_key_env, models[1].api_key_env)" in " ".join(dry.output.split())
    assert SECRET not in dry.output


def test_a_judge_at_another_host_is_a_second_destination(tmp_path, monkeypatch, two_hosts):
    a, b = two_hosts
    monkeypatch.setenv(VAR, SECRET)
    cfg = tmp_path / "c.py"
    cfg.write_text(textwrap.dedent(f"""
        judge = {_model('judge', b.url)}
        datasets = [dict(abbr='d', rows=[dict(q='1+1', a='2')],
                         reader_cfg=dict(input_columns=['q'], output_column='a'),
                         infer_cfg=dict(prompt_template=dict(type='PromptTemplate', template='{{q}}'),
                                        retriever=dict(type='ZeroRetriever'),
                                        inferencer=dict(type='GenInferencer')),
                         eval_cfg=dict(evaluator=dict(
                             type='GenericLLMEvaluator', judge_cfg=judge,
                             prompt_template=dict(type='PromptTemplate', template=dict(round=[
                                 dict(role='HUMAN', prompt='{{q}} {{prediction}} A or B?')])))))]
        models = [{_model('m', a.url)}]
    """), encoding="utf-8")
    res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w"), "--dry-run", "--allow-env", VAR])
    out = " ".join(res.output.split())
    assert res.exit_code == 2 and "[PW146]" in out and "judge_cfg" in out and _origin(b.url) in out, out
    assert a.seen == [] and b.seen == []


def test_a_key_is_never_readable_as_a_plain_variable(tmp_path, monkeypatch, two_hosts):
    a, _ = two_hosts
    monkeypatch.setenv(VAR, SECRET)
    head = f"import os\nleak = os.environ.get('{VAR}', '')\n"
    cfg = _config(tmp_path, _model("m", a.url), template="'{q} ' + leak", head=head)
    work = tmp_path / "w"
    for argv in (["run", str(cfg), "-w", str(work), "--no-progress", "--allow-env", VAR],
                 ["run", str(cfg), "-w", str(work), "--dry-run", "--allow-env", VAR],
                 ["lint", str(cfg), "--allow-env", VAR]):
        res = CliRunner().invoke(app, argv)
        out = " ".join(res.output.split())
        assert res.exit_code == 2 and "[PW147]" in out and VAR in out, (argv, out)
        assert SECRET not in out
    assert a.seen == []
    assert not (work / "predictions").exists()


def test_build_time_refuses_a_host_the_grant_does_not_name(monkeypatch):
    monkeypatch.setenv(VAR, SECRET)
    base = {"type": "OpenAI", "path": "gpt", "key": "ENV", "api_key_env": VAR}
    with env_policy([f"{VAR}@127.0.0.1:8001"]):
        assert build_model({**base, "openai_api_base": "http://127.0.0.1:8001/v1"}).api_key == SECRET
        with pytest.raises(SecretDestinationError) as err:
            build_model({**base, "openai_api_base": "http://127.0.0.1:8002/v1"})
        assert "http://127.0.0.1:8002" in str(err.value) and SECRET not in str(err.value)
    with env_policy([f"{VAR}@127.0.0.1"]):  # a host without a port covers every port of it
        assert build_model({**base, "openai_api_base": "https://127.0.0.1:9/v1"}).api_key == SECRET
        with pytest.raises(SecretDestinationError):
            build_model({**base, "openai_api_base": "http://evil.example/v1"})


@pytest.mark.parametrize(("spec", "url", "ok"), [
    ("api.openai.com", "https://api.openai.com/v1", True),
    ("API.OpenAI.com", "https://api.openai.com/v1", True),
    ("api.openai.com:443", "https://api.openai.com/v1", True),
    ("api.openai.com:8080", "https://api.openai.com/v1", False),
    ("http://api.openai.com", "https://api.openai.com/v1", False),
    ("https://api.openai.com", "https://api.openai.com/v1", True),
    ("api.openai.com", "https://api.openai.com.evil.example/v1", False),
    ("api.openai.com", "https://evil.example/api.openai.com", False),
    ("api.openai.com", "https://api.openai.com@evil.example/v1", False),
    ("[::1]:8000", "http://[::1]:8000/v1", True),
    ("127.0.0.1", "not a url", False),
])
def test_host_matching(spec, url, ok):
    assert host_matches(spec, url) is ok


@settings(max_examples=200, deadline=None)
@given(host=st.from_regex(r"[a-z][a-z0-9-]{0,12}(\.[a-z]{2,5}){0,2}", fullmatch=True),
       port=st.integers(1, 65535), other=st.from_regex(r"[a-z][a-z0-9-]{0,12}(\.[a-z]{2,5}){0,2}", fullmatch=True),
       path=st.text(alphabet="abc/@:.", max_size=12))
def test_a_grant_for_one_host_never_covers_another(host, port, other, path):
    url = f"http://{other}:{port}/{path}"
    assert host_matches(f"{host}:{port}", url) is (host == other)
    assert host_matches(origin(url), url)
