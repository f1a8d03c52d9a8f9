"""Checks that common NVML clients see the emulated GPUs the way vramwatch's binding does.

Runs one scenario through four clients, each loading the emulator's libnvidia-ml.so.1 from
LD_LIBRARY_PATH (or by path for ours):
  - vramwatch's binding (vw_nvml_snapshot_json),
  - NVIDIA's Python binding pynvml (nvidia-ml-py),
  - gpustat --json,
  - nvitop's Python API (nvitop.Device), and `nvitop -1` (must run without errors),
and asserts they report the same GPUs (UUID, name, bus id), memory (total/used, MiB) and
processes (PID -> MiB). Process PIDs are real processes started here, since gpustat and nvitop drop
PIDs that do not exist. Scenario time is pinned with VRAMWATCH_EMULATOR_CLOCK_FILE so every client
sees the same instant.

Usage: compare_clients.py SNAPSHOT_PROGRAM EMULATOR_DIR VARIANT   (VARIANT: full | old-driver)
Exit status 0 when everything matches; otherwise prints each mismatch and exits 1.
"""

import json
import os
import subprocess
import sys
import tempfile

MIB = 1024 * 1024

SCENARIO = """
driver_version: "550.54.15"
{hide}
gpus:
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f60"
    pci_bus_id: "00000000:3B:00.0"
    memory_total_mib: 81559
    memory_reserved_mib: 479
    unattributed_mib: [[0, 0], [30, 12288]]
    utilization_gpu: [[0, 0], [10, 90]]
    temperature_c: 41
    power_w: 69.85
    power_limit_w: 700
    processes:
      - pid: "${{PID_A}}"
        type: compute
        used_mib: [[0, 0], [20, 10240]]
        sm_util: [[0, 0], [20, 95]]
      - pid: "${{PID_B}}"
        type: [compute, graphics]
        used_mib: 1542
  - name: "NVIDIA L40S"
    uuid: "GPU-0c7d0a5e-1111-2222-3333-444455556666"
    pci_bus_id: "00000000:86:00.0"
    memory_total_mib: 46068
    memory_reserved_mib: 609
    unattributed_mib: 5
    processes:
      - pid: "${{PID_C}}"
        type: graphics
        used_mib: 1230
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-9f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"
    pci_bus_id: "00000000:9A:00.0"
    memory_total_mib: 81559
    memory_reserved_mib: 479
    bar1_total_mib: 131072
    bar1_used_mib: 3
    mig_devices:
      - gpu_instance_id: 1
        compute_instance_id: 0
        uuid: "MIG-1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901"
        name: "NVIDIA H100 80GB HBM3 MIG 3g.40gb"
        memory_total_mib: 40448
        unattributed_mib: 11
        processes: [{{pid: "${{PID_D}}", used_mib: 11080}}]
      - gpu_instance_id: 2
        uuid: "MIG-2c3d4e5f-6071-8293-a4b5-c6d7e8f90a1b"
        name: "NVIDIA H100 80GB HBM3 MIG 2g.20gb"
        memory_total_mib: 20096
        processes: [{{pid: "${{PID_E}}", used_mib: 6}}]
"""

OLD_DRIVER_HIDE = """hide_symbols: [nvmlDeviceGetComputeRunningProcesses_v3, nvmlDeviceGetGraphicsRunningProcesses_v3,
               nvmlDeviceGetMPSComputeRunningProcesses_v3, nvmlDeviceGetMemoryInfo_v2,
               nvmlDeviceGetRunningProcessDetailList, nvmlDeviceGetConfComputeMemSizeInfo]"""

PYNVML_SNIPPET = r"""
import json, pynvml as N
N.nvmlInit()
out = {"driver_version": N.nvmlSystemGetDriverVersion(), "gpus": []}
for i in range(N.nvmlDeviceGetCount()):
    h = N.nvmlDeviceGetHandleByIndex(i)
    try:
        m = N.nvmlDeviceGetMemoryInfo(h, version=N.nvmlMemory_v2)
    except N.NVMLError_FunctionNotFound:
        m = N.nvmlDeviceGetMemoryInfo(h)
    procs = {}
    for fn in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
        try:
            lst = getattr(N, fn)(h)
        except (N.NVMLError_FunctionNotFound, N.NVMLLibraryMismatchError):  # an older driver
            lst = getattr(N, fn + "_v2")(h)
        for p in lst:
            procs[str(p.pid)] = p.usedGpuMemory
    out["gpus"].append({"uuid": N.nvmlDeviceGetUUID(h), "name": N.nvmlDeviceGetName(h),
                        "bus_id": N.nvmlDeviceGetPciInfo(h).busId, "total": m.total, "used": m.used,
                        "procs": procs})
N.nvmlShutdown()
print(json.dumps(out))
"""

NVITOP_SNIPPET = r"""
import json
from nvitop import Device
out = []
for d in Device.all():
    out.append({"uuid": d.uuid(), "name": d.name(), "bus_id": d.bus_id(), "total": d.memory_total(),
                "used": d.memory_used(),
                "procs": {str(pid): p.gpu_memory() for pid, p in d.processes().items()}})
print(json.dumps(out))
"""


def run(cmd, env):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r.stdout


def main():
    snapshot_prog, emulator_dir, variant = (os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3])
    lib_dir = emulator_dir if variant == "full" else os.path.join(emulator_dir, variant)
    python = sys.executable
    gpustat = os.path.join(os.path.dirname(python), "gpustat")
    failures = []

    def expect(what, got, want):
        if got != want:
            failures.append(f"{what}: got {got!r}, want {want!r}")

    sleepers = [subprocess.Popen(["sleep", "300"]) for _ in range(5)]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            scenario = os.path.join(tmp, "scenario.yaml")
            with open(scenario, "w") as f:
                f.write(SCENARIO.format(hide=OLD_DRIVER_HIDE if variant == "old-driver" else ""))
            clock = os.path.join(tmp, "clock")
            with open(clock, "w") as f:
                f.write("15\n")  # process A holds 7680 MiB, unattributed 6144 MiB on GPU 0
            env = dict(os.environ)
            env.update({"VRAMWATCH_EMULATOR_SCENARIO": scenario, "VRAMWATCH_EMULATOR_CLOCK_FILE": clock,
                        "LD_LIBRARY_PATH": lib_dir, "PID_A": str(sleepers[0].pid),
                        "PID_B": str(sleepers[1].pid), "PID_C": str(sleepers[2].pid),
                        "PID_D": str(sleepers[3].pid), "PID_E": str(sleepers[4].pid)})
            env.pop("VRAMWATCH_NVML_LIB", None)

            ours = json.loads(run([snapshot_prog, os.path.join(lib_dir, "libnvidia-ml.so.1")], env))
            pyn = json.loads(run([python, "-c", PYNVML_SNIPPET], env))
            gst = json.loads(run([gpustat, "--json"], env))
            nvi = json.loads(run([python, "-c", NVITOP_SNIPPET], env))
            # nvitop's one-shot view: every call it makes must be answered like a real driver would
            # (it logs "ERROR: A FunctionNotFound error occurred" for symbols a driver lacks).
            screen = subprocess.run([os.path.join(os.path.dirname(python), "nvitop"), "-1"], env=env,
                                    capture_output=True, text=True, timeout=60)
            expect("nvitop -1 exit status", screen.returncode, 0)
            expect("nvitop -1 errors", [l for l in (screen.stdout + screen.stderr).splitlines() if "ERROR" in l], [])
            for bus in ("00000000:3B:00.0", "00000000:86:00.0", "00000000:9A:00.0"):
                expect(f"nvitop -1 shows {bus}", bus in screen.stdout, True)

            expect("driver version (pynvml)", pyn["driver_version"], ours["driver_version"])
            expect("driver version (gpustat)", gst["driver_version"], ours["driver_version"])
            n = len(ours["gpus"])
            expect("GPU count", n, 3)
            expect("GPU count (pynvml)", len(pyn["gpus"]), n)
            expect("GPU count (gpustat)", len(gst["gpus"]), n)
            expect("GPU count (nvitop)", len(nvi), n)
            for i in range(min(n, len(pyn["gpus"]), len(gst["gpus"]), len(nvi))):
                o, p, g, v = ours["gpus"][i], pyn["gpus"][i], gst["gpus"][i], nvi[i]
                ours_procs = {str(x["pid"]): x["used_bytes"] for x in o["processes"]}
                for tool, uuid, name in (("pynvml", p["uuid"], p["name"]), ("gpustat", g["uuid"], g["name"]),
                                         ("nvitop", v["uuid"], v["name"])):
                    expect(f"gpu {i} uuid ({tool})", uuid, o["uuid"])
                    expect(f"gpu {i} name ({tool})", name, o["name"])
                expect(f"gpu {i} bus id (pynvml)", p["bus_id"], o["pci_bus_id"])
                expect(f"gpu {i} bus id (nvitop)", v["bus_id"], o["pci_bus_id"])
                # Every client chooses memory v2 when exported, else v1 (used then includes reserved);
                # our binding does the same, so the numbers must agree exactly.
                for tool, total, used in (("pynvml", p["total"], p["used"]), ("nvitop", v["total"], v["used"])):
                    expect(f"gpu {i} memory total bytes ({tool})", total, o["memory_total_bytes"])
                    expect(f"gpu {i} memory used bytes ({tool})", used, o["memory_used_bytes"])
                expect(f"gpu {i} memory.total MiB (gpustat)", g["memory.total"], o["memory_total_bytes"] // MIB)
                expect(f"gpu {i} memory.used MiB (gpustat)", g["memory.used"], o["memory_used_bytes"] // MIB)
                expect(f"gpu {i} processes (pynvml)", p["procs"], ours_procs)
                expect(f"gpu {i} processes (nvitop)", v["procs"], ours_procs)
                gst_procs = {str(x["pid"]): x["gpu_memory_usage"] for x in (g["processes"] or [])}
                expect(f"gpu {i} processes MiB (gpustat)", gst_procs,
                       {pid: b // MIB for pid, b in ours_procs.items()})
            # The scenario's numbers, so that four clients agreeing on a wrong value still fails.
            if n == 3:
                g0 = ours["gpus"][0]
                reserved = 0 if variant == "full" else 479
                expect("our gpu 0 used MiB", g0["memory_used_bytes"] // MIB, 7680 + 1542 + 6144 + reserved)
                expect("our gpu 0 process A MiB", ours_procs_of(g0).get(str(sleepers[0].pid)), 7680)
                g2 = ours["gpus"][2]
                expect("our gpu 2 MIG", g2["mig_enabled"], True)
                expect("our gpu 2 used MiB", g2["memory_used_bytes"] // MIB, 11080 + 11 + 6 + reserved)
                expect("our gpu 2 MIG devices", [(m["uuid"][:8], m["gpu_instance_id"], m["memory_used_bytes"] // MIB)
                                                 for m in g2["mig_devices"]], [("MIG-1b2c", 1, 11091), ("MIG-2c3d", 2, 6)])
                expect("our gpu 2 process GI", {str(x["pid"]): x["gpu_instance_id"] for x in g2["processes"]},
                       {str(sleepers[3].pid): 1, str(sleepers[4].pid): 2})
    finally:
        for s in sleepers:
            s.kill()
            s.wait()

    if failures:
        print("NVML clients disagree with the vramwatch binding:\n  " + "\n  ".join(failures))
        return 1
    print(f"pynvml, gpustat and nvitop agree with the binding ({variant} emulator)")
    return 0


def ours_procs_of(gpu):
    return {str(x["pid"]): x["used_bytes"] // MIB for x in gpu["processes"]}


if __name__ == "__main__":
    sys.exit(main())
