"""Which reference a config's class name comes from, and the implementation meant by it.

Configs name classes by import (``from ais_bench.benchmark.openicl.icl_evaluator import MATHEvaluator``); the
config loader keeps the module beside the name (:class:`~promptweave.sandbox.refs.RefName`). Where AISBench and
OpenCompass give one name different rules, a table holds the reference's own under ``"<module prefix>:<name>"``
(``"ais_bench:BBHEvaluator"``, ``"ais_bench.benchmark.openicl:MATHEvaluator"``); the longest prefix of the
config's module that has an entry wins, else the plain name's entry (OpenCompass's rules) does.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def module_of(t: Any) -> str:
    """The module a config's ``type`` was imported from ('' when unknown)."""
    module = getattr(t, "module", None)
    if isinstance(module, str) and module:
        return module
    if isinstance(t, str) and "." in t:  # a dotted name written out as text
        return t.rsplit(".", 1)[0]
    module = getattr(t, "__module__", None)
    return module if isinstance(module, str) and not module.startswith("promptweave.") else ""


def lookup(table: Mapping[str, Any], t: Any, name: str) -> Any:
    """``table``'s entry for ``name`` as imported by ``t``: the reference-qualified one first, else the plain one."""
    module = module_of(t)
    if module:
        parts = module.split(".")
        for n in range(len(parts), 0, -1):
            hit = table.get(".".join(parts[:n]) + ":" + name)
            if hit is not None:
                return hit
    return table.get(name)
