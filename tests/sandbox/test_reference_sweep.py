"""Every .py of the installed reference config trees loads in safe and trusted mode, or fails typed."""
from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from promptweave.config.safe_py import SafeConfigLoader
from promptweave.config.trusted_py import run_py_config
from promptweave.errors import PromptweaveError
from promptweave.sandbox.imports import reference_roots

ROOTS = {k: v for k, v in reference_roots().items() if k in ("opencompass.configs", "ais_bench.benchmark.configs")}


@pytest.mark.slow
@pytest.mark.skipif(not ROOTS, reason="no reference package with a config tree is installed")
@pytest.mark.parametrize("trusted", [False, True], ids=["safe", "trusted"])
def test_no_reference_config_gives_a_bare_traceback(trusted):
    loaded, typed, bare = 0, 0, []
    for root in ROOTS.values():
        for f in sorted(Path(root).rglob("*.py")):
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # some configs print in trusted mode
                    run_py_config(f) if trusted else SafeConfigLoader(f).load()
                loaded += 1
            except PromptweaveError:
                typed += 1
            except BaseException as exc:  # noqa: BLE001 - that is what this test looks for
                bare.append(f"{f}: {type(exc).__name__}: {exc}")
    assert not bare, "\n".join(bare[:20])
    assert loaded > 0.95 * (loaded + typed)
