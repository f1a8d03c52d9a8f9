#!/usr/bin/env bash
# Runs scripts/gpu-smoke without a GPU: vramwatch reads the NVML emulator, and a stand-in
# nvidia-smi prints what the real one would for the same scenario. Checks that a matching host
# passes and that a 1 GiB disagreement fails.
#   gpu_smoke_selftest.sh SOURCE_DIR VRAMWATCH EMULATOR_LIB
set -euo pipefail
src="$1" bin="$2" lib="$3"
work="$(mktemp -d)"
sleep 300 &
holder=$!
trap 'kill $holder 2>/dev/null || true; rm -rf "$work"' EXIT

cat >"$work/scenario.yaml" <<YAML
driver_version: "550.54.15"
gpus:
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-aaaaaaaa-0000-4000-8000-000000000000"
    pci_bus_id: "00000000:3B:00.0"
    minor: 0
    memory_total_mib: 81559
    memory_reserved_mib: 479
    unattributed_mib: 20
    processes:
      - {pid: $holder, used_mib: 10240, sm_util: 50}
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-bbbbbbbb-0000-4000-8000-000000000000"
    pci_bus_id: "00000000:5E:00.0"
    minor: 1
    memory_total_mib: 81559
    memory_reserved_mib: 479
YAML

# used = 10240 + 20; free = total - reserved - used
fake() {  # $1: used MiB that the stand-in reports for GPU 0
  cat >"$work/nvidia-smi" <<SH
#!/bin/sh
case "\$*" in
  *--query-gpu=index,uuid,*) printf '0, GPU-aaaaaaaa-0000-4000-8000-000000000000, 81559, $1, $((81559 - 479 - $1)), NVIDIA H100 80GB HBM3, 00000000:3B:00.0, 550.54.15\n1, GPU-bbbbbbbb-0000-4000-8000-000000000000, 81559, 0, 81080, NVIDIA H100 80GB HBM3, 00000000:5E:00.0, 550.54.15\n' ;;
  *--query-gpu=uuid,memory.reserved*) printf 'GPU-aaaaaaaa-0000-4000-8000-000000000000, 479\nGPU-bbbbbbbb-0000-4000-8000-000000000000, 479\n' ;;
  *--query-gpu=uuid,memory.used*) printf 'GPU-aaaaaaaa-0000-4000-8000-000000000000, $1\nGPU-bbbbbbbb-0000-4000-8000-000000000000, 0\n' ;;
  *--query-compute-apps=*) printf '$holder, 10240, GPU-aaaaaaaa-0000-4000-8000-000000000000\n' ;;
  *) exit 1 ;;
esac
SH
  chmod +x "$work/nvidia-smi"
}

run() {
  VRAMWATCH_EMULATOR_SCENARIO="$work/scenario.yaml" VRAMWATCH_NVML_LIB="$lib" NVIDIA_SMI="$work/nvidia-smi" \
    NVCC=/nonexistent/nvcc TORCH_PYTHON=/nonexistent/python3 "$src/scripts/gpu-smoke" --bin "$bin"
}

fake 10260
out="$(run)" || { echo "gpu-smoke failed on a matching host:"; echo "$out"; exit 1; }
echo "$out"
for row in "GPU 0 memory.total" "GPU 1 memory.free" "GPU 0 name" "GPU 1 pci.bus_id" "GPU 0 memory.reserved" \
  "driver version" "app $holder used_memory" "CUDA holder" "device-file holder *SKIP" "record writes samples *PASS" \
  "analyze reads the recording *PASS" "watch serves *PASS" "/metrics used GPU-aaaaaaaa *PASS" "/metrics used GPU-bbbbbbbb *PASS" \
  "/api/v1/status *PASS" "NVML call timings *PASS" "watch stops on SIGTERM *PASS" "check wall time *INFO"; do
  grep -q "^$row" <<<"$out" || { echo "missing row: $row"; exit 1; }
done
grep -q "^CUDA holder *SKIP" <<<"$out" || { echo "CUDA holder should be skipped without nvcc"; exit 1; }
grep -q "^PyTorch holder *SKIP" <<<"$out" || { echo "PyTorch holder should be skipped without torch"; exit 1; }

fake 11284
if out="$(run)"; then
  echo "gpu-smoke passed although nvidia-smi disagrees by 1 GiB:"; echo "$out"; exit 1
fi
for row in "GPU 0 memory.used *FAIL" "/metrics used GPU-aaaaaaaa *FAIL"; do
  grep -q "^$row" <<<"$out" || { echo "expected a FAIL row: $row"; echo "$out"; exit 1; }
done
echo "gpu-smoke self-test passed"
