#!/usr/bin/env bash
# Whole-process cost of `vramwatch watch` on an emulated 8-GPU node with 100 GPU processes at 1 s
# sampling, next to two references on the same emulator: a pynvml polling loop doing the same NVML
# reads, and nvitop's Prometheus exporter (`nvitop-exporter --interval 1`, pip package
# nvitop-exporter, looked for beside PYTHON). Nothing is scraped during the runs.
# Usage: bench/watch_overhead.sh BUILD_DIR [SECONDS] [PYTHON]
# Prints, per run: CPU as % of one core (utime+stime over wall time) and RSS (current and peak).
set -euo pipefail
build=${1:?usage: watch_overhead.sh BUILD_DIR [SECONDS] [PYTHON]}
secs=${2:-60}
python=${3:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
emu="$build/emulator/libnvidia-ml.so.1"

# 8 GPUs; 100 processes spread over them; GPU 0 leaks slowly, the rest sit on plateaus.
{
  echo 'driver_version: "550.54.15"'
  echo 'gpus:'
  pid=20000
  for g in 0 1 2 3 4 5 6 7; do
    printf '  - name: "NVIDIA H100 80GB HBM3"\n    uuid: "GPU-%08d-0000-0000-0000-000000000000"\n' "$g"
    printf '    pci_bus_id: "00000000:%02X:00.0"\n    minor: %d\n    memory_total_mib: 81559\n' $((0x10 + g)) "$g"
    printf '    memory_reserved_mib: 479\n    utilization_gpu: 90\n    processes:\n'
    n=$(( g < 4 ? 13 : 12 ))
    for _ in $(seq 1 "$n"); do
      if [ "$g" = 0 ]; then used='[[0, 1000], [86400, 6000]]'; else used=1000; fi
      printf '      - {pid: %d, type: compute, used_mib: %s, sm_util: 50}\n' "$pid" "$used"
      pid=$((pid + 1))
    done
  done
} > "$work/node8.yaml"
export VRAMWATCH_EMULATOR_SCENARIO="$work/node8.yaml"

measure() {  # measure NAME PID
  local name=$1 pid=$2 tck
  tck=$(getconf CLK_TCK)
  sleep 5  # start-up excluded
  local t0 c0 t1 c1
  t0=$(date +%s.%N); c0=$(awk '{print $14+$15}' "/proc/$pid/stat")
  sleep "$secs"
  t1=$(date +%s.%N); c1=$(awk '{print $14+$15}' "/proc/$pid/stat")
  local rss hwm
  rss=$(awk '/VmRSS/{print $2}' "/proc/$pid/status"); hwm=$(awk '/VmHWM/{print $2}' "/proc/$pid/status")
  awk -v n="$name" -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v k="$tck" -v r="$rss" -v h="$hwm" \
    'BEGIN{printf "%-28s CPU %.2f %% of one core   RSS %.1f MiB   peak RSS %.1f MiB\n", n, 100*(c1-c0)/k/(t1-t0), r/1024, h/1024}'
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

"$build/vramwatch" watch --quiet --nvml-lib "$emu" --listen 127.0.0.1:0 --proc-root /proc & measure "watch (no history)" $!
"$build/vramwatch" watch --quiet --nvml-lib "$emu" --listen 127.0.0.1:0 --db "$work/h.db" & measure "watch --db" $!

cat > "$work/poll.py" <<'PY'
# Reference: what a minimal pynvml exporter loop reads every second.
import time, pynvml
pynvml.nvmlInit()
handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
last_proc = 0.0
while True:
    now = time.time()
    for h in handles:
        pynvml.nvmlDeviceGetMemoryInfo(h)
        pynvml.nvmlDeviceGetUtilizationRates(h)
    if now - last_proc >= 5:
        for h in handles:
            pynvml.nvmlDeviceGetComputeRunningProcesses(h)
        last_proc = now
    time.sleep(max(0.0, 1.0 - (time.time() - now)))
PY
if "$python" -c 'import pynvml' 2>/dev/null; then
  LD_LIBRARY_PATH="$(dirname "$emu")" "$python" "$work/poll.py" & measure "pynvml polling loop" $!
else
  echo "pynvml not available in $python: reference skipped"
fi

exporter="$(dirname "$python")/nvitop-exporter"
if [ -x "$exporter" ]; then
  # Not scraped, like the watch runs above: each collects on its own interval (nvitop-exporter
  # reads NVML every --interval whether or not anyone scrapes). Its first reads of functions the
  # emulator does not export (field values, PCIe throughput) log a traceback once each and then
  # answer N/A; memory, utilisation and processes work.
  LD_LIBRARY_PATH="$(dirname "$emu")" "$exporter" --port $(( 20000 + RANDOM % 20000 )) --interval 1 \
    > "$work/exporter.log" 2>&1 &
  measure "nvitop-exporter --interval 1" $!
else
  echo "nvitop-exporter not found beside $python: reference skipped"
fi
