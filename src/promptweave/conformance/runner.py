"""Read corpus files, dispatch each case to its checker, tally and report."""
from __future__ import annotations

import difflib
import gzip
import json
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

from promptweave.conformance.outcome import Outcome, Unsupported
from promptweave.conformance.registry import checker_for
from promptweave.errors import CorpusError

# The largest case of the shipped corpora is ~70 KB; a line past this is refused unread (a corpus is input).
MAX_CASE_BYTES = 64_000_000


def _raw_lines(fh: Any, path: Path) -> Iterator[tuple[int, bytes]]:
    """Lines of a (decompressed) binary stream, each read with the length cap, never the whole line at once."""
    lineno = 0
    while True:
        line = fh.readline(MAX_CASE_BYTES + 1)
        if not line:
            return
        lineno += 1
        if len(line) > MAX_CASE_BYTES:
            raise CorpusError(f"a line longer than {MAX_CASE_BYTES} bytes; a corpus holds one case per line",
                              file=f"{path}:{lineno}", expected="the corpus format of SCHEMA.md")
        yield lineno, line


def iter_cases(path: Path) -> Iterator[dict[str, Any]]:
    """The cases of a corpus file (gzip JSONL), streamed; any fault in the file is a typed CorpusError."""
    import zlib

    lineno = 0
    try:
        with (gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")) as fh:
            for lineno, raw in _raw_lines(fh, path):
                if not raw.strip():
                    continue
                try:
                    case = json.loads(raw.decode("utf-8"))
                except UnicodeDecodeError as exc:
                    raise CorpusError(f"not UTF-8 text: {exc.reason}", file=f"{path}:{lineno}") from None
                except ValueError as exc:
                    raise CorpusError(f"not JSON: {exc}", file=f"{path}:{lineno}",
                                      expected="one JSON case per line") from None
                except RecursionError:
                    raise CorpusError("JSON nested too deeply", file=f"{path}:{lineno}") from None
                if not isinstance(case, dict):
                    raise CorpusError("a case must be a JSON object", file=f"{path}:{lineno}",
                                      value=type(case).__name__, expected="one JSON object per line")
                case.setdefault("_file", path.name)
                case.setdefault("_line", lineno)
                yield case
    except (EOFError, zlib.error) as exc:  # a gzip stream cut short or corrupt inside
        raise CorpusError(f"the gzip stream is corrupt: {exc}", file=f"{path}:{lineno + 1}") from None
    except OSError as exc:  # gzip.BadGzipFile included
        raise CorpusError(f"cannot read the corpus: {exc.strerror or exc}", file=str(path),
                          expected="a gzip-compressed JSONL corpus") from None


def _has_braces(value: Any) -> bool:
    if isinstance(value, str):
        return "{" in value or "}" in value
    if isinstance(value, dict):
        return any(_has_braces(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_braces(v) for v in value)
    return False


def is_adversarial(case: dict[str, Any]) -> bool:
    """Adversarial cases hold template syntax in data; we insert it literally, by design."""
    if case.get("adversarial") or "adversarial" in case.get("_file", ""):
        return True
    if case.get("suite") in ("opencompass", "aisbench"):
        return _has_braces(case.get("test")) or _has_braces(case.get("train")) or _has_braces(
            case.get("model_replies")
        )
    return False


@dataclass
class Failure:
    case_id: str
    file: str
    detail: str
    expected: Any
    got: Any


@dataclass
class Report:
    counts: Counter = field(default_factory=Counter)  # (suite, kind, status) -> n
    failures: list[Failure] = field(default_factory=list)
    adversarial_same: int = 0
    adversarial_differ: int = 0
    seconds: float = 0.0

    @property
    def passed(self) -> int:
        return sum(n for (_, _, s), n in self.counts.items() if s == "passed")

    @property
    def failed(self) -> int:
        return sum(n for (_, _, s), n in self.counts.items() if s == "failed")

    @property
    def unsupported(self) -> int:
        return sum(n for (_, _, s), n in self.counts.items() if s == "unsupported")


def run_cases(cases: Iterable[dict[str, Any]], report: Report | None = None) -> Report:
    report = report or Report()
    for case in cases:
        suite, kind = case.get("suite", "?"), case.get("kind", "?")
        suite, kind = (v if isinstance(v, str) else repr(v)[:40] for v in (suite, kind))  # a corpus is input
        check = checker_for(suite, kind)
        adversarial = is_adversarial(case)
        if check is None:
            report.counts[(suite, kind, "unsupported")] += 1
            continue
        try:
            outcome: Outcome = check(case)
        except Unsupported:
            report.counts[(suite, kind, "unsupported")] += 1
            continue
        except Exception as exc:  # a crash is a failure, reported with its type
            outcome = Outcome(False, got=f"{type(exc).__name__}: {exc}", expected=case.get("expected"),
                              detail="raised")
            if adversarial:
                report.counts[(suite, kind, "failed")] += 1
                report.failures.append(Failure(case.get("id", "?"), case.get("_file", ""), outcome.detail,
                                               outcome.expected, outcome.got))
                continue
        if adversarial:
            # Here the reference re-substitutes data as template syntax and we do not:
            # a difference is expected, only a crash counts against us.
            if outcome.passed:
                report.adversarial_same += 1
            else:
                report.adversarial_differ += 1
            report.counts[(suite, kind, "adversarial")] += 1
            continue
        status = "passed" if outcome.passed else "failed"
        report.counts[(suite, kind, status)] += 1
        if not outcome.passed:
            report.failures.append(Failure(case.get("id", "?"), case.get("_file", ""), outcome.detail,
                                           outcome.expected, outcome.got))
    return report


def run_files(paths: Iterable[Path]) -> Report:
    report = Report()
    start = time.perf_counter()
    # Reference configs trip our config warnings by the hundred; the verdicts are what matter here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in paths:
            run_cases(iter_cases(Path(path)), report)
    report.seconds = time.perf_counter() - start
    return report


def _as_text(value: Any) -> list[str]:
    if isinstance(value, str):
        return value.splitlines(keepends=True) or [""]
    return json.dumps(value, indent=1, ensure_ascii=False).splitlines(keepends=True)


def print_report(report: Report, out: TextIO, *, show: int = 3) -> None:
    suites = sorted({(s, k) for (s, k, _) in report.counts})
    for suite, kind in suites:
        c = {st: report.counts.get((suite, kind, st), 0) for st in ("passed", "failed", "unsupported", "adversarial")}
        line = f"{suite:12} {kind:12} passed {c['passed']:6}  failed {c['failed']:5}  unsupported {c['unsupported']:5}"
        if c["adversarial"]:
            line += f"  adversarial {c['adversarial']:4}"
        print(line, file=out)
    adv = report.adversarial_same + report.adversarial_differ
    if adv:
        print(
            f"adversarial: {adv} cases run with single-pass filling (data never re-read as template syntax): "
            f"{report.adversarial_same} identical to the reference, {report.adversarial_differ} differ by design",
            file=out,
        )
    for failure in report.failures[:show]:
        print(f"\nFAILED {failure.case_id} ({failure.file}) {failure.detail}", file=out)
        diff = difflib.unified_diff(_as_text(failure.expected), _as_text(failure.got), "expected", "got", n=2)
        text = "".join(diff)
        print(text[:4000], file=out)
    if len(report.failures) > show:
        print(f"... and {len(report.failures) - show} more failures", file=out)
    if report.unsupported:
        print(f"{report.unsupported} unsupported (kinds not implemented yet; not counted as passed)", file=out)
    print(f"time: {report.seconds:.1f}s", file=out)
    print(f"{report.passed} passed, {report.failed} failed", file=out)
