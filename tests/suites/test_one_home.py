"""One home per benchmark: what is named after a benchmark (its loaders, evaluators, postprocessors, retrievers,
prompt wrappers) lives in ``suites/``, and every suite is listed once in ``compat/suites.py``."""
from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

from promptweave.compat import suites

SRC = Path(__file__).resolve().parents[2] / "src" / "promptweave"

# benchmark names as they appear in identifiers; a short one must be a whole word of the name, a long one may sit
# inside it (``LongBenchF1Evaluator``, ``hellaswag_with_ice``)
BENCHMARKS = (
    "advglue", "afqmc", "agieval", "aime", "airisk", "anli", "arc", "babilong", "bbeh", "bbh", "bfcl", "bigcode",
    "boolq", "c3", "ceval", "charm", "chartqa", "chembench", "chemexam", "chid", "cibench", "climaqa", "cluewsc",
    "cmmlu", "cmnli", "cmrc", "commonsenseqa", "copa", "crowspairs", "csl", "docvqa", "drcd", "drop", "eprstmt",
    "financeiq", "flores", "fofo", "game24", "gaokao", "gpqa", "gsm8k", "hellaswag", "hle", "humaneval", "ifeval",
    "infinitebench", "infovqa", "iwslt", "jigsaw", "korbench", "lambada", "lawbench", "lcsts", "leval", "livecode",
    "livecodebench", "livemath", "livestembench", "longbench", "lveval", "matbench", "math500", "mathbench", "mbpp",
    "medbullets", "medmcqa", "medqa", "mgsm", "mmlu", "mmmu", "mmstar", "mrcr", "mtbench", "multirc", "musr",
    "naturalquestion", "needlebench", "nejm", "obqa", "ocnli", "ocrbench", "olymmath", "olympiadbench", "omnimath",
    "openbookqa", "phybench", "piqa", "pmmeval", "qasper", "race", "realworldqa", "ruler", "scicode", "simpleqa",
    "siqa", "smolinstruct", "squad", "storycloze", "strategyqa", "summedits", "supergpqa", "sycophancy", "teval",
    "textvqa", "theoremqa", "tnews", "triviaqa", "tydiqa", "videomme", "vocalsound", "wikibench", "wikitext",
    "winogrande", "wsc", "xcopa", "xiezhi", "xsum",
)
# words that say what a definition is, not which benchmark it serves
ROLE_WORDS = re.compile(r"evaluator|evaluate|postprocess(or)?|dataset|loader|retriever|wrapper")

# deliberate exceptions, each with its reason (none now: every benchmark's code is in its suite)
ALLOWED: dict[str, set[str]] = {}


def benchmark_in(name: str) -> str | None:
    """The benchmark a definition's name names, or None."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    words = {w for w in re.split(r"_+", ROLE_WORDS.sub("_", spaced)) if w}
    flat = ROLE_WORDS.sub("", name.lower()).replace("_", "")
    for bench in BENCHMARKS:
        if bench in words or (len(bench) > 4 and bench in flat):
            return bench
    return None


def benchmark_named_outside_suites() -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(("suites/", "compat/")):
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if benchmark_in(node.name) and node.name not in ALLOWED.get(rel, ()):
                    found.append(f"{rel}:{node.lineno} {node.name}")
    return found


def test_the_check_recognises_benchmark_names() -> None:
    assert benchmark_in("LongBenchF1Evaluator") == "longbench"
    assert benchmark_in("hellaswag_with_ice") == "hellaswag"
    assert benchmark_in("Gsm8kEvaluator") == "gsm8k"
    assert benchmark_in("BBHEvaluatorMCQ") == "bbh"
    assert benchmark_in("XiezhiRetriever") == "xiezhi"
    assert benchmark_in("wsc_v2") == "wsc"
    assert benchmark_in("AccEvaluator") is None
    assert benchmark_in("first_option_postprocess") is None
    assert benchmark_in("hf_dataset") is None


def test_no_benchmark_named_definition_outside_suites() -> None:
    assert benchmark_named_outside_suites() == []


def test_every_exception_still_exists() -> None:
    assert isinstance(ALLOWED, dict)
    for rel, names in ALLOWED.items():
        path = SRC / rel
        if not path.exists():  # moved away: the exception is spent
            continue
        defined = {n.name for n in ast.parse(path.read_text(encoding="utf-8")).body
                   if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        assert names <= defined, f"{rel}: {sorted(names - defined)} no longer defined there; drop the exception"


def test_every_suite_is_listed_once_and_offers_only_known_tables() -> None:
    on_disk = {f"promptweave.suites.{p.stem if p.is_file() else p.name}" for p in (SRC / "suites").iterdir()
               if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    listed = list(suites.SUITES)
    assert len(listed) == len(set(listed))
    assert on_disk == set(listed)
    for module in listed:
        mod = importlib.import_module(module)
        tables = {n for n in vars(mod) if n.isupper() and n in suites.TABLES}
        assert tables, f"{module} registers nothing"
        for table in tables:
            assert all(isinstance(k, str) for k in getattr(mod, table)), (module, table)
