#!/usr/bin/env bash
# Wall time of one `vramwatch check` against the usual one-shot tools (`gpustat --json`,
# `nvitop -1`), each run as a whole process on the same emulated host: 8 GPUs, 4 processes each,
# whose PIDs are real sleeping processes (gpustat and nvitop drop PIDs that do not exist).
# Every tool loads the NVML emulator as libnvidia-ml.so.1 and reads the real /proc.
#
#   bench/check_vs_peers.sh [BUILD_DIR] [PYTHON_BIN_DIR]
#     BUILD_DIR       a configured and built tree (default build/release, else build/debug)
#     PYTHON_BIN_DIR  where gpustat and nvitop live (default .venv/bin)
#   RUNS=30 WARMUP=3 change the hyperfine settings.
#
# Uses hyperfine when installed (scripts/bootstrap installs it), else a loop timed with `date`.
# Prints mean ± stddev per tool and the ratio peer / vramwatch (above 1: vramwatch is faster).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-}"
if [ -z "$build" ]; then
  for b in "$here/build/release" "$here/build/debug"; do [ -x "$b/vramwatch" ] && build="$b" && break; done
fi
pybin="${2:-$here/.venv/bin}"
runs="${RUNS:-30}"
warmup="${WARMUP:-3}"
vramwatch="$build/vramwatch"
emulator_dir="$build/emulator"
[ -x "$vramwatch" ] || { echo "check_vs_peers: no vramwatch in '$build' (build it first)" >&2; exit 2; }
[ -f "$emulator_dir/libnvidia-ml.so.1" ] || { echo "check_vs_peers: no emulator in $emulator_dir" >&2; exit 2; }
for tool in gpustat nvitop; do
  [ -x "$pybin/$tool" ] || { echo "check_vs_peers: $pybin/$tool not found (scripts/bootstrap deps --tests)" >&2; exit 2; }
done

scratch="$(mktemp -d)"
sleepers=()
cleanup() {
  for p in "${sleepers[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$scratch"
}
trap cleanup EXIT

for _ in $(seq 32); do
  sleep 600 &
  sleepers+=("$!")
done

{
  echo 'driver_version: "550.54.15"'
  echo 'gpus:'
  for g in $(seq 0 7); do
    printf '  - name: "NVIDIA H100 80GB HBM3"\n'
    printf '    uuid: "GPU-%08d-0000-4000-8000-000000000000"\n' "$g"
    printf '    pci_bus_id: "00000000:%02X:00.0"\n' $((0x18 + g * 16))
    printf '    minor: %d\n    memory_total_mib: 81559\n    memory_reserved_mib: 479\n' "$g"
    printf '    utilization_gpu: 80\n    processes:\n'
    for p in 0 1 2 3; do
      printf '      - {pid: %d, used_mib: %d, sm_util: 50}\n' "${sleepers[$((g * 4 + p))]}" $((1024 * (p + 1)))
    done
  done
} > "$scratch/scenario.yaml"

export VRAMWATCH_EMULATOR_SCENARIO="$scratch/scenario.yaml"
export LD_LIBRARY_PATH="$emulator_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export VRAMWATCH_NVML_LIB="$emulator_dir/libnvidia-ml.so.1"
export TERM="${TERM:-xterm}"

names=(vramwatch gpustat nvitop)
cmds=("$vramwatch check --json --kernel-log none"
      "$pybin/gpustat --json"
      "$pybin/nvitop -1")

# Every tool must see the 32 processes before its time means anything.
"$vramwatch" check --json --kernel-log none > "$scratch/v.json" || true
"$pybin/gpustat" --json > "$scratch/g.json"
n_v=$(grep -c '"listed_by_nvml": true' "$scratch/v.json" || true)
n_g=$(grep -c '"pid"' "$scratch/g.json" || true)
echo "processes seen: vramwatch $n_v, gpustat $n_g (expected 32)"

declare -A mean sd cpu
if command -v hyperfine >/dev/null; then
  hyperfine -N --warmup "$warmup" --runs "$runs" -i --export-json "$scratch/h.json" \
    -n "${names[0]}" "${cmds[0]}" -n "${names[1]}" "${cmds[1]}" -n "${names[2]}" "${cmds[2]}" >/dev/null 2>&1
  while read -r name m s c; do mean[$name]=$m; sd[$name]=$s; cpu[$name]=$c; done < <(
    python3 -c 'import json,sys
for r in json.load(open(sys.argv[1]))["results"]: print(r["command"], r["mean"], r["stddev"] or 0, r["user"] + r["system"])' "$scratch/h.json")
  method="hyperfine -N, $runs runs, $warmup warm-up"
else
  for i in 0 1 2; do
    for _ in $(seq "$warmup"); do ${cmds[$i]} >/dev/null 2>&1 || true; done
    times=()
    for _ in $(seq "$runs"); do
      t0=$(date +%s.%N); ${cmds[$i]} >/dev/null 2>&1 || true; t1=$(date +%s.%N)
      times+=("$(awk -v a="$t1" -v b="$t0" 'BEGIN { print a - b }')")
    done
    read -r m s < <(printf '%s\n' "${times[@]}" | awk '{x+=$1; y+=$1*$1} END {m=x/NR; v=y/NR-m*m; if (v<0) v=0; print m, sqrt(v)}')
    mean[${names[$i]}]=$m; sd[${names[$i]}]=$s; cpu[${names[$i]}]=nan
  done
  method="date loop, $runs runs, $warmup warm-up"
fi

echo "one-shot look at 8 emulated GPUs x 4 processes ($method)"
printf '%-10s %12s %12s %10s %14s\n' tool "mean (ms)" "stddev (ms)" "ratio" "CPU u+s (ms)"
for n in "${names[@]}"; do
  awk -v n="$n" -v m="${mean[$n]}" -v s="${sd[$n]}" -v c="${cpu[$n]}" -v base="${mean[vramwatch]}" \
    'BEGIN {printf "%-10s %12.1f %12.1f %9.2fx %14.1f\n", n, m*1000, s*1000, m/base, c*1000}'
done
