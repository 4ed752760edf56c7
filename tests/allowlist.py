"""What a green CI run may contain besides passes: the skip reasons allowed and the warnings ignored.

Everything else fails the run:

- a skip whose reason matches none of :data:`SKIPS` fails the session when ``CI=true`` (``.ci/run`` sets it;
  ``PROMPTWEAVE_STRICT_SKIPS=1`` does the same locally), and every run prints its skips counted by reason;
- every warning is an error (``filterwarnings = ["error"]`` in ``pyproject.toml``) except those matched by
  :data:`WARNINGS`, which ``tests/conftest.py`` appends after it.

To allow a new skip: add ``Allowed(pattern, why)`` to :data:`SKIPS`, where ``pattern`` is a regular expression
searched in the skip's reason (the text passed to ``pytest.skip`` / ``skipif(reason=...)``) and ``why`` says why CI
cannot run that test. A skip that only a developer's machine should see (a missing optional install CI has) must
NOT be listed: CI installs it, or the test is wrong. To allow a warning: add a ``filterwarnings`` line
(``"ignore:MESSAGE-REGEX:CATEGORY:MODULE"``, as pytest's ``-W``) to :data:`WARNINGS` with a comment saying whose
it is and why it cannot be fixed here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Allowed:
    pattern: str
    why: str

    def matches(self, reason: str) -> bool:
        return re.search(self.pattern, reason) is not None


SKIPS: tuple[Allowed, ...] = (
    Allowed(r"needs a GPU", "CI's machines have no GPU; the GPU suites run where one is lent"),
    Allowed(r"^\.\./shared/conformance is not beside this checkout",
            "the shared conformance corpora live beside the checkout on the project's machines, not in the "
            "repository; .ci/run runs `promptweave conformance` on them when present"),
    Allowed(r"^could not import 'vllm'", "vLLM is not in the test extra: its wheels need a GPU"),
    Allowed(r"^re-checking the AISBench record needs AISBench installed with its dependencies",
            "the parity tests compare against tests/e2e/fixtures/aisbench_parity.json on every run; re-checking "
            "that record against a live AISBench (a minute a config) is the refresh step "
            "(tools/refresh_reference_fixtures.sh)"),
)

WARNINGS: tuple[str, ...] = (
    # Python's compiler on source text promptweave parses or (trusted) runs: the reference trees' own configs hold
    # invalid escapes ("\\d" in a plain string), and the property tests feed random text; the warning is about that
    # text, not about promptweave
    "ignore:invalid escape sequence:DeprecationWarning",
    "ignore::SyntaxWarning",
)


def allowed(reason: str) -> Allowed | None:
    return next((a for a in SKIPS if a.matches(reason)), None)
