"""The one rule for every environment read a config causes.

A config someone shares must not be able to pick a variable of the person who runs it and
send its value anywhere. So every read a safe config causes (``os.environ.get`` / ``os.getenv``
in a ``.py`` config, a model's ``key='ENV'`` / ``api_key_env``, a judge model's key) goes through
:func:`read_env`:

- the name is a plain string (the interpreter also insists it is written literally);
- every read is recorded, and ``run --dry-run`` lists the names (set / unset, never values);
- a name that looks like a credential (:func:`looks_secret`: a case-insensitive substring match,
  separators ignored) is refused with :class:`~promptweave.errors.SecretRefusedError` unless the
  person running the command allowed that exact name (``--allow-env NAME``);
- a variable whose value is a URL with a login in it (``postgres://user:pw@db/x``) is refused the same way;
- a value used *as* a credential (a model's API key) is a credential whatever its name, so it
  needs ``--allow-env NAME`` too, and goes only to the destinations the grant covers: a bare
  ``--allow-env NAME`` covers the one host the config sends it to (a config that sends it to two hosts
  is refused, naming both), ``--allow-env NAME@host`` names each host (``host``, ``host:port`` or
  ``scheme://host:port``); :func:`~promptweave.models.factory.check_api_keys` checks a config's
  destinations as a whole and binds the grant to them before anything is sent;
- a variable sent as an API key is never also readable by the config as a plain value (it could be
  put in a prompt): such a config is refused (:class:`~promptweave.errors.SecretAsTextError`).

The allow-list is the user's, set once per command (:func:`set_policy`) and handed to Ray
workers with the rest of the run; nothing in a config can widen it.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

from promptweave.errors import SecretDestinationError, SecretRefusedError

# Substrings that mark a credential, matched anywhere in the upper-cased name, with or without separators
# around them: ``DBPASSWORD``, ``MYSECRET``, ``my-secret``, ``API_KEY`` and ``APIKEY`` all match. ``PASS`` covers
# PASSWORD / PASSWD / PASSPHRASE / SMTP_PASS; ``PWD`` covers DB_PWD / MYSQL_PWD (the shell's own ``PWD`` and
# ``OLDPWD``, the working directory, are not credentials: see ``_BENIGN_NAMES``).
CREDENTIAL_MARKERS = ("KEY", "TOKEN", "SECRET", "PASS", "PWD", "CRED", "AUTH", "PRIVATE", "COOKIE", "SESSION",
                      "CERT", "SIGNATURE", "JWT", "DSN", "WEBHOOK", "KUBECONFIG", "NETRC")
# Several words that name a credential together; matched with separators removed from name and marker alike
# (``DATABASE_URL``, ``databaseUrl``, ``AZURE_STORAGE_CONNECTION_STRING``, ``SQLALCHEMY_DATABASE_URI``).
CREDENTIAL_PHRASES = ("CONNECTION_STRING", "CONN_STR", "DATABASE_URL", "DATABASE_URI", "DB_URL", "DB_URI",
                      "MONGO_URL", "MONGO_URI", "MONGODB_URL", "MONGODB_URI", "BROKER_URL")
# Short credential words, matched only as a whole word of the name (``GITLAB_PAT``, ``AZURE_SAS``), and ``PW``
# only as the last word (``LDAP_BIND_PW``; promptweave's own settings start with ``PW_``).
CREDENTIAL_WORDS = ("PAT", "SAS", "OTP", "TOTP", "HMAC")
_LAST_WORDS = ("PW",)
# Words that contain a marker but name no credential; the reference configs read TOKENIZER_MODEL and
# COMPASS_DATA_CACHE. Only the word itself is taken out, so ``TOKENIZER_TOKEN`` is still refused.
_BENIGN_WORDS = ("TOKENIZERS", "TOKENIZER", "COMPASS", "PASSAGES", "PASSAGE", "BYPASS", "PASSTHROUGH", "SURPASS",
                 "AUTHORS", "AUTHOR")
# Whole names that contain a marker and are not credentials: the shell's working-directory variables.
_BENIGN_NAMES = ("PWD", "OLDPWD")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,255}")
_SEPARATORS = re.compile(r"[^A-Z0-9]+")
# ``scheme://user[:password]@host``: a value that carries a login is a credential whatever its name
_USERINFO = re.compile(r"^\s*[A-Za-z][A-Za-z0-9+.\-]*://[^/?#\s@]+@")


def looks_secret(name: str, value: str | None = None) -> bool:
    """Whether an environment variable looks like it holds a credential: by its name, or (given) by its value
    (a URL with a user name or password in it, ``postgres://u:p@db/x``)."""
    text = str(name).upper()
    if value is not None and _USERINFO.match(value):
        return True
    if text in _BENIGN_NAMES:
        return False
    for word in _BENIGN_WORDS:
        text = text.replace(word, "|")
    if any(marker in text for marker in CREDENTIAL_MARKERS):
        return True
    flat = _SEPARATORS.sub("", text.replace("|", "_"))
    if any(_SEPARATORS.sub("", phrase) in flat for phrase in CREDENTIAL_PHRASES):
        return True
    words = [w for w in _SEPARATORS.split(text) if w]
    return any(word in words for word in CREDENTIAL_WORDS) or bool(words and words[-1] in _LAST_WORDS)


@dataclass(frozen=True)
class EnvPolicy:
    """What the person running the command allowed: ``--allow-env`` entries as given (``NAME``, or
    ``NAME@host`` to name a destination of the value as an API key), or everything under ``--trust-config``."""

    allowed: frozenset[str] = frozenset()
    trusted: bool = False

    def names(self) -> frozenset[str]:
        return frozenset(spec.partition("@")[0] for spec in self.allowed)

    def allows(self, name: str) -> bool:
        return self.trusted or name in self.names()

    def destinations(self, name: str) -> tuple[str, ...] | None:
        """The hosts ``NAME@host`` entries name for ``name``; None when only the bare ``NAME`` was given."""
        found = tuple(sorted(spec.partition("@")[2] for spec in self.allowed
                             if spec.partition("@")[0] == name and spec.partition("@")[2]))
        return found or None

    def allows_key(self, name: str, url: object) -> bool:
        """Whether ``name``'s value may go to ``url`` as an API key. A bare ``NAME`` covers any one host here;
        that a config sends it to one host only is checked over the whole config (``models.factory``)."""
        if self.trusted:
            return True
        if name not in self.names():
            return False
        hosts = self.destinations(name)
        return hosts is None or any(host_matches(h, url) for h in hosts)


def origin(url: object) -> str:
    """``scheme://host:port`` of a URL, as the dry run and refusals name a destination."""
    if not isinstance(url, str) or not url:
        return "(no URL)"
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        return url
    if not host:
        return url
    shown = f"[{host}]" if ":" in host else host
    return f"{parts.scheme or 'http'}://{shown}" + (f":{port}" if port is not None else "")


def host_matches(spec: str, url: object) -> bool:
    """Whether ``url`` is a destination ``spec`` names: ``host``, ``host:port`` or ``scheme://host[:port]``;
    the host is compared case-insensitively, the port and the scheme only where the spec gives them."""
    if not isinstance(url, str):
        return False
    try:
        want = urlsplit(spec if "://" in spec else "//" + spec)
        got = urlsplit(url.strip())
        want_port, got_port = want.port, got.port
    except ValueError:
        return False
    if not want.hostname or not got.hostname or want.hostname != got.hostname:
        return False
    if want.scheme and want.scheme.lower() != (got.scheme or "").lower():
        return False
    if want_port is not None:
        default = {"http": 80, "https": 443}.get((got.scheme or "").lower())
        return want_port == (got_port if got_port is not None else default)
    return True


_policy = EnvPolicy()
_reads: dict[str, bool] = {}


def set_policy(allowed: Iterable[str] = (), *, trusted: bool = False) -> EnvPolicy:
    """Install the command's allow-list (``--allow-env``) and forget earlier reads; returns the old policy."""
    global _policy
    old = _policy
    _policy = EnvPolicy(frozenset(str(n) for n in allowed), bool(trusted))
    _reads.clear()
    return old


def narrow_policy(name: str, hosts: Iterable[str]) -> None:
    """Bind a bare ``--allow-env NAME`` to the destinations a config was checked to send it to, so that what
    is built later (here or on a worker, which gets this policy) cannot send it anywhere else."""
    global _policy
    keep = {spec for spec in _policy.allowed if spec.partition("@")[0] != name}
    _policy = EnvPolicy(frozenset(keep | {f"{name}@{h}" for h in hosts}), _policy.trusted)


def current_policy() -> EnvPolicy:
    return _policy


@contextmanager
def env_policy(allowed: Iterable[str] = (), *, trusted: bool = False) -> Iterator[EnvPolicy]:
    """The policy for a block (tests; a Ray worker building a model with the driver's policy)."""
    global _policy
    old, old_reads = _policy, dict(_reads)
    set_policy(allowed, trusted=trusted)
    try:
        yield _policy
    finally:
        _policy = old
        _reads.clear()
        _reads.update(old_reads)


def env_reads() -> dict[str, bool]:
    """Every name read through the rule since the policy was set (name -> whether it was set)."""
    return dict(_reads)


def check_env_name(name: object, *, credential: bool = False, purpose: str = "",
                   file: str | None = None, field: str | None = None, destination: object = None) -> str:
    """The name, if the rule lets a config read it; else a typed refusal that says how to allow it."""
    if not isinstance(name, str):
        raise SecretRefusedError("an environment variable name must be a string", file=file, field=field,
                                 value=name, expected="a literal name such as 'MY_DATA_DIR'")
    if not _NAME.fullmatch(name):
        raise SecretRefusedError("not an environment variable name", file=file, field=field, value=name,
                                 expected="letters, digits and '_' (a literal name)")
    if credential and destination is not None and _policy.allows(name) and not _policy.allows_key(name, destination):
        granted = ", ".join(_policy.destinations(name) or ())
        raise SecretDestinationError(
            f"the config asks to send the environment variable {name!r} as {purpose or 'a credential'}, to "
            f"{origin(destination)}; --allow-env granted it to {granted} only", file=file, field=field,
            expected=f"--allow-env {name}@{origin(destination)} on the command line if you mean to send it there")
    if _policy.allows(name):
        return name
    if credential:
        raise SecretRefusedError(
            f"the config asks to send the environment variable {name!r} as {purpose or 'a credential'}; a "
            "config does not choose which of your secrets leave this machine", file=file, field=field,
            expected=f"--allow-env {name} on the command line if you mean to send it")
    if looks_secret(name):
        raise SecretRefusedError(
            f"reading the environment variable {name!r} is refused in safe mode: its name looks like a "
            "credential", file=file, field=field,
            expected=f"--allow-env {name} on the command line if the config may read it")
    return name


def read_env(name: object, default: str | None = None, *, credential: bool = False, purpose: str = "",
             file: str | None = None, field: str | None = None, reads: dict[str, bool] | None = None,
             destination: object = None) -> str | None:
    """Read one environment variable for a config, under the rule (see the module docstring)."""
    checked = check_env_name(name, credential=credential, purpose=purpose, file=file, field=field,
                             destination=destination)
    value = os.environ.get(checked)
    if value is not None and not credential and not _policy.allows(checked) and looks_secret(checked, value):
        raise SecretRefusedError(
            f"reading the environment variable {checked!r} is refused in safe mode: its value is a URL that "
            "carries a user name or password", file=file, field=field,
            expected=f"--allow-env {checked} on the command line if the config may read it")
    _reads[checked] = value is not None
    if reads is not None:
        reads[checked] = value is not None
    return default if value is None else value


__all__ = ["CREDENTIAL_MARKERS", "CREDENTIAL_PHRASES", "CREDENTIAL_WORDS", "EnvPolicy", "check_env_name",
           "current_policy", "env_policy", "env_reads", "host_matches", "looks_secret", "narrow_policy", "origin",
           "read_env", "set_policy"]
