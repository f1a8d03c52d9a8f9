#!/usr/bin/env bash
# `vramwatch analyze --json` must print byte-identical output whatever the reading path: one thread
# (VRAMWATCH_ANALYZE_THREADS=1) or parsing on a second thread, a mapped file or a pipe (standard
# input), and, when BASE_VRAMWATCH is given, the same as another build (before/after a change).
#
#   same_output.sh VRAMWATCH TRACE_GEN EXAMPLES_DIR [BASE_VRAMWATCH]
#
# Inputs: the bundled examples and a generated 8-GPU --query-gpu capture (30 MB, about 4 days).
set -euo pipefail
VW="$1"
GEN="$2"
EXAMPLES="$3"
BASE="${4:-}"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/vw-same-output.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

"$GEN" "$TMP/eight_gpus.csv" 30
files=("$EXAMPLES"/*.csv "$TMP/eight_gpus.csv")
fail=0
run() {  # run OUT ARGS...: analyze's stdout into OUT; exit codes 0-2 are verdicts
  local out="$1"
  shift
  "$@" > "$out" 2> "$out.err" && rc=0 || rc=$?
  if ((rc > 2)); then
    echo "FAIL: exit $rc from $*: $(cat "$out.err")"
    fail=1
  fi
}
for f in "${files[@]}"; do
  name="$(basename "$f")"
  run "$TMP/$name.two.json" "$VW" analyze --json "$f"
  VRAMWATCH_ANALYZE_THREADS=1 run "$TMP/$name.one.json" "$VW" analyze --json "$f"
  run "$TMP/$name.pipe.json" "$VW" analyze --json - < "$f"
  cmp -s "$TMP/$name.two.json" "$TMP/$name.one.json" || { echo "FAIL: $name: one thread differs from two"; fail=1; }
  # Standard input is reported as the source "-"; everything else must match.
  sed "s#\"source\": \"-\"#\"source\": \"$f\"#" "$TMP/$name.pipe.json" > "$TMP/$name.pipe.named.json"
  cmp -s "$TMP/$name.two.json" "$TMP/$name.pipe.named.json" || { echo "FAIL: $name: pipe differs from file"; fail=1; }
  if [[ -n "$BASE" ]]; then
    run "$TMP/$name.base.json" "$BASE" analyze --json "$f"
    cmp -s "$TMP/$name.two.json" "$TMP/$name.base.json" || { echo "FAIL: $name: differs from $BASE"; fail=1; }
  fi
  grep -q '"gpus"' "$TMP/$name.two.json" || { echo "FAIL: $name: no report"; fail=1; }
  echo "$name: $(wc -c < "$TMP/$name.two.json") bytes of JSON compared"
done
exit $fail
