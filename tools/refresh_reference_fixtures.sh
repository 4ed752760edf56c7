#!/usr/bin/env bash
# Re-record what the reference implementations answer in the parity tests, for CI (which has no reference venvs):
#   tests/fixtures/reference_runs.json      every oc_full.run_reference / reference_result call (tests/reference_record.py)
#   tests/e2e/fixtures/aisbench_parity.json AISBench's own CLI on each parity case (with --aisbench-parity: ~1 min a case)
# Needs the venvs of tools/build_reference_venvs.sh, named by PROMPTWEAVE_OC_FULL_VENV and PROMPTWEAVE_AIS_FULL_VENV,
# and runs in the project's test environment (pip install -e ".[test]").
# Usage: tools/refresh_reference_fixtures.sh [--missing] [--aisbench-parity] [PYTEST ARGS...]
#   --missing  run live only the calls with no record or a stale one (a new or changed test); default: all
# Review the diff of the fixtures before committing it: a changed answer is a change in the reference or the test data.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${PROMPTWEAVE_OC_FULL_VENV:?name the OpenCompass venv (tools/build_reference_venvs.sh builds .venvs/oc-full)}"
: "${PROMPTWEAVE_AIS_FULL_VENV:?name the AISBench venv (tools/build_reference_venvs.sh builds .venvs/ais-full)}"
export PROMPTWEAVE_OC_FULL_VENV PROMPTWEAVE_AIS_FULL_VENV HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
mode=1 parity=0
while [ $# -gt 0 ]; do
  case "$1" in
    --missing) mode=missing; shift ;;
    --aisbench-parity) parity=1; shift ;;
    *) break ;;
  esac
done
# every test file that asks a reference (new ones are found the same way)
mapfile -t files < <(grep -rlE "from tests.e2e import oc_full|reference_result" tests --include="test_*.py" | sort)
PROMPTWEAVE_RECORD_REFERENCE=$mode python -m pytest -q -p no:cacheprovider "${files[@]}" "$@"
# and once more as CI runs them, from the record alone: every test finds its record and the digests of its
# inputs are stable (a test whose data changes from run to run cannot be recorded)
env -u PROMPTWEAVE_OC_FULL_VENV -u PROMPTWEAVE_AIS_FULL_VENV python -m pytest -q -p no:cacheprovider "${files[@]}" "$@"
if [ "$parity" = 1 ]; then
  python -m tests.e2e.aisbench_parity
fi
