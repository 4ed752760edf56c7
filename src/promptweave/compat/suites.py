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
    "promptweave.suites.hle",  # Humanity's Last Exam: loaders, the judge's JSON verdicts (HLEJudgeEvaluator)
    "promptweave.suites.iwslt2017",  # IWSLT 2017: loader
    "promptweave.suites.simpleqa",  # SimpleQA: loader, judge postprocessor (LiveReasonBench's too)
    "promptweave.suites.olymmath",  # OlymMATH: loader
    "promptweave.suites.smolinstruct",  # SMolInstruct: loader
    "promptweave.suites.mrcr",  # MRCR: loader and evaluator
    "promptweave.suites.infovqa",  # InfoVQA: loader
    "promptweave.suites.realworldqa",  # RealWorldQA: loader, the ANSWER: line matched with the gold
    "promptweave.suites.vocalsound",  # VocalSound: loader
    "promptweave.suites.videomme",  # Video-MME: loader
    "promptweave.suites.fofo",  # FoFo: loader
    "promptweave.suites.cmo",  # CMO fill-in-the-blank: loader
    "promptweave.suites.livestembench",  # LiveStemBench: loader
    "promptweave.suites.charm",  # CHARM: loader, the memory task's rule-based evaluator
    "promptweave.suites.teval",  # T-Eval: answer postprocessor
    "promptweave.suites.arc",  # ARC: loader
    "promptweave.suites.race",  # RACE: loader
    "promptweave.suites.openbookqa",  # OpenBookQA: loader
    "promptweave.suites.mathbench",  # MathBench: loader and answer postprocessor
    "promptweave.suites.wikibench",  # WikiBench: loader
    "promptweave.suites.chembench",  # ChemBench: loader
    "promptweave.suites.earth_silver",  # Earth-Silver: loader
    "promptweave.suites.theoremqa",  # TheoremQA: loaders and answer postprocessor
    "promptweave.suites.olympiadbench",  # OlympiadBench: loader and its row-written prompt template
    "promptweave.suites.aime",  # AIME 2024: loader
    "promptweave.suites.matbench",  # MatBench: loader
    "promptweave.suites.phybench",  # PHYBench: loader
    "promptweave.suites.livecodebench",  # LiveCodeBench / LCBench: loader
    "promptweave.suites.bbeh",  # BIG-Bench Extra Hard: loader
    "promptweave.suites.mgsm",  # MGSM: loader and answer postprocessor
    "promptweave.suites.strategyqa",  # StrategyQA: loader and yes/no postprocessors
    "promptweave.suites.advglue",  # AdvGLUE: loader
    "promptweave.suites.anthropic_evals",  # Anthropic's model-written evals (AI risk, persona, sycophancy): loaders
    "promptweave.suites.natural_questions",  # Natural Questions, NQ-Open: loaders and the open-answer evaluator
    "promptweave.suites.chemexam",  # ChemExam: loader and judge-output postprocessor
    "promptweave.suites.omnimath",  # Omni-MATH: loader
    "promptweave.suites.supergpqa",  # SuperGPQA: its judge-output postprocessor
    "promptweave.suites.inverse_ifeval",  # Inverse IFEval: its judge prompt template
    "promptweave.suites.humaneval",  # HumanEval, HumanEval-X: loaders and completion postprocessors
    "promptweave.suites.ifeval",  # IFEval: loader, scored as AISBench scores it (IFEvaluator)
    "promptweave.suites.docvqa",  # DocVQA: loader
    "promptweave.suites.mmstar",  # MMStar: loader
    "promptweave.suites.textvqa",  # TextVQA: loader
    "promptweave.suites.xiezhi",  # Xiezhi: loader and XiezhiRetriever
    "promptweave.suites.qasper",  # QASPER: loader
    "promptweave.suites.clue",  # CLUE / FewCLUE (AFQMC, TNEWS, CLUEWSC, CHID, CSL, EPRSTMT, CMNLI, C3, CMRC, DRCD)
    "promptweave.suites.superglue",  # SuperGLUE (BoolQ, CB, COPA, MultiRC, ReCoRD, WiC, WSC, AX): loaders
    "promptweave.suites.anli",  # ANLI: loader
    "promptweave.suites.summedits",  # SummEdits: loader
    "promptweave.suites.crowspairs",  # CrowS-Pairs (and its Chinese version): loaders
    "promptweave.suites.storycloze",  # StoryCloze: loaders
    "promptweave.suites.financeiq",  # FinanceIQ: loader
    "promptweave.suites.jigsaw",  # Jigsaw Multilingual: loader
    "promptweave.suites.lambada",  # LAMBADA: loader
    "promptweave.suites.mmlu",  # MMLU, MMLU-Pro, MMLU-CF, MMLU-Arabic, CMMLU: loaders
    "promptweave.suites.ceval",  # C-Eval: loader
    "promptweave.suites.commonsenseqa",  # CommonsenseQA (and its Chinese version): loaders
    "promptweave.suites.siqa",  # Social IQa: loaders, the nearest candidate by edit distance (EDAccEvaluator)
    "promptweave.suites.piqa",  # PIQA: loaders
    "promptweave.suites.hellaswag",  # HellaSwag: loaders
    "promptweave.suites.winogrande",  # WinoGrande: loaders
    "promptweave.suites.gsm8k",  # GSM8K: loader, answer postprocessors, numeric-match evaluator
    "promptweave.suites.bbh",  # BIG-Bench Hard: loader, multiple-choice and free-form rules
    "promptweave.suites.triviaqa",  # TriviaQA: loaders and the open-answer evaluator
    "promptweave.suites.gpqa",  # GPQA: loader and option-letter evaluator
    "promptweave.suites.drop",  # DROP (simple-evals) and AdvGLUE's accuracy drop
    "promptweave.suites.xsum",  # XSum: loader and postprocessor
    "promptweave.suites.lcsts",  # LCSTS: loader and postprocessor
    "promptweave.suites.longbench",  # LongBench: its loader and F1 / ROUGE / retrieval / count / code-similarity rules
    "promptweave.suites.bfcl",  # BFCL v3 function calling: its loader, single-turn and relevance scoring
    "promptweave.suites.cibench",  # CIBench: notebooks as chats, the code agent's steps scored per turn
    "promptweave.suites.lawbench",  # LawBench: the 20 tasks' rules (LawBenchEvaluator_<index>)
    "promptweave.suites.game24",  # Game of 24: loader, postprocessor and evaluator (ToTInferencer's datasets)
    "promptweave.suites.pmmeval",  # P-MMEval: the eight multilingual tasks' evaluators and postprocessors
    "promptweave.suites.gaokao",  # GAOKAO-Bench: loader, objective questions (GaokaoBenchEvaluator_<type>)
    "promptweave.suites.mbpp_plus",  # MBPP / MBPP+: loaders, EvalPlus's base and plus tests
    "promptweave.suites.code",  # HumanEval, MBPP pass@k, LCBench: the answers run in the code sandbox
    "promptweave.suites.ruler",  # RULER's synthetic long-context tasks
    "promptweave.suites.needlebench",  # NeedleBench: needle scores (single, multi, parallel) and v2 ATC
    "promptweave.suites.agieval",  # AGIEval: loader and cloze scoring
    "promptweave.suites.atlas",  # ATLAS: the reply's JSON answer block for the judges
    "promptweave.suites.medqa",  # MedMCQA, Medbullets, NEJM AI Bench: loaders, first-option-letter evaluators
    "promptweave.suites.climaqa",  # ClimaQA: its loader (the configs judge with GenericLLMEvaluator)
    "promptweave.suites.musr",  # MuSR: its prompt-building loader and the ANSWER: n evaluator
    "promptweave.suites.flores",  # FLORES: loader, first-line (and jieba-segmented Chinese) postprocessors, BLEU
    "promptweave.suites.livemathbench",  # LiveMathBench: loader and its rule-based evaluator
    "promptweave.suites.aisbench",  # AISBench's own rules where a name means something else in OpenCompass
    "promptweave.suites.aisbench_judge",  # AISBench's LLM-judge verdicts (get_a_or_b, LLMJudgeCorrectEvaluator)
    "promptweave.suites.aisbench_text",  # AISBench's LAMBADA and MGSM rules, its Xsum alias
    "promptweave.suites.longbench_v2",  # LongBench v2: loader, accuracy per difficulty and length
    "promptweave.suites.infinitebench",  # InfiniteBench: its twelve tasks' loaders and scoring rules
    "promptweave.suites.babilong",  # BABILong: its loader (prompts read from the installed reference's source)
    "promptweave.suites.leval",  # L-Eval: long-document exams and generation tasks (OpenCompass and AISBench)
    "promptweave.suites.lveval",  # LV-Eval: eleven tasks at five lengths, keyword-gated F1 and ROUGE
)
"""Every benchmark suite, by module name (import order decides which suite wins a name two of them define)."""

TABLES = ("EVALUATORS", "POSTPROCESSORS", "LOADERS", "JUDGE_POSTPROCESSORS", "JUDGE_TEMPLATES")
"""The registries a suite may add to: a module-level dict of each name (the judge's output postprocessors and
prompt template classes are the last two)."""

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


def resolve(path: str) -> Any:
    """The object a ``"package.module:name"`` path names, its module imported now."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


class Registry(MutableMapping):
    """A compat registry: its own names (the generic engine's) and, behind them, the suites' names for ``table``.

    Its own entries may be ``"package.module:name"`` paths, imported on first use, so the registry imports nothing
    of the engine (compat sits below it). Reads a suite only when a name is not among its own (or when the whole
    registry is listed), so building an ordinary evaluator imports no suite.
    """

    def __init__(self, own: dict[str, Any], table: str) -> None:
        if table not in TABLES:
            raise ValueError(f"unknown suite table {table!r}")
        self.own = own
        self.table = table

    def _own(self, name: str) -> Any:
        value = self.own[name]
        if isinstance(value, str):
            value = self.own[name] = resolve(value)
        return value

    def __getitem__(self, name: str) -> Any:
        if name in self.own:
            return self._own(name)
        return suite_table(self.table)[name]

    def __contains__(self, name: object) -> bool:
        return name in self.own or name in suite_table(self.table)

    def get(self, name: str, default: Any = None) -> Any:
        if name in self.own:
            return self._own(name)
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
