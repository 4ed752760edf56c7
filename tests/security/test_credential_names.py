"""The credential rule covers the names real CI systems and clouds give their secrets, and leaves the ordinary
variables configs read alone. A name on the first list is refused without ``--allow-env`` (and read with it); one
on the second is read without a flag."""
from __future__ import annotations

import pytest

from promptweave.errors import SecretRefusedError
from promptweave.sandbox.env import env_policy, looks_secret, read_env

REAL_WORLD_SECRETS = [
    # databases and mail
    "DB_PASS", "SMTP_PASS", "MYSQL_PWD", "DB_PWD", "PGPASSWORD", "PGPASSFILE", "REDIS_PASSWORD", "MYSQL_ROOT_PASSWORD",
    "DATABASE_URL", "SQLALCHEMY_DATABASE_URI", "MONGODB_URI", "CELERY_BROKER_URL", "LDAP_BIND_PW",
    "AZURE_STORAGE_CONNECTION_STRING", "SERVICEBUS_CONNECTION_STRING",
    # CI systems
    "CI_JOB_JWT", "CI_JOB_JWT_V2", "CI_JOB_TOKEN", "CI_REGISTRY_PASSWORD", "GITHUB_TOKEN", "GH_TOKEN",
    "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "CIRCLE_TOKEN", "CODECOV_TOKEN", "SONAR_TOKEN",
    "GITLAB_PAT", "NPM_TOKEN", "NODE_AUTH_TOKEN", "TWINE_PASSWORD", "PYPI_API_TOKEN", "DOCKER_PASSWORD",
    "DOCKER_AUTH_CONFIG", "BUILDKITE_AGENT_ACCESS_TOKEN",
    # error trackers and chat hooks
    "SENTRY_DSN", "SENTRY_AUTH_TOKEN", "SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK", "TEAMS_WEBHOOK_URL",
    # clouds and model hubs
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AZURE_CLIENT_SECRET", "AZURE_STORAGE_SAS",
    "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_API_KEY", "HEROKU_API_KEY", "VAULT_TOKEN", "KUBECONFIG", "NETRC",
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "SSH_AUTH_SOCK", "GPG_PASSPHRASE",
    "SESSION_COOKIE", "JWT_SIGNING_SECRET", "TLS_PRIVATE_KEY", "CLIENT_CERT", "OAUTH_CLIENT_ID",
]

HARMLESS = [
    "HOME", "PATH", "USER", "LANG", "LC_ALL", "SHELL", "TERM", "TMPDIR", "HOSTNAME",
    # the shell's working-directory variables: PWD here is the folder, not a password
    "PWD", "OLDPWD",
    "COMPASS_DATA_CACHE", "AIS_BENCH_DATASETS_CACHE", "HF_HOME", "HF_DATASETS_CACHE", "HF_HUB_OFFLINE",
    "TRANSFORMERS_CACHE", "CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "TOKENIZER_MODEL", "TOKENIZERS_PARALLELISM",
    "LMUData", "MMBENCH_SAMPLE_LIMIT", "MMMU_PRO_SAMPLE_LIMIT", "USER_DATA_DIR", "DATASET_SOURCE", "OPENAI_API_BASE",
    "PASSAGE_FILE", "AUTHOR_NAME", "PW_DRY_DATA_DIR", "PW_TEST_DATA_ROOT", "PYTHONHASHSEED", "SLURM_JOB_ID",
    "GITHUB_SHA", "GITHUB_WORKSPACE", "CI", "RUNNER_TEMP",
]


def test_the_lists_do_not_overlap():
    assert len(REAL_WORLD_SECRETS) >= 36 and not set(REAL_WORLD_SECRETS) & set(HARMLESS)


@pytest.mark.parametrize("name", REAL_WORLD_SECRETS)
def test_real_world_secret_names_are_refused_without_a_flag(name, monkeypatch):
    monkeypatch.setenv(name, "s3cr3t-value")
    assert looks_secret(name)
    with env_policy(), pytest.raises(SecretRefusedError) as err:
        read_env(name)
    assert f"--allow-env {name}" in str(err.value) and "s3cr3t-value" not in str(err.value)
    with env_policy([name]):
        assert read_env(name) == "s3cr3t-value"


@pytest.mark.parametrize("name", HARMLESS)
def test_harmless_names_are_still_readable(name, monkeypatch):
    monkeypatch.setenv(name, "/some/folder")
    assert not looks_secret(name)
    with env_policy():
        assert read_env(name) == "/some/folder"


@pytest.mark.parametrize("value", ["postgres://app:hunter2@db:5432/x", "redis://:pw@cache:6379/0",
                                   "https://user@hooks.example/x", "amqp://guest:guest@mq//"])
def test_a_url_value_with_a_login_is_a_credential_whatever_its_name(value, monkeypatch):
    monkeypatch.setenv("PW_SERVICE_ADDRESS", value)
    with env_policy(), pytest.raises(SecretRefusedError) as err:
        read_env("PW_SERVICE_ADDRESS")
    assert value not in str(err.value)
    with env_policy(["PW_SERVICE_ADDRESS"]):
        assert read_env("PW_SERVICE_ADDRESS") == value


@pytest.mark.parametrize("value", ["http://127.0.0.1:8000/v1", "sqlite:///data/x.db", "/data/x@2.jsonl",
                                   "mailto:someone@example.com"])
def test_a_url_without_a_login_is_not(value, monkeypatch):
    monkeypatch.setenv("PW_SERVICE_ADDRESS", value)
    with env_policy():
        assert read_env("PW_SERVICE_ADDRESS") == value
