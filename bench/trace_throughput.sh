#!/usr/bin/env bash
# Trace parsing throughput (issue 2 "Speed"): generates a large nvidia-smi --query-gpu CSV
# (8 GPUs interleaved, 1 s apart: timestamp, index, uuid, memory.used, memory.total,
# utilization.gpu), then times, in the same run and with the file in the page cache: `wc -l`, the
# bare trace reader, and the whole `vramwatch analyze --json` (the headline: parse, series, verdicts,
# JSON) with two parsing threads (block-parallel), with one thread, and, on more than 2 cores, with
# the default (one parsing thread per core, at most 8). Prints wall and CPU time, MB/s, the ratio to `wc -l` and peak RSS.
#
#   bench/trace_throughput.sh                 # 1000 MB, build/release
#   SIZE_MB=300 REPEAT=5 bench/trace_throughput.sh
#
# Environment:
#   BUILD_DIR    where vramwatch, trace-gen and trace-read-bench were built (default build/release)
#   SIZE_MB      size of the generated file in MB (default 1000)
#   REPEAT       runs of each command; the best wall time is reported, with that run's CPU time
#                and the highest peak RSS of all runs (default 3)
#   READ_CMD     the reader being timed; gets the file as its last argument
#                (default: $BUILD_DIR/bench/trace-read-bench)
#   ANALYZE_CMD  the analyze command (default: $BUILD_DIR/vramwatch analyze --json); "none" skips it
#   KEEP         set to keep the temporary folder
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build/release}"
SIZE_MB="${SIZE_MB:-1000}"
REPEAT="${REPEAT:-3}"
GEN="$BUILD_DIR/bench/trace-gen"
READ_CMD="${READ_CMD:-$BUILD_DIR/bench/trace-read-bench}"
ANALYZE_CMD="${ANALYZE_CMD:-$BUILD_DIR/vramwatch analyze --json}"
[[ "$ANALYZE_CMD" == none ]] && ANALYZE_CMD=""

for tool in "$GEN" "${READ_CMD%% *}" ${ANALYZE_CMD:+"${ANALYZE_CMD%% *}"}; do
  if [[ ! -x "$tool" ]]; then
    echo "missing $tool: build it first (cmake --preset release && cmake --build build/release --target vramwatch trace-gen trace-read-bench)" >&2
    exit 2
  fi
done

TMP="$(mktemp -d "${TMPDIR:-/tmp}/vw-trace-bench.XXXXXX")"
if [[ -z "${KEEP:-}" ]]; then trap 'rm -rf "$TMP"' EXIT; fi
FILE="$TMP/query_gpu_8gpu_1s.csv"

echo "generating ${SIZE_MB} MB of --query-gpu CSV in $TMP ..."
"$GEN" "$FILE" "$SIZE_MB"
BYTES=$(stat -c %s "$FILE")
MB=$(awk -v b="$BYTES" 'BEGIN { printf "%.1f", b / 1e6 }')
cat "$FILE" > /dev/null  # into the page cache, so both readers see the same warm file
echo "file: $MB MB, $(head -c 300 "$FILE" | head -2 | tail -1)"

now() { date +%s.%N; }

# Best wall time of REPEAT runs of "$@" (output discarded), that run's CPU time (user+sys, from
# /usr/bin/time when present) and the highest peak RSS in MiB: "WALL CPU RSS". On a busy machine
# CPU time is the steadier figure.
best_time() {
  local best="" best_cpu="n/a" rss="n/a" start end t cpu rc r
  for ((i = 0; i < REPEAT; i++)); do
    start=$(now)
    if [[ -x /usr/bin/time ]]; then
      /usr/bin/time -f "%U %S %M" -o "$TMP/time.txt" "$@" > /dev/null && rc=0 || rc=$?
      cpu=$(tail -1 "$TMP/time.txt" | awk '{ printf "%.4f", $1 + $2 }')
      r=$(tail -1 "$TMP/time.txt" | awk '{ printf "%.1f", $3 / 1024 }')
      if [[ "$rss" == n/a ]] || awk -v a="$r" -v b="$rss" 'BEGIN { exit !(a > b) }'; then rss="$r"; fi
    else
      "$@" > /dev/null && rc=0 || rc=$?
      cpu="n/a"
    fi
    end=$(now)
    # vramwatch analyze exits 1 or 2 for WARNING/CRITICAL findings; more is a failure.
    if ((rc > 2)); then
      echo "failed (exit $rc): $*" >&2
      exit 1
    fi
    t=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", b - a }')
    if [[ -z "$best" ]] || awk -v t="$t" -v b="$best" 'BEGIN { exit !(t < b) }'; then
      best="$t"
      best_cpu="$cpu"
    fi
  done
  echo "$best $best_cpu $rss"
}

rate() { awk -v mb="$MB" -v s="$1" 'BEGIN { if (s + 0 > 0) printf "%.0f", mb / s; else print "n/a" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "n/a" }'; }
row() {  # row LABEL WALL CPU RSS [NOTE]
  printf "%-22s %-8s %-7s %-7s %-9s %-7s %-7s %s\n" "$1" "$2" "$(rate "$2")" "$3" "$(rate "$3")" \
    "$(ratio "$2" "$WC_S")x" "$4" "${5:-}"
}

read -r WC_S WC_CPU WC_RSS <<< "$(best_time wc -l "$FILE")"
# shellcheck disable=SC2086  # READ_CMD may carry arguments
read -r READ_S READ_CPU READ_RSS <<< "$(best_time $READ_CMD "$FILE")"
CORES=$(nproc)
if [[ -n "$ANALYZE_CMD" ]]; then
  # shellcheck disable=SC2086
  read -r AN_S AN_CPU AN_RSS <<< "$(VRAMWATCH_ANALYZE_THREADS=2 best_time $ANALYZE_CMD "$FILE")"
  # shellcheck disable=SC2086
  read -r AN1_S AN1_CPU AN1_RSS <<< "$(VRAMWATCH_ANALYZE_THREADS=1 best_time $ANALYZE_CMD "$FILE")"
  if ((CORES > 2)); then
    # shellcheck disable=SC2086
    read -r ANN_S ANN_CPU ANN_RSS <<< "$(best_time $ANALYZE_CMD "$FILE")"
  fi
fi
# One more reader run for its own report (records/s).
# shellcheck disable=SC2086
REPORT=$($READ_CMD "$FILE")

echo
echo "                       wall s   MB/s    cpu s   MB/cpu-s  vs wc   RSS MiB"
row "wc -l" "$WC_S" "$WC_CPU" "$WC_RSS"
row "trace reader" "$READ_S" "$READ_CPU" "$READ_RSS" "($READ_CMD)"
if [[ -n "$ANALYZE_CMD" ]]; then
  if ((CORES > 2)); then
    row "analyze (default)" "$ANN_S" "$ANN_CPU" "$ANN_RSS" "($ANALYZE_CMD: min(8, $CORES) parsing threads)"
  fi
  row "analyze (2 threads)" "$AN_S" "$AN_CPU" "$AN_RSS" "(VRAMWATCH_ANALYZE_THREADS=2)"
  row "analyze (1 thread)" "$AN1_S" "$AN1_CPU" "$AN1_RSS" "(VRAMWATCH_ANALYZE_THREADS=1)"
fi
echo "$REPORT" | grep -E '^(records|records_per_s) ' | sed 's/^/  /'
if [[ -n "$ANALYZE_CMD" ]]; then
  echo "ratio analyze/wc -l:   wall $(ratio "$AN_S" "$WC_S")x, cpu $(ratio "$AN_CPU" "$WC_CPU")x  (goal: <= 3x wall)"
else
  echo "ratio reader/wc -l:    wall $(ratio "$READ_S" "$WC_S")x, cpu $(ratio "$READ_CPU" "$WC_CPU")x"
fi
