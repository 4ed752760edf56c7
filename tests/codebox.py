"""Which code sandbox the tests run model code in: bubblewrap where it works here, else the weaker rlimits mode.

Tests of scoring logic run either way (``CODE_SANDBOX``, ``CODE_EXEC`` for the CLI); the tests of what the sandbox
isolates are marked ``needs_bwrap`` and skip, with the reason, where bubblewrap cannot run.
"""
from __future__ import annotations

import pytest

from promptweave.evaluate import os_sandbox

WHY_NO_BWRAP = os_sandbox.unavailable_reason()
CODE_SANDBOX = os_sandbox.BWRAP if WHY_NO_BWRAP is None else os_sandbox.RLIMITS
CODE_EXEC = ("--allow-code-exec", "--code-sandbox", CODE_SANDBOX)
needs_bwrap = pytest.mark.skipif(WHY_NO_BWRAP is not None, reason=f"needs bubblewrap: {WHY_NO_BWRAP} "
                                 "(apt-get install bubblewrap)")
