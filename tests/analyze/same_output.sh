#!/usr/bin/env bash
# `vramwatch analyze --json` must print byte-identical output whatever the reading path: one thread
# (VRAMWATCH_ANALYZE_THREADS=1), block-parallel parsing on 2 and 4 threads (with the default block
# size and with small blocks, VRAMWATCH_ANALYZE_BLOCK_BYTES, so that every file crosses many block
# boundaries), or a pipe (standard input, parsed on one second thread), and, when BASE_VRAMWATCH is
# given, the same as another build (before/after a change). Errors too: the same message (naming
# the same line and column) and exit code.
#
#   same_output.sh VRAMWATCH TRACE_GEN EXAMPLES_DIR [BASE_VRAMWATCH]
#
# Inputs: the bundled examples; a generated 8-GPU --query-gpu capture (30 MB, about 4 days); a
# messier capture made from it (the header repeated, blank lines, CRLF line ends, [N/A] values,
# comments, no final newline); and that capture with one bad value in the middle, read strictly
# (an error) and with --lenient (skipped and reported).
set -euo pipefail
VW="$1"
GEN="$2"
EXAMPLES="$3"
BASE="${4:-}"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/vw-same-output.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

"$GEN" "$TMP/eight_gpus.csv" 30
# 3 MB of it, messier: every 400th line followed by a blank line and the header again, every 7th
# line with CRLF, every 300th memory.used as [N/A], a comment now and then, no final newline.
head -c 3000000 "$TMP/eight_gpus.csv" | head -n -1 | awk 'NR == 1 { h = $0 } { print; if (NR > 1 && NR % 400 == 0) { print ""; print h } }' |
  awk 'NR > 1 && NR % 300 == 0 { sub(/, [0-9]+ MiB, /, ", [N/A], ") } NR % 1000 == 0 { print "# marker " NR }
       { printf "%s%s\n", $0, (NR % 7 == 0 ? "\r" : "") }' |
  head -c -1 > "$TMP/messy.csv"
# One bad memory.used value in the middle.
lines=$(wc -l < "$TMP/messy.csv")
awk -v bad=$((lines / 2)) 'NR == bad { sub(/, [0-9]+ MiB, /, ", 12x4 MiB, ") } { print }' "$TMP/messy.csv" > "$TMP/bad_line.csv"
grep -q "12x4" "$TMP/bad_line.csv"

fail=0
# run NAME ARGS...: analyze's stdout, stderr and exit code into $TMP/NAME.{out,err,rc}.
run() {
  local name="$1"
  shift
  "$@" > "$TMP/$name.out" 2> "$TMP/$name.err" && rc=0 || rc=$?
  echo "$rc" > "$TMP/$name.rc"
}
# same A B WHAT: A's output, message and exit code equal B's.
same() {
  for part in out err rc; do
    cmp -s "$TMP/$1.$part" "$TMP/$2.$part" || {
      echo "FAIL: $3: $part differs ($1 vs $2)"
      diff "$TMP/$1.$part" "$TMP/$2.$part" | head -5
      fail=1
    }
  done
}

# check FILE EXPECT [ARGS...]: EXPECT is "report" (exit 0-2 with a report) or "error" (exit > 2).
check() {
  local f="$1" expect="$2"
  shift 2
  local name
  name="$(basename "$f")${1:+.lenient}"
  run "$name.one" env VRAMWATCH_ANALYZE_THREADS=1 "$VW" analyze --json "$@" "$f"
  run "$name.two" env VRAMWATCH_ANALYZE_THREADS=2 "$VW" analyze --json "$@" "$f"
  run "$name.four" env VRAMWATCH_ANALYZE_THREADS=4 "$VW" analyze --json "$@" "$f"
  run "$name.small" env VRAMWATCH_ANALYZE_THREADS=3 VRAMWATCH_ANALYZE_BLOCK_BYTES=4099 "$VW" analyze --json "$@" "$f"
  run "$name.default" "$VW" analyze --json "$@" "$f"
  run "$name.pipe" "$VW" analyze --json "$@" - < "$f"
  same "$name.one" "$name.two" "$name: 2 threads"
  same "$name.one" "$name.four" "$name: 4 threads"
  same "$name.one" "$name.small" "$name: 3 threads, 4099-byte blocks"
  same "$name.one" "$name.default" "$name: default threads"
  # Standard input is reported as the source "-" (and "<stdin>" in messages and notes); the rest must match.
  sed -e "s#\"source\": \"-\"#\"source\": \"$f\"#" -e "s#^\\( *\\)\"-:#\\1\"$f:#" \
    -e "s#^\\( *\\)\"<stdin>:#\\1\"$f:#" "$TMP/$name.pipe.out" > "$TMP/$name.named.out"
  sed -e "s#<stdin>#$f#g" -e "s#^-:#$f:#" "$TMP/$name.pipe.err" > "$TMP/$name.named.err"
  cp "$TMP/$name.pipe.rc" "$TMP/$name.named.rc"
  same "$name.one" "$name.named" "$name: pipe"
  if [[ -n "$BASE" ]]; then
    run "$name.base" "$BASE" analyze --json "$@" "$f"
    same "$name.one" "$name.base" "$name: $BASE"
  fi
  local rc
  rc=$(cat "$TMP/$name.one.rc")
  if [[ "$expect" == report ]]; then
    if ((rc > 2)) || ! grep -q '"gpus"' "$TMP/$name.one.out"; then
      echo "FAIL: $name: no report (exit $rc): $(head -c 300 "$TMP/$name.one.err")"
      fail=1
    fi
    echo "$name: $(wc -c < "$TMP/$name.one.out") bytes of JSON compared"
  else
    if ((rc <= 2)) || ! grep -q "bad_line.csv:$((lines / 2)):" "$TMP/$name.one.err"; then
      echo "FAIL: $name: expected an error naming line $((lines / 2)), got exit $rc: $(head -c 300 "$TMP/$name.one.err")"
      fail=1
    fi
    echo "$name: error compared: $(head -c 200 "$TMP/$name.one.err")"
  fi
}

for f in "$EXAMPLES"/*.csv "$TMP/eight_gpus.csv" "$TMP/messy.csv"; do
  check "$f" report
done
check "$TMP/bad_line.csv" error
check "$TMP/bad_line.csv" report --lenient
grep -q '"skipped_lines": 1' "$TMP/bad_line.csv.lenient.one.out" ||
  { echo "FAIL: bad_line.csv --lenient: the bad line is not reported as skipped"; fail=1; }
exit $fail
