"""Issue 22, item 1: every environment read a safe config causes goes through one rule.

Literal names only, listed by ``run --dry-run``, credential-looking names refused (substring match,
separators ignored), and a model's API key read only from a variable the user allowed with
``--allow-env``. The server below is a real HTTP server on loopback that records every header it gets.
"""
from __future__ import annotations

import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.config import load_config
from promptweave.errors import SecretRefusedError
from promptweave.models import build_model
from promptweave.sandbox.env import CREDENTIAL_MARKERS, env_policy, looks_secret, read_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "servers"))
from header_recorder import HeaderRecorder  # noqa: E402

SECRET = "pw-secret-value-7d1c0e"


@pytest.fixture
def recorder():
    with HeaderRecorder() as server:
        yield server


def _config(tmp_path: Path, url: str, model_extra: str) -> Path:
    cfg = tmp_path / "c.py"
    cfg.write_text(textwrap.dedent(f"""
        datasets = [dict(abbr='d', rows=[dict(q='1+1', a='2')],
                         reader_cfg=dict(input_columns=['q'], output_column='a'),
                         infer_cfg=dict(prompt_template=dict(type='PromptTemplate', template='{{q}}'),
                                        retriever=dict(type='ZeroRetriever'),
                                        inferencer=dict(type='GenInferencer')),
                         eval_cfg=dict(evaluator=dict(type='AccEvaluator')))]
        models = [dict(abbr='m', type='OpenAISDK', path='gpt', openai_api_base='{url}', {model_extra})]
    """))
    return cfg


def _everything_written(work: Path) -> bytes:
    out = b""
    for p in work.rglob("*"):
        if p.is_file():
            out += p.read_bytes()
    db = work / "cache.sqlite"
    if db.exists():  # and what SQLite holds, row by row (pages may be compressed by nothing, but be sure)
        with sqlite3.connect(db) as con:
            for (name,) in con.execute("select name from sqlite_master where type='table'"):
                out += repr(con.execute(f"select * from {name}").fetchall()).encode()
    return out


@pytest.mark.parametrize("name", ["DBPASSWORD", "MYSECRET", "PWPROBEPASSWORD", "OPENAI_API_KEY", "api-key",
                                  "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "db_passwd", "HF_AUTH",
                                  "SSH_PRIVATE", "PGPASSFILE_PWD", "MY_CREDS", "TOKENIZER_TOKEN", "apikey"])
def test_credential_looking_names(name):
    assert looks_secret(name)


@pytest.mark.parametrize("name", ["HOME", "COMPASS_DATA_CACHE", "PW_DRY_DATA_DIR", "TOKENIZER_MODEL", "LMUData", "DATASET_SOURCE",
                                  "TOKENIZERS_PARALLELISM", "PW_TEST_DATA_ROOT", "MMBENCH_SAMPLE_LIMIT"])
def test_ordinary_names(name):
    assert not looks_secret(name)


@settings(max_examples=200, deadline=None)
@given(prefix=st.text(alphabet="ABCDEFGHIJLMNOQRUVWXYZ_-0123456789", max_size=8),
       suffix=st.text(alphabet="ABCDEFGHIJLMNOQRUVWXYZ_-0123456789", max_size=8),
       marker=st.sampled_from(CREDENTIAL_MARKERS), lower=st.booleans())
def test_any_name_holding_a_marker_is_refused_unless_allowed(prefix, suffix, marker, lower):
    name = f"X{prefix}{marker}{suffix}"
    # words that hold a marker but name no credential are read freely, by design (docs/secrets.md)
    assume(not any(w in name.upper() for w in ("TOKENIZER", "COMPASS", "PASSAGE", "BYPASS", "PASSTHROUGH",
                                                 "SURPASS", "AUTHOR")))
    name = name.lower() if lower else name
    assert looks_secret(name)
    with env_policy():
        with pytest.raises(SecretRefusedError):
            read_env(name)
    with env_policy([name]):
        read_env(name)  # allowed by the user: read (set or not)


def test_config_reads_of_credentials_are_refused_and_allowed_by_name(tmp_path, monkeypatch):
    monkeypatch.setenv("DBPASSWORD", SECRET)
    cfg = tmp_path / "c.py"
    cfg.write_text("import os\nx = os.environ.get('DBPASSWORD')\n"
                   "models = [dict(abbr=x or 'none', type='OpenAI', path='p', openai_api_base='http://127.0.0.1:9')]\n")
    with env_policy(), pytest.raises(SecretRefusedError, match="--allow-env DBPASSWORD") as err:
        load_config(cfg)
    assert SECRET not in str(err.value) and err.value.code == "PW145" and "c.py:2" in str(err.value)
    with env_policy(["DBPASSWORD"]):
        assert load_config(cfg).models[0]["abbr"] == SECRET


def test_yaml_never_expands_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("PW_YAML_SECRET_TOKEN", SECRET)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("models:\n  - abbr: ${PW_YAML_SECRET_TOKEN}\n    type: OpenAI\n    path: $HOME\n")
    with env_policy():
        c = load_config(cfg)
    assert c.models[0]["abbr"] == "${PW_YAML_SECRET_TOKEN}" and c.models[0]["path"] == "$HOME"
    assert c.env_reads == {}


def test_api_key_comes_only_from_a_variable_the_user_allowed(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("HOME_LIKE", SECRET)
    base = {"type": "OpenAI", "path": "gpt", "openai_api_base": "http://127.0.0.1:9/v1"}
    with env_policy():
        assert build_model(base).api_key is None  # no key asked, none allowed: none sent
        assert build_model({**base, "key": "sk-literal"}).api_key == "sk-literal"
        for asks in ({"key": "ENV"}, {"key": "ENV", "api_key_env": "HOME_LIKE"}, {"api_key_env": "DBPASSWORD"}):
            with pytest.raises(SecretRefusedError, match="--allow-env"):
                build_model({**base, **asks})  # any variable sent as a key is a credential, whatever its name
    with env_policy(["OPENAI_API_KEY"]):
        assert build_model(base).api_key == SECRET
        assert build_model({**base, "key": "ENV"}).api_key == SECRET
        with pytest.raises(SecretRefusedError):
            build_model({**base, "key": "ENV", "api_key_env": "HOME_LIKE"})  # allowing one name allows no other


def test_safe_config_cannot_send_a_secret_to_its_own_server(tmp_path, monkeypatch, recorder):
    monkeypatch.setenv("PWPROBEPASSWORD", SECRET)
    url = recorder.url
    cfg = _config(tmp_path, url, "key='ENV', api_key_env='PWPROBEPASSWORD'")
    work = tmp_path / "w"
    for argv in (["run", str(cfg), "-w", str(work), "--no-progress"],
                 ["run", str(cfg), "-w", str(work), "--no-progress", "--dry-run"],
                 ["lint", str(cfg)]):
        res = CliRunner().invoke(app, argv)
        assert res.exit_code == 2, res.output
        assert "[PW145]" in res.output and "--allow-env PWPROBEPASSWORD" in res.output, res.output
        assert SECRET not in res.output
    assert recorder.seen == []  # nothing was sent at all
    assert SECRET.encode() not in _everything_written(work) if work.exists() else True


def test_allowed_key_is_sent_as_the_header_and_stored_nowhere(tmp_path, monkeypatch, recorder):
    monkeypatch.setenv("PWPROBEPASSWORD", SECRET)
    url = recorder.url
    cfg = _config(tmp_path, url, "key='ENV', api_key_env='PWPROBEPASSWORD'")
    work = tmp_path / "w"
    dry = CliRunner().invoke(app, ["run", str(cfg), "-w", str(work), "--dry-run", "--allow-env", "PWPROBEPASSWORD"])
    assert dry.exit_code == 0, dry.output
    assert "PWPROBEPASSWORD (set)" in dry.output and SECRET not in dry.output
    res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(work), "--no-progress",
                                   "--allow-env", "PWPROBEPASSWORD"])
    assert res.exit_code == 0, res.output
    assert recorder.seen and all(h.get("authorization") == f"Bearer {SECRET}" for h in recorder.seen)
    assert (work / "report.html").exists()
    assert SECRET.encode() not in _everything_written(work)
    assert SECRET not in res.output


def test_a_judge_model_key_is_under_the_same_rule(tmp_path, monkeypatch, recorder):
    monkeypatch.setenv("MYSECRET", SECRET)
    cfg = tmp_path / "c.py"
    cfg.write_text(textwrap.dedent(f"""
        judge = dict(type='OpenAISDK', abbr='judge', path='j', openai_api_base='{recorder.url}', key='ENV',
                     api_key_env='MYSECRET')
        datasets = [dict(abbr='d', rows=[dict(q='1+1', a='2')],
                         reader_cfg=dict(input_columns=['q'], output_column='a'),
                         infer_cfg=dict(prompt_template=dict(type='PromptTemplate', template='{{q}}'),
                                        retriever=dict(type='ZeroRetriever'),
                                        inferencer=dict(type='GenInferencer')),
                         eval_cfg=dict(evaluator=dict(
                             type='GenericLLMEvaluator', judge_cfg=judge,
                             prompt_template=dict(type='PromptTemplate', template=dict(round=[
                                 dict(role='HUMAN', prompt='{{q}} {{prediction}} A or B?')])))))]
        models = [dict(abbr='m', type='OpenAISDK', path='gpt', openai_api_base='{recorder.url}', key='EMPTY')]
    """))
    for argv in (["lint", str(cfg)], ["run", str(cfg), "-w", str(tmp_path / "w"), "--dry-run"]):
        res = CliRunner().invoke(app, argv)
        assert res.exit_code == 2 and "[PW145]" in res.output, res.output
        assert "datasets[0].eval_cfg.evaluator.judge_cfg.api_key_env" in " ".join(res.output.split())
    dry = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w"), "--dry-run", "--allow-env", "MYSECRET"])
    assert "MYSECRET (set)" in dry.output and SECRET not in dry.output
    assert recorder.seen == []
