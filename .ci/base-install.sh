#!/usr/bin/env bash
# CI: the base install (`pip install -e .`, no extra) is a user too. In a venv of its own it views the quickstart,
# lints the examples and lints a fixed sample of the reference packages' shipped dataset configs without their data.
# A typed refusal naming an extra the config itself needs is fine; the step fails on a traceback, an internal error
# ([PW001]) or a refusal caused by lint's own stand-in models (a [PW640] on models[...] of plain-lm / api-chat).
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
start=$(date +%s)
venv=${PROMPTWEAVE_BASE_VENV:-.venv-base}

python3 -m venv "$venv"
"$venv/bin/pip" install -q -e .
# the config trees only (read, never run), as the README installs them; pip's note on their missing dependencies is
# expected for a --no-deps install
"$venv/bin/pip" install -q --no-deps "opencompass==0.5.4" "ais_bench_benchmark==3.1.20260630" 2>&1 \
  | grep -v -E "^ERROR: pip's dependency resolver does not currently take into account|^(opencompass|ais[-_]bench[-_]benchmark) [^ ]+ requires " >&2 \
  || true
pw="$venv/bin/promptweave"

log=$(mktemp) sample=$(mktemp)
trap 'rm -f "$log" "$sample"' EXIT
installed=$(date +%s)

"$pw" view examples/quickstart.py >"$log" 2>&1 || { cat "$log" >&2; echo "base install: view of the quickstart failed" >&2; exit 1; }

# every line of every file (-v); lint exits 2 when a config has a problem (allowed here), anything else is a crash
lint() { local out=$1 rc=0; shift; "$pw" lint -v "$@" >>"$out" 2>&1 || rc=$?; [ "$rc" -le 2 ] || echo "lint exited $rc" >>"$out"; }
lint "$log" examples/*.py
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
sampled=0
for tree in "$site/opencompass/configs/datasets" "$site/ais_bench/benchmark/configs/datasets"; do
  [ -d "$tree" ] || { echo "base install: $tree is missing (reference config trees not installed)" >&2; exit 1; }
  # a fixed sample: every 40th file in byte order
  mapfile -t files < <(find "$tree" -name '*.py' ! -name '__init__.py' | LC_ALL=C sort | awk 'NR % 40 == 7')
  sampled=$((sampled + ${#files[@]}))
  lint "$sample" --no-data "${files[@]}"
done

# the sample's files are dataset configs: every models[...] in their refusals is one of lint's stand-ins
bad=$( (grep -h -E '^lint exited|Traceback \(most recent call last\)|\[PW001\]' "$log" "$sample";
        grep -h -E '× (plain-lm|api-chat): \[PW640\] ([^ ]*: )?models\[' "$sample") || true)
ok=$(cat "$log" "$sample" | grep -c -E '^ok: .*(dataset config, stand-in models|model\(s\)), ' || true)
refused=$(cat "$log" "$sample" | grep -c -E '^error: .*: [0-9]+ problem\(s\)$' || true)
echo "base install: view ok; lint of the examples and $sampled sampled dataset configs: $ok file(s) ok," \
     "$refused typed refusal(s); install $((installed - start))s, checks $(( $(date +%s) - installed ))s"
if [ -n "$bad" ]; then
  echo "base install: lint failed where it must not (traceback, internal error, or a stand-in model's refusal):" >&2
  echo "$bad" >&2
  exit 1
fi
