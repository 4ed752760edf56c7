import os
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import settings

from tests import allowlist

ROOT = Path(__file__).resolve().parents[1]
# the shared corpora sit beside the checkout; a worktree elsewhere names them with $PROMPTWEAVE_CONFORMANCE
SHARED = Path(os.environ.get("PROMPTWEAVE_CONFORMANCE") or ROOT.parent / "shared" / "conformance")

# No deadline anywhere: a loaded machine must not turn a slow example into a failure. The per-test time limit is
# pytest-timeout's (pyproject.toml); the seed is fixed per run and printed at the end (see pytest_configure).
settings.register_profile("ci", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

_skips: Counter[str] = Counter()


@pytest.fixture
def shared_corpus() -> Path:
    if not SHARED.exists():
        pytest.skip("../shared/conformance is not beside this checkout")
    return SHARED


def _strict_skips() -> bool:
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("PROMPTWEAVE_STRICT_SKIPS") == "1"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    for line in allowlist.WARNINGS:  # after pyproject's "error": the later filter wins
        config.addinivalue_line("filterwarnings", line)
    if config.getoption("hypothesis_seed", None) is None:
        seed = os.environ.get("PROMPTWEAVE_HYPOTHESIS_SEED") or str(random.SystemRandom().randrange(2**32))
        config.option.hypothesis_seed = int(seed)


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        _skips[_skip_reason(report)] += 1


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.skipped:
        _skips[_skip_reason(report)] += 1


def _unlisted() -> dict[str, int]:
    return {r: n for r, n in _skips.items() if allowlist.allowed(r) is None}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _strict_skips() and _unlisted() and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    tr = terminalreporter
    tr.write_line(f"hypothesis seed: {config.getoption('hypothesis_seed')} (rerun with --hypothesis-seed=N or "
                  "PROMPTWEAVE_HYPOTHESIS_SEED=N)")
    if not _skips:
        return
    tr.section("skips by reason")
    for reason, n in sorted(_skips.items(), key=lambda kv: (-kv[1], kv[0])):
        tr.write_line(f"{n:5d}  {'allowed' if allowlist.allowed(reason) else 'NOT ALLOWED'}  {reason}")
    unlisted = _unlisted()
    if unlisted:
        how = ("fails this run (CI=true)" if _strict_skips() else "would fail CI")
        tr.write_line(f"{sum(unlisted.values())} skip(s) with a reason not in tests/allowlist.py: {how}; run what "
                      "they need, or declare the reason there", red=True)
