"""The benchmark suites: one line per suite, and the lookup that lets the compat registries reach their names.

A suite (``promptweave/suites/<family>.py`` or a folder with an ``__init__.py``) holds what belongs to one benchmark
family: its evaluators, postprocessors, dataset loaders. It exposes them as module-level dicts named after the
compat registry they join (``EVALUATORS``, ``POSTPROCESSORS``, ``LOADERS``), mapping the reference's names to our
objects. Nothing imports a suite: a compat registry (a :class:`Registry`) that is asked for a name it does not hold
imports the suites listed here by module name, once, and looks the name up in their tables. So the engine
(``evaluate/``, ``data/``, ``infer/``) never depends on a suite, and adding one is its module plus one line below.
"""
from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

SUITES: tuple[str, ...] = (
    "promptweave.suites.bfcl",  # BFCL v3 function calling: its loader, single-turn and relevance scoring
    "promptweave.suites.cibench",  # CIBench: notebooks as chats, the code agent's steps scored per turn
    "promptweave.suites.lawbench",  # LawBench: the 20 tasks' rules (LawBenchEvaluator_<index>)
    "promptweave.suites.game24",  # Game of 24: loader, postprocessor and evaluator (ToTInferencer's datasets)
    "promptweave.suites.pmmeval",  # P-MMEval: the eight multilingual tasks' evaluators and postprocessors
    "promptweave.suites.gaokao",  # GAOKAO-Bench objective questions (GaokaoBenchEvaluator_<type>)
    "promptweave.suites.mbpp_plus",  # MBPP / MBPP+ (EvalPlus's base and plus tests)
    "promptweave.suites.code",  # HumanEval, MBPP pass@k, LCBench: the answers run in the code sandbox
    "promptweave.suites.ruler",  # RULER's synthetic long-context tasks
    "promptweave.suites.needlebench",  # NeedleBench v2 ATC (ancestral trace challenge)
    "promptweave.suites.agieval",  # AGIEval's cloze scoring
    "promptweave.suites.atlas",  # ATLAS: the reply's JSON answer block for the judges
    "promptweave.suites.medqa",  # MedMCQA, Medbullets, NEJM AI Bench: loaders, first-option-letter evaluators
    "promptweave.suites.climaqa",  # ClimaQA: its loader (the configs judge with GenericLLMEvaluator)
    "promptweave.suites.musr",  # MuSR: its prompt-building loader and the ANSWER: n evaluator
    "promptweave.suites.flores",  # FLORES: its first-line (and jieba-segmented Chinese) postprocessors
    "promptweave.suites.livemathbench",  # LiveMathBench: loader and its rule-based evaluator
    "promptweave.suites.aisbench",  # AISBench's own rules where a name means something else in OpenCompass
    "promptweave.suites.infinitebench",  # InfiniteBench: its twelve tasks' loaders and scoring rules
    "promptweave.suites.babilong",  # BABILong: its loader (prompts read from the installed reference's source)
    "promptweave.suites.leval",
    "promptweave.suites.lveval",  # LV-Eval: eleven tasks at five lengths, keyword-gated F1 and ROUGE  # L-Eval: long-document exams and generation tasks (OpenCompass and AISBench)
)
"""Every benchmark suite, by module name (import order decides which suite wins a name two of them define)."""

TABLES = ("EVALUATORS", "POSTPROCESSORS", "LOADERS")
"""The compat registries a suite may add to: a module-level dict of each name."""

_tables: dict[str, dict[str, Any]] = {}


def suite_table(table: str) -> Mapping[str, Any]:
    """Every suite's entries for one registry (``EVALUATORS``, ...), the suites imported on the first call."""
    got = _tables.get(table)
    if got is None:
        got = {}
        for module in SUITES:
            for name, obj in (getattr(importlib.import_module(module), table, None) or {}).items():
                got.setdefault(name, obj)
        _tables[table] = got
    return got


def suite_of(table: str, name: str) -> str | None:
    """The module name of the suite that registers ``name`` in ``table`` (None when none does)."""
    for module in SUITES:
        if name in (getattr(importlib.import_module(module), table, None) or {}):
            return module
    return None


class Registry(MutableMapping):
    """A compat registry: its own names (the generic engine's) and, behind them, the suites' names for ``table``.

    Reads a suite only when a name is not among its own (or when the whole registry is listed), so building an
    ordinary evaluator imports no suite.
    """

    def __init__(self, own: dict[str, Any], table: str) -> None:
        if table not in TABLES:
            raise ValueError(f"unknown suite table {table!r}")
        self.own = own
        self.table = table

    def __getitem__(self, name: str) -> Any:
        try:
            return self.own[name]
        except KeyError:
            return suite_table(self.table)[name]

    def __contains__(self, name: object) -> bool:
        return name in self.own or name in suite_table(self.table)

    def get(self, name: str, default: Any = None) -> Any:
        if name in self.own:
            return self.own[name]
        return suite_table(self.table).get(name, default)

    def __iter__(self) -> Iterator[str]:
        yield from self.own
        yield from (k for k in suite_table(self.table) if k not in self.own)

    def __len__(self) -> int:
        return len(self.own) + sum(1 for k in suite_table(self.table) if k not in self.own)

    def __setitem__(self, name: str, value: Any) -> None:
        self.own[name] = value

    def __delitem__(self, name: str) -> None:
        del self.own[name]

    def __repr__(self) -> str:
        return f"Registry({self.table}: {len(self.own)} own names, suites {', '.join(SUITES)})"
