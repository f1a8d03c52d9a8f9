#!/usr/bin/env python3
"""A process on a MIG GPU instance runs out of the instance, not the card.

An 80 GiB H100 in MIG mode with a 40 GiB instance (GI 2) and a 10 GiB one (GI 9). PID 500 leaks
600 MiB/h on GI 9 beside PID 501 (1 GiB, GI 9) and PID 502 (3000 MiB, GI 2), for 8 hours. At the
end PID 500 holds 6848 MiB and the instance has about 2.1 GiB left: out of memory in about 3.5 h
(against the card it would be over 100 h). Asserts that:
- `analyze` of repeated nvidia-smi tables (MIG devices table, GI column) gives PID 500 a leak with
  that runway, `mig_gpu_instance_id` 9 and the instance's size, and says so in the text report;
  the GPU's own series stays against the card;
- a vramwatch recording of the same samples (process entries with gpu_instance_id and the
  instance's memory) gives the same runway;
- `watch --replay` of the recording fires GpuProcessMemoryLeak for PID 500 with a runway of hours,
  not days;
- a PID listed on two GPU instances (the leaking rows on the 40 GiB one) is one process whose sum
  is on neither instance: `analyze` and `watch --replay` of the tables both give it a runway
  against the card (days), never against one instance, nor a series fed two values per instant.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

MIB = 1 << 20
T0 = datetime.datetime(2026, 11, 30, 0, 0, 0, tzinfo=datetime.timezone.utc)
CARD_MIB, BIG_MIB, SMALL_MIB = 81559, 40448, 9984


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def samples():
    """(time, leaking MiB) every minute for 8 hours."""
    for i in range(8 * 60 + 1):
        yield T0 + datetime.timedelta(minutes=i), 2048 + 600 * i // 60 + (i % 3) * 4


def table(t, leaking, two_instances=False):
    used = 3000 + 1024 + leaking + 35  # the card: the instances' memory and its own overhead
    small = 1024 + leaking + 10
    rows = [
        t.strftime("%a %b %d %H:%M:%S %Y"),
        "+-----------------------------------------------------------------------------------------+",
        "| NVIDIA-SMI 590.48.01              Driver Version: 590.48.01      CUDA Version: 13.1     |",
        "+-----------------------------------------+------------------------+----------------------+",
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                        |               MIG M. |",
        "|=========================================+========================+======================|",
        "|   0  NVIDIA H100 80GB HBM3          On  |   00000000:00:09.0 Off |                   On |",
        f"| N/A   52C    P0            432W /  700W | {used:>7}MiB / {CARD_MIB:>6}MiB |     N/A      Default |",
        "|                                         |                        |              Enabled |",
        "+-----------------------------------------+------------------------+----------------------+",
        "",
        "+-----------------------------------------------------------------------------------------+",
        "| MIG devices:                                                                            |",
        "+------------------+----------------------------------+-----------+-----------------------+",
        "| GPU  GI  CI  MIG |              Shared Memory-Usage |        Vol|        Shared         |",
        "|      ID  ID  Dev |                Shared BAR1-Usage | SM     Unc| CE ENC  DEC  OFA  JPG |",
        "|                  |                                  |        ECC|                       |",
        "|==================+==================================+===========+=======================|",
        f"|  0    2   0   0  |          {3000 + 12:>6}MiB / {BIG_MIB:>5}MiB    | 60      0 |  3   0    3    0    3 |",
        "|                  |               0MiB / 24739MiB    |           |                       |",
        "+------------------+----------------------------------+-----------+-----------------------+",
        f"|  0    9   0   1  |          {small:>6}MiB / {SMALL_MIB:>5}MiB    | 16      0 |  1   0    1    0    1 |",
        "|                  |               0MiB /  6184MiB    |           |                       |",
        "+------------------+----------------------------------+-----------+-----------------------+",
        "",
        "+-----------------------------------------------------------------------------------------+",
        "| Processes:                                                                              |",
        "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |",
        "|        ID   ID                                                               Usage      |",
        "|=========================================================================================|",
        f"|    0    9    0              500      C   python3 serve.py                    {leaking:>6}MiB |"
        if not two_instances else
        "|    0    9    0              500      C   python3 serve.py                      1000MiB |\n"
        f"|    0    2    0              500      C   python3 serve.py                    {leaking:>6}MiB |",
        "|    0    9    0              501      C   python3 eval.py                       1024MiB |",
        "|    0    2    0              502      C   python3 train.py                      3000MiB |",
        "+-----------------------------------------------------------------------------------------+",
    ]
    return "\n".join(rows) + "\n"


def recording(host_start):
    lines = [json.dumps({"schema": "vramwatch.record/1", "started": host_start, "host": "node-7",
                         "source": "nvml", "interval_s": 60.0})]
    for t, leaking in samples():
        small = (1024 + leaking + 10) * MIB

        def proc(pid, command, mib, gi, inst_used, inst_total):
            return {"pid": pid, "type": "C", "command": command, "used_bytes": mib * MIB, "sm_util": None,
                    "gpu_instance_id": gi, "instance_used_bytes": inst_used, "instance_total_bytes": inst_total}
        lines.append(json.dumps({
            "t": t.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "gpu": "0", "index": 0, "uuid": "GPU-0",
            "pci_bus_id": "00000000:00:09.0", "name": "NVIDIA H100 80GB HBM3",
            "used_bytes": (3000 + 1024 + leaking + 35) * MIB, "total_bytes": CARD_MIB * MIB,
            "free_bytes": None, "reserved_bytes": None, "util": None,
            "processes": [proc(500, "python3 serve.py", leaking, 9, small, SMALL_MIB * MIB),
                          proc(501, "python3 eval.py", 1024, 9, small, SMALL_MIB * MIB),
                          proc(502, "python3 train.py", 3000, 2, 3012 * MIB, BIG_MIB * MIB)]}))
    return "\n".join(lines) + "\n"


def analyze(vw, path, *extra):
    r = subprocess.run([vw, "analyze", *extra, path], capture_output=True, text=True, timeout=120)
    if r.returncode not in (0, 1, 2):
        fail(f"analyze {path} exit {r.returncode}: {r.stderr}")
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vramwatch", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tables = os.path.join(d, "mig-tables.log")
        with open(tables, "w") as f:
            for t, leaking in samples():
                f.write(table(t, leaking))
        report = json.loads(analyze(a.vramwatch, tables, "--json").stdout)
        by_pid = {s.get("pid"): s for s in report["gpus"]}
        if 500 not in by_pid or None not in by_pid:
            fail(f"expected GPU 0's series and PID 500's: {list(by_pid)}")
        p, g = by_pid[500], by_pid[None]
        if p["verdict"] != "leak" or p["time_to_oom_seconds"] is None:
            fail(f"PID 500: {p['verdict']}, runway {p['time_to_oom_seconds']}: {p['evidence']}")
        hours = p["time_to_oom_seconds"] / 3600
        if not 2.5 <= hours <= 4.5:
            fail(f"PID 500 runs out in {hours:.1f} h; the instance has room for about 3.5 h (the card for 100+)")
        if p["mig_gpu_instance_id"] != 9 or p["memory_total_bytes"] != SMALL_MIB * MIB:
            fail(f"PID 500: instance {p['mig_gpu_instance_id']}, total {p['memory_total_bytes']}")
        if not any("other holders of this MIG instance use" in e for e in p["evidence"]):
            fail(f"PID 500's runway evidence does not name the instance's other holders: {p['evidence']}")
        if p["memory_reserved_bytes"] is not None:
            fail(f"PID 500's instance has no reserved memory known: {p['memory_reserved_bytes']} (null expected)")
        if g["mig_gpu_instance_id"] is not None or g["memory_total_bytes"] != CARD_MIB * MIB:
            fail(f"GPU 0's series should be the card's: {g['mig_gpu_instance_id']}, {g['memory_total_bytes']}")
        text = analyze(a.vramwatch, tables).stdout
        if "of MIG GPU instance 9" not in text:
            fail(f"the text report does not name the instance:\n{text}")

        rec = os.path.join(d, "mig.jsonl")
        with open(rec, "w") as f:
            f.write(recording("2026-11-30T00:00:00Z"))
        r = json.loads(analyze(a.vramwatch, rec, "--json").stdout)
        p2 = {s.get("pid"): s for s in r["gpus"]}.get(500)
        if p2 is None or p2["time_to_oom_seconds"] is None:
            fail(f"the recording gives PID 500 no runway: {p2}")
        if abs(p2["time_to_oom_seconds"] - p["time_to_oom_seconds"]) > 0.02 * p["time_to_oom_seconds"]:
            fail(f"recording {p2['time_to_oom_seconds'] / 3600:.2f} h vs tables {hours:.2f} h")
        if p2["mig_gpu_instance_id"] != 9:
            fail(f"the recording's PID 500 is on instance {p2['mig_gpu_instance_id']}")

        log = os.path.join(d, "alerts.jsonl")
        w = subprocess.run([a.vramwatch, "watch", "--replay", rec, "--for", "2m", "--alert-log", log],
                           capture_output=True, text=True, timeout=300)
        if w.returncode not in (1, 2):
            fail(f"watch --replay exit {w.returncode}: {(w.stdout + w.stderr)[-2000:]}")
        summaries = []
        with open(log) as f:
            for line in f:
                e = json.loads(line)
                s = json.dumps(e)
                if "GpuProcessMemoryLeak" in s and '"500"' in s:
                    summaries += re.findall(r"out of memory in ([^;\"(]+)", s)
        if not summaries:
            fail("GpuProcessMemoryLeak never fired for PID 500 with a runway")
        with open(log) as f:
            if "PID 500 on GPU 0 (MIG GPU instance 9) leaks" not in f.read():
                fail("PID 500's alert summary does not name its MIG instance")
        last = summaries[-1].strip()
        if "d" in last.split()[0] or not re.match(r"^\d+h", last):
            fail(f"PID 500's alert says out of memory in {last}: hours were expected (the instance), not days")
        # PID 500 on both instances: its sum belongs to neither, so its room is the card's.
        both = os.path.join(d, "two-instances.log")
        with open(both, "w") as f:
            for t, leaking in samples():
                f.write(table(t, leaking, two_instances=True))
        r = json.loads(analyze(a.vramwatch, both, "--json").stdout)
        p3 = {s.get("pid"): s for s in r["gpus"]}.get(500)
        if p3 is None or p3["verdict"] != "leak" or p3["time_to_oom_seconds"] is None:
            fail(f"PID 500 on two instances: {p3 and (p3['verdict'], p3['evidence'])}")
        if p3["mig_gpu_instance_id"] is not None or p3["time_to_oom_seconds"] < 48 * 3600:
            fail(f"PID 500 on two instances: instance {p3['mig_gpu_instance_id']}, "
                 f"runway {p3['time_to_oom_seconds'] / 3600:.1f} h (the card's room: days)")
        log2 = os.path.join(d, "alerts2.jsonl")
        w = subprocess.run([a.vramwatch, "watch", "--replay", both, "--for", "2m", "--alert-log", log2],
                           capture_output=True, text=True, timeout=300)
        if w.returncode not in (1, 2):
            fail(f"watch --replay of the two-instance tables exit {w.returncode}: {(w.stdout + w.stderr)[-2000:]}")
        with open(log2) as f:
            fired = [json.dumps(json.loads(line)) for line in f if "GpuProcessMemoryLeak" in line and '"500"' in line]
        runways = [re.findall(r"out of memory in ([^;\"(]+)", s) for s in fired]
        if not fired or not all(r and "d" in r[0].split()[0] for r in runways):
            fail(f"watch --replay of PID 500 on two instances: {runways} (days expected, the card's room)")
    print("ok: PID 500 on MIG GPU instance 9 runs out in", f"{hours:.1f} h", "(tables, recording, replay)")


if __name__ == "__main__":
    main()
