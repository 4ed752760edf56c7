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
- a value used *as* a credential (a model's API key) is a credential whatever its name, so it
  needs ``--allow-env NAME`` too.

The allow-list is the user's, set once per command (:func:`set_policy`) and handed to Ray
workers with the rest of the run; nothing in a config can widen it.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from promptweave.errors import SecretRefusedError

# Substrings that mark a credential, matched anywhere in the upper-cased name, with or without separators
# around them: ``DBPASSWORD``, ``MYSECRET``, ``my-secret``, ``API_KEY`` and ``APIKEY`` all match.
CREDENTIAL_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "PWD", "CRED", "AUTH",
                      "PRIVATE", "COOKIE", "SESSION", "CERT", "SIGNATURE")
# Words that contain a marker but name no credential; the reference configs read TOKENIZER_MODEL.
# Only the word itself is taken out, so ``TOKENIZER_TOKEN`` is still refused.
_BENIGN_WORDS = ("TOKENIZERS", "TOKENIZER")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,255}")


def looks_secret(name: str) -> bool:
    """Whether an environment variable's name looks like it holds a credential."""
    text = str(name).upper()
    for word in _BENIGN_WORDS:
        text = text.replace(word, "|")
    return any(marker in text for marker in CREDENTIAL_MARKERS)


@dataclass(frozen=True)
class EnvPolicy:
    """What the person running the command allowed: exact names, or everything under ``--trust-config``."""

    allowed: frozenset[str] = frozenset()
    trusted: bool = False

    def allows(self, name: str) -> bool:
        return self.trusted or name in self.allowed


_policy = EnvPolicy()
_reads: dict[str, bool] = {}


def set_policy(allowed: Iterable[str] = (), *, trusted: bool = False) -> EnvPolicy:
    """Install the command's allow-list (``--allow-env``) and forget earlier reads; returns the old policy."""
    global _policy
    old = _policy
    _policy = EnvPolicy(frozenset(str(n) for n in allowed), bool(trusted))
    _reads.clear()
    return old


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
                   file: str | None = None, field: str | None = None) -> str:
    """The name, if the rule lets a config read it; else a typed refusal that says how to allow it."""
    if not isinstance(name, str):
        raise SecretRefusedError("an environment variable name must be a string", file=file, field=field,
                                 value=name, expected="a literal name such as 'MY_DATA_DIR'")
    if not _NAME.fullmatch(name):
        raise SecretRefusedError("not an environment variable name", file=file, field=field, value=name,
                                 expected="letters, digits and '_' (a literal name)")
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
             file: str | None = None, field: str | None = None, reads: dict[str, bool] | None = None
             ) -> str | None:
    """Read one environment variable for a config, under the rule (see the module docstring)."""
    checked = check_env_name(name, credential=credential, purpose=purpose, file=file, field=field)
    value = os.environ.get(checked)
    _reads[checked] = value is not None
    if reads is not None:
        reads[checked] = value is not None
    return default if value is None else value


__all__ = ["CREDENTIAL_MARKERS", "EnvPolicy", "check_env_name", "current_policy", "env_policy", "env_reads",
           "looks_secret", "read_env", "set_policy"]
