#!/usr/bin/env bash
# RSS of `vramwatch watch --db` over a long run with process churn: 8 emulated GPUs with 4 process
# slots each; every slot runs a new process for 4 s (staggered across slots), so about 8 processes
# start and 8 end every second, each with its own PID and per-process series.
# Usage: bench/watch_churn.sh BUILD_DIR [SECONDS] [INTERVAL] [db|nodb]   (db: with --db, the default)
# Prints RSS every 10 s, then the mean RSS of the first and last third, the slope of the last third
# (least squares, MiB per minute) and whether RSS stopped rising: "flat" when that slope is at most
# 0.05 MiB/min (3 MiB an hour), else "GROWING". With --db RSS takes about 7 minutes to level off
# (docs/performance.md), so the default run is 10 minutes.
set -euo pipefail
build=${1:?usage: watch_churn.sh BUILD_DIR [SECONDS] [INTERVAL]}
secs=${2:-600}
interval=${3:-200ms}
history=${4:-db}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
emu="$build/emulator/libnvidia-ml.so.1"
life=4
gens=$(( (secs + 30) / life + 1 ))

{
  echo 'driver_version: "550.54.15"'
  echo 'gpus:'
  pid=30000
  for g in 0 1 2 3 4 5 6 7; do
    printf '  - name: "NVIDIA H100 80GB HBM3"\n    uuid: "GPU-%08d-0000-0000-0000-000000000000"\n' "$g"
    printf '    pci_bus_id: "00000000:%02X:00.0"\n    minor: %d\n    memory_total_mib: 81559\n' $((0x10 + g)) "$g"
    printf '    memory_reserved_mib: 479\n    utilization_gpu: 90\n    processes:\n'
    for slot in 0 1 2 3; do
      for gen in $(seq 0 $((gens - 1))); do
        start=$(awk -v g="$gen" -v s="$slot" -v l="$life" 'BEGIN{printf "%.1f", g*l + s*l/4}')
        end=$(awk -v a="$start" -v l="$life" 'BEGIN{printf "%.1f", a + l}')
        printf '      - {pid: %d, type: compute, used_mib: [[%s, 500], [%s, 2000]], sm_util: 50, start_s: %s, end_s: %s}\n' \
          "$pid" "$start" "$end" "$start" "$end"
        pid=$((pid + 1))
      done
    done
  done
} > "$work/churn.yaml"
export VRAMWATCH_EMULATOR_SCENARIO="$work/churn.yaml"
echo "scenario: 8 GPUs, $((pid - 30000)) processes over ${secs} s, each living ${life} s; interval $interval"

db_args=()
[ "$history" = nodb ] || db_args=(--db "$work/h.db")
echo "history: $history"
"$build/vramwatch" watch --quiet --nvml-lib "$emu" --listen 127.0.0.1:0 --proc-root /proc --kernel-log none \
  --interval "$interval" --process-interval "$interval" "${db_args[@]}" &
wpid=$!
samples=()
for t in $(seq 10 10 "$secs"); do
  sleep 10
  rss=$(awk '/VmRSS/{print $2}' "/proc/$wpid/status")
  samples+=("$rss")
  printf 't=%4d s  RSS %.1f MiB\n' "$t" "$(awk -v r="$rss" 'BEGIN{print r/1024}')"
done
hwm=$(awk '/VmHWM/{print $2}' "/proc/$wpid/status")
kill "$wpid"; wait "$wpid" 2>/dev/null || true
printf '%s\n' "${samples[@]}" | awk -v h="$hwm" '
  { v[NR] = $1 }
  END {
    n = NR; k = int(n / 3); if (k < 1) k = 1
    for (i = 1; i <= k; i++) a += v[i]
    for (i = n - k + 1; i <= n; i++) b += v[i]
    a /= k; b /= k
    # Least-squares slope of the last third (samples 10 s apart), in MiB per minute.
    m = (k < 2) ? 2 : k
    if (m > n) m = n
    for (i = n - m + 1; i <= n; i++) { x = (i - (n - m + 1)) * 10; sx += x; sy += v[i]; sxx += x * x; sxy += x * v[i] }
    den = m * sxx - sx * sx
    slope = den > 0 ? (m * sxy - sx * sy) / den * 60 / 1024 : 0
    flat = slope <= 0.05 ? "flat" : "GROWING"
    printf "first third %.1f MiB, last third %.1f MiB (%+.1f %%), last third rising %.2f MiB/min, peak %.1f MiB: %s\n", a/1024, b/1024, 100*(b-a)/a, slope, h/1024, flat
  }'
