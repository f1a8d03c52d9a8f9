#!/usr/bin/env bash
# Trace parsing throughput (issue 2 "Speed"): generates a large nvidia-smi --query-gpu CSV
# (8 GPUs interleaved, 1 s apart: timestamp, index, uuid, memory.used, memory.total,
# utilization.gpu), then times reading it through the trace reader and `wc -l` on the same file,
# in the same run, with the file in the page cache. Prints MB/s for both and the ratio.
#
#   bench/trace_throughput.sh                 # 1000 MB, build/release
#   SIZE_MB=200 REPEAT=5 bench/trace_throughput.sh
#
# Environment:
#   BUILD_DIR    where trace-gen and trace-read-bench were built (default build/release)
#   SIZE_MB      size of the generated file in MB (default 1000)
#   REPEAT       runs of each reader; the best is reported (default 3)
#   READ_CMD     the reader being timed; gets the file as its last argument
#                (default: $BUILD_DIR/bench/trace-read-bench)
#   ANALYZE_CMD  if set, also timed on the same file, e.g. "build/release/src/cli/vramwatch analyze --json"
#   KEEP         set to keep the temporary folder
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build/release}"
SIZE_MB="${SIZE_MB:-1000}"
REPEAT="${REPEAT:-3}"
GEN="$BUILD_DIR/bench/trace-gen"
READ_CMD="${READ_CMD:-$BUILD_DIR/bench/trace-read-bench}"
ANALYZE_CMD="${ANALYZE_CMD:-}"

for tool in "$GEN" "${READ_CMD%% *}"; do
  if [[ ! -x "$tool" ]]; then
    echo "missing $tool: build it first (cmake --preset release && cmake --build build/release --target trace-gen trace-read-bench)" >&2
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

# Best wall time of REPEAT runs of "$@" (output discarded), and that run's CPU time (user+sys,
# from /usr/bin/time when present): "WALL CPU". On a busy machine CPU time is the steadier figure.
best_time() {
  local best="" best_cpu="n/a" start end t cpu rc
  for ((i = 0; i < REPEAT; i++)); do
    start=$(now)
    if [[ -x /usr/bin/time ]]; then
      /usr/bin/time -f "%U %S" -o "$TMP/time.txt" "$@" > /dev/null && rc=0 || rc=$?
      cpu=$(awk '{ printf "%.4f", $1 + $2 }' "$TMP/time.txt")
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
  echo "$best $best_cpu"
}

read -r WC_S WC_CPU <<< "$(best_time wc -l "$FILE")"
# shellcheck disable=SC2086  # READ_CMD may carry arguments
read -r READ_S READ_CPU <<< "$(best_time $READ_CMD "$FILE")"
# One more reader run for its own report (records/s, peak RSS).
# shellcheck disable=SC2086
REPORT=$($READ_CMD "$FILE")

rate() { awk -v mb="$MB" -v s="$1" 'BEGIN { if (s + 0 > 0) printf "%.0f", mb / s; else print "n/a" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo
echo "                   wall s   MB/s    cpu s   MB/cpu-s"
printf "wc -l:             %-8s %-7s %-7s %s\n" "$WC_S" "$(rate "$WC_S")" "$WC_CPU" "$(rate "$WC_CPU")"
printf "trace reader:      %-8s %-7s %-7s %s   (%s)\n" "$READ_S" "$(rate "$READ_S")" "$READ_CPU" "$(rate "$READ_CPU")" "$READ_CMD"
echo "$REPORT" | grep -E '^(records|records_per_s|peak_rss_MiB) ' | sed 's/^/  /'
echo "ratio reader/wc:   wall $(ratio "$READ_S" "$WC_S")x, cpu $(ratio "$READ_CPU" "$WC_CPU")x  (goal: <= 3x wall)"

if [[ -n "$ANALYZE_CMD" ]]; then
  # shellcheck disable=SC2086
  read -r AN_S AN_CPU <<< "$(best_time $ANALYZE_CMD "$FILE")"
  printf "analyze:           %-8s %-7s %-7s %s   (%s)\n" "$AN_S" "$(rate "$AN_S")" "$AN_CPU" "$(rate "$AN_CPU")" "$ANALYZE_CMD"
  echo "ratio analyze/wc:  wall $(ratio "$AN_S" "$WC_S")x"
fi
