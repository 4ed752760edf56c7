#!/usr/bin/env bash
# Types and lint: mypy over the runner's layers (the [tool.mypy] files in pyproject.toml) and ruff over src and
# tests (pyflakes, pycodestyle, import order). Run from a checkout whose venv has the test extra installed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
"$PY" -m mypy
"$PY" -m ruff check src tests
