"""The OpenCompass users' environment: opencompass installed *with* its dependencies in its own venv
(named by ``$PROMPTWEAVE_OC_FULL_VENV``; built by ``tools/build_reference_venvs.sh`` or as docs/lint.md's
"Reference environments" says). Tests that need it skip, saying how to build it, when it is absent."""
from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest


def venv() -> Path | None:
    """The full environment, when ``$PROMPTWEAVE_OC_FULL_VENV`` names one: opt-in, as its runs take minutes."""
    if not os.environ.get("PROMPTWEAVE_OC_FULL_VENV"):
        return None
    root = Path(os.environ["PROMPTWEAVE_OC_FULL_VENV"])
    py = root / "bin" / "python"
    return root if py.is_file() else None


def python_or_skip() -> Path:
    root = venv()
    if root is None:
        pytest.skip("needs OpenCompass installed with its dependencies in a venv named by "
                    "$PROMPTWEAVE_OC_FULL_VENV: python -m venv V; V/bin/pip install torch==2.13.0; "
                    "V/bin/pip install -c <(echo torch==2.13.0) 'opencompass==0.5.4' 'numpy<2'; "
                    "V/bin/pip install -e . (see docs/lint.md)")
    return root / "bin" / "python"


def run_reference(code: str, payload: dict, *, cwd: Path, env: dict | None = None, timeout: int = 600) -> dict:
    """Run ``code`` (which reads ``PAYLOAD`` and sets ``RESULT``) with the full environment's interpreter."""
    py = python_or_skip()
    script = ("import json, sys\nPAYLOAD = json.loads(sys.stdin.read())\nRESULT = None\n"
              + textwrap.dedent(code) + "\nprint('@@RESULT@@' + json.dumps(RESULT))\n")
    full_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    full_env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **(env or {})})
    out = subprocess.run([str(py), "-c", script], input=json.dumps(payload), capture_output=True, text=True,
                         cwd=cwd, env=full_env, timeout=timeout)
    assert out.returncode == 0, out.stderr[-3000:]
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("@@RESULT@@")][-1]
    return json.loads(line[len("@@RESULT@@"):])
