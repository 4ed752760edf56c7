"""The plan-time check of a config's keys against ``compat/config_keys.py``: an unknown key is a warning naming it;
a known key that would change what is sent or scored and is not implemented is refused (PW195)."""
from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from promptweave.compat.config_keys import REFUSED, TABLES
from promptweave.errors import UnimplementedKeyError, UnknownConfigKeyWarning

_WHAT = {"dataset": "a dataset", "eval": "an eval_cfg", "model": "a model"}


def _inert(value: Any, inert_values: tuple[Any, ...]) -> bool:
    return any(value == v for v in inert_values)


def check_keys(cfg: Any, scope: str, *, file: str | None, where: str) -> None:
    """Every key of one ``scope`` dict (``dataset``, ``eval``, ``model``) checked against the table."""
    if not isinstance(cfg, Mapping):
        return
    table = TABLES[scope]
    for key, value in cfg.items():
        if not isinstance(key, str):
            continue
        entry = table.get(key)
        if entry is None:
            warnings.warn(UnknownConfigKeyWarning(
                f"{file}: {where}.{key}: not a key promptweave knows for {_WHAT[scope]} config (a typo, or a newer "
                "release's key?): it is not read"), stacklevel=3)
        elif entry.action == REFUSED and not _inert(value, entry.inert_values):
            raise UnimplementedKeyError(f"{key} would change what is sent or scored, and promptweave does not "
                                        "implement it", file=file, field=f"{where}.{key}", value=value,
                                        expected=entry.what)


def check_dataset_keys(raw: Any, *, file: str | None, where: str) -> None:
    """A dataset dict, its ``eval_cfg`` and its judge stage's model."""
    check_keys(raw, "dataset", file=file, where=where)
    if not isinstance(raw, Mapping):
        return
    check_keys(raw.get("eval_cfg"), "eval", file=file, where=f"{where}.eval_cfg")
    judge = raw.get("judge_infer_cfg")
    if isinstance(judge, Mapping):
        check_keys(judge.get("judge_model"), "model", file=file, where=f"{where}.judge_infer_cfg.judge_model")
