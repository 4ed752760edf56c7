#!/usr/bin/env bash
# Test-lint: checks that keep a green run meaningful (tools/lint_tests.py says what each finds).
#   PT011 pytest.raises(Exception-too-broad) without match   PT012 raises() around more than one statement
#   PT017 assert on an exception inside except (use raises)  B905  zip() without strict= (a short list passes)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v ruff >/dev/null || pip install -q "ruff>=0.5"
ruff check tests --select PT011,PT012,PT017,B905 --output-format concise
python tools/lint_tests.py tests
echo "test-lint: clean"
