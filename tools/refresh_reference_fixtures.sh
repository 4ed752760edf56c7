#!/usr/bin/env bash
# Re-record what the reference implementations answer in the parity tests, for CI (which has no reference venvs):
#   tests/fixtures/reference_runs.json      every oc_full.run_reference / reference_result call (tests/reference_record.py)
#   tests/e2e/fixtures/aisbench_parity.json AISBench's own CLI on each parity case (with --aisbench-parity: ~1 min a case)
# Needs the venvs of tools/build_reference_venvs.sh, named by PROMPTWEAVE_OC_FULL_VENV and PROMPTWEAVE_AIS_FULL_VENV.
# Usage: tools/refresh_reference_fixtures.sh [--aisbench-parity] [PYTEST ARGS...]
# Review the diff of the fixtures before committing it: a changed answer is a change in the reference or the test data.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${PROMPTWEAVE_OC_FULL_VENV:?name the OpenCompass venv (tools/build_reference_venvs.sh builds .venvs/oc-full)}"
: "${PROMPTWEAVE_AIS_FULL_VENV:?name the AISBench venv (tools/build_reference_venvs.sh builds .venvs/ais-full)}"
export PROMPTWEAVE_OC_FULL_VENV PROMPTWEAVE_AIS_FULL_VENV HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
parity=0
if [ "${1:-}" = "--aisbench-parity" ]; then parity=1; shift; fi
# every test file that asks a reference (new ones are found the same way)
mapfile -t files < <(grep -rlE "from tests.e2e import oc_full|reference_result" tests --include="test_*.py" | sort)
PROMPTWEAVE_RECORD_REFERENCE=1 python -m pytest -q -p no:cacheprovider "${files[@]}" "$@"
# and once more without recording: the fresh record must be what the reference gives now
python -m pytest -q -p no:cacheprovider "${files[@]}" "$@"
if [ "$parity" = 1 ]; then
  python -m tests.e2e.aisbench_parity
fi
