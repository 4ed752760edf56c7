#!/usr/bin/env bash
# The reference implementations installed WITH their dependencies, each in its own venv, as their users have them:
#   DIR/oc-full   OpenCompass 0.5.4 (+ this checkout, editable, with the math / embed / lawbench extras)
#   DIR/ais-full  AISBench 3.1.20260630 + math-verify 0.5.2 (+ this checkout, editable)
# DIR defaults to .venvs beside this script's checkout. The parity tests use them when named:
#   PROMPTWEAVE_OC_FULL_VENV=DIR/oc-full PROMPTWEAVE_AIS_FULL_VENV=DIR/ais-full
# (tools/refresh_reference_fixtures.sh records their answers for CI). Any failed step stops the script.
# Usage: tools/build_reference_venvs.sh [DIR] [oc|ais|both]   (default: .venvs both)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-.venvs}
which=${2:-both}
mkdir -p "$dir"
constraints=$(mktemp -d)
trap 'rm -rf "$constraints"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1

build_oc() {
  local v="$dir/oc-full" c="$constraints/oc.txt"
  # pyarrow<22: the resolver otherwise picks a pyarrow that refuses to import with numpy 1.26 (and so does datasets)
  printf '%s\n' "torch==2.13.0" "numpy<2" "pyarrow<22" > "$c"
  python3 -m venv "$v"
  "$v/bin/pip" install -q torch==2.13.0
  "$v/bin/pip" install -q -c "$c" "opencompass==0.5.4"
  "$v/bin/pip" install -q -c "$c" -e ".[math,embed,lawbench]"
  "$v/bin/python" -c "import opencompass, mmengine, datasets, promptweave"
  echo "built $v"
}

build_ais() {
  local v="$dir/ais-full" c="$constraints/ais.txt"
  # pyarrow 20+ needs numpy 2; mmengine reads configs through pkg_resources (gone from setuptools 81)
  printf '%s\n' "torch==2.13.0" "numpy<2" "pyarrow<20" "setuptools<81" > "$c"
  python3 -m venv "$v"
  "$v/bin/pip" install -q torch==2.13.0
  "$v/bin/pip" install -q -c "$c" "ais_bench_benchmark==3.1.20260630" "math-verify==0.5.2"
  "$v/bin/pip" install -q -c "$c" -e .
  "$v/bin/python" -c "import ais_bench.benchmark, math_verify, promptweave"
  echo "built $v"
}

case "$which" in
  oc) build_oc ;;
  ais) build_ais ;;
  both) build_oc; build_ais ;;
  *) echo "error: usage: $0 [DIR] [oc|ais|both]" >&2; exit 2 ;;
esac
