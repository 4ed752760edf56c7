#!/usr/bin/env bash
# CI: the documentation site builds with no warning (broken links, missing pages, bad docstrings).
set -euo pipefail
cd "$(dirname "$0")/.."
export NO_MKDOCS_2_WARNING=1
python3 -m venv .venv && . .venv/bin/activate && pip install -q -e ".[docs]"
mkdocs build --strict --site-dir "$(mktemp -d)"
