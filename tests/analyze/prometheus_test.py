#!/usr/bin/env python3
"""`vramwatch analyze --prometheus` against a real Prometheus (Debian's package).

Generates 12 h of DCGM_FI_DEV_FB_USED history at 15 s for two GPUs (GPU 0 leaks 200 MiB/h under
noise after a warm-up, GPU 1 sits on a flat plateau), a MIG card (GPU 2: instance 1, 3g.40gb, leaks
400 MiB/h; instance 2, 1g.10gb, is flat), a GPU whose `pod` label changes half-way (GPU 3, flat) and
one whose exporter reports a card smaller than its used memory (GPU 4, left out with a note), a
gauge at 30 s holding values no GPU memory can be, and vramwatch's own metrics of a GPU and of a
process on it (node-8), loads it with `promtool tsdb create-blocks-from openmetrics`, starts
Prometheus on a free loopback port, runs analyze over the range, and checks the verdicts, the leak
rates, the card and instance sizes, the notes, --no-processes and the message of a query with no
series; then the flags refused with --prometheus or without it. Prometheus is always stopped.
"""
import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

RATE_MIB_H = 200.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


MIG_SIZES_MIB = {"1": 40192, "2": 9728}


def history(start, end):
    rng = random.Random(5)
    lines = ["# TYPE DCGM_FI_DEV_FB_USED gauge", "# TYPE DCGM_FI_DEV_FB_FREE gauge"]
    used_rows, free_rows = [], []
    model = 'modelName="NVIDIA H100 80GB HBM3"'
    for gpu in (0, 1, 3, 4):
        for t in range(start, end + 1, 15):
            age = t - start
            level = 30000 * min(1.0, age / 600.0)
            if gpu == 0 and age > 3600:
                level += RATE_MIB_H * (age - 3600) / 3600.0
            used = int(round(level + rng.gauss(0, 4)))
            labels = f'gpu="{gpu}",UUID="GPU-{gpu}",Hostname="node-1",{model}'
            if gpu == 3:  # dcgm-exporter names the pod using the GPU: another pod half-way
                labels += ',pod="train-a"' if age < 6 * 3600 else ',pod="train-b"'
            used_rows.append(f"DCGM_FI_DEV_FB_USED{{{labels}}} {used} {t}")
            # GPU 4's exporter is broken: its free memory makes a card smaller than its used memory.
            free_rows.append(f"DCGM_FI_DEV_FB_FREE{{{labels}}} {81559 - used if gpu != 4 else -1000} {t}")
    for gi, size in MIG_SIZES_MIB.items():
        profile = "3g.40gb" if gi == "1" else "1g.10gb"
        for t in range(start, end + 1, 15):
            age = t - start
            used = 20000 if gi == "1" else 6000
            if gi == "1" and age > 3600:
                used += 2 * RATE_MIB_H * (age - 3600) / 3600.0
            used = int(round(used + rng.gauss(0, 4)))
            labels = f'gpu="2",UUID="GPU-2",Hostname="node-1",{model},GPU_I_ID="{gi}",GPU_I_PROFILE="{profile}"'
            used_rows.append(f"DCGM_FI_DEV_FB_USED{{{labels}}} {used} {t}")
            free_rows.append(f"DCGM_FI_DEV_FB_FREE{{{labels}}} {size - used} {t}")
    # A gauge scraped every 30 s (read every 15 s: each sample twice) holding 1e300 every 10 minutes.
    weird = ["# TYPE weird_metric gauge"]
    for t in range(start, end + 1, 30):
        weird.append(f'weird_metric{{gpu="0"}} {"1e300" if (t - start) % 600 == 0 else "12345"} {t}')
    # vramwatch's own metrics of a GPU on node-8 and of one process on it (a `pid` label).
    own = []
    for name, pid in (("vramwatch_gpu_memory_used_bytes", None), ("vramwatch_process_memory_used_bytes", "4242")):
        own.append(f"# TYPE {name} gauge")
        labels = 'hostname="node-8",gpu="0",uuid="GPU-8"' + (f',pid="{pid}",command="python"' if pid else "")
        for t in range(start, end + 1, 60):
            own.append(f"{name}{{{labels}}} {(20 if pid else 30) * 2**30 + (t - start) * 1000} {t}")
    # OpenMetrics wants each metric family's samples together.
    return "\n".join(lines[:1] + used_rows + lines[1:] + free_rows + weird + own + ["# EOF"]) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vramwatch", required=True)
    a = ap.parse_args()
    for tool in ("prometheus", "promtool"):
        if shutil.which(tool) is None:
            print(f"FAIL: {tool} not on PATH (scripts/bootstrap installs Debian's prometheus)")
            print("0 passed, 1 failed")
            return 1
    end = (int(time.time()) // 60) * 60 - 300
    start = end - 12 * 3600
    d = tempfile.mkdtemp(prefix="vw-prom-")
    proc = None
    failures = []
    try:
        with open(os.path.join(d, "history.om"), "w") as f:
            f.write(history(start, end))
        os.makedirs(os.path.join(d, "data"))
        subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", os.path.join(d, "history.om"),
                        os.path.join(d, "data")], check=True, capture_output=True, timeout=300)
        with open(os.path.join(d, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 15s\n")
        port = free_port()
        log = open(os.path.join(d, "prometheus.log"), "w")
        proc = subprocess.Popen(["prometheus", f"--config.file={d}/prometheus.yml", f"--storage.tsdb.path={d}/data",
                                 f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=30d"],
                                stdout=log, stderr=log)
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                if urllib.request.urlopen(url + "/-/ready", timeout=1).status == 200:
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("prometheus not ready: " + open(os.path.join(d, "prometheus.log")).read()[-2000:])

        r = subprocess.run([a.vramwatch, "analyze", "--json", "--prometheus", url, "--query", "DCGM_FI_DEV_FB_USED",
                            "--range", "12h", "--end", str(end)], capture_output=True, text=True, timeout=120)
        doc = json.loads(r.stdout) if r.stdout.strip() else {}
        gpus = {g["gpu"]: g for g in doc.get("gpus", [])}
        notes = " ".join(doc.get("notes", []))
        checks = [
            ("a series per GPU and per MIG instance, one for GPU 3 whose pod changed (GPU 4 left out)",
             set(gpus) == {"node-1/0", "node-1/1", "node-1/2/gi1", "node-1/2/gi2", "node-1/3"}),
            ("GPU 0 leaks", gpus.get("node-1/0", {}).get("verdict") == "leak"),
            ("GPU 1 does not", gpus.get("node-1/1", {}).get("verdict") in ("plateau", "settling")),
            ("GPU 3 does not", gpus.get("node-1/3", {}).get("verdict") in ("plateau", "settling")),
            ("exit code 1 (a leak, runway over 24 h)", r.returncode == 1),
        ]
        g0 = gpus.get("node-1/0", {})
        rate = (g0.get("leak_rate_bytes_per_second") or 0) * 3600 / 2**20
        checks.append((f"rate {rate:.0f} MiB/h within 10 % of {RATE_MIB_H:.0f}", abs(rate - RATE_MIB_H) < 0.1 * RATE_MIB_H))
        checks.append(("card size from DCGM_FI_DEV_FB_FREE", g0.get("memory_total_bytes") == 81559 * 2**20))
        checks.append(("times in UTC", str(g0.get("end", "")).endswith("Z")))
        checks.append(("each sample read once (15 s apart)", 0 < g0.get("samples", 0) <= 12 * 240 + 1))
        gi1 = gpus.get("node-1/2/gi1", {})
        gi1_rate = (gi1.get("leak_rate_bytes_per_second") or 0) * 3600 / 2**20
        checks.append(("MIG instance 1 leaks at its rate", gi1.get("verdict") == "leak"
                       and abs(gi1_rate - 2 * RATE_MIB_H) < 0.2 * RATE_MIB_H))
        checks.append(("MIG instance 1 judged against its own size",
                       gi1.get("memory_total_bytes") == MIG_SIZES_MIB["1"] * 2**20))
        checks.append(("MIG instance 2 does not leak", gpus.get("node-1/2/gi2", {}).get("verdict") in ("plateau", "settling")))
        checks.append(("a note says GPU 3's series were read as one", "node-1/3" in notes and "pod" in notes))
        checks.append(("GPU 4 (used above its size) is left out with a note, the others judged",
                       "node-1/4" not in gpus and "node-1/4" in notes and "left out" in notes))
        # A range ending 20 minutes after the data: the card size still comes from the series' own
        # last samples, and a note says the data stop before the range's end.
        late = subprocess.run([a.vramwatch, "analyze", "--json", "--prometheus", url, "--query",
                               'DCGM_FI_DEV_FB_USED{gpu="0"}', "--range", "6h", "--end", str(end + 1200)],
                              capture_output=True, text=True, timeout=120)
        late_doc = json.loads(late.stdout) if late.stdout.strip() else {}
        late_gpus = {g["gpu"]: g for g in late_doc.get("gpus", [])}
        checks.append(("--end 20 min past the data: the card size is still read",
                       late_gpus.get("node-1/0", {}).get("memory_total_bytes") == 81559 * 2**20))
        checks.append(("--end 20 min past the data: a note says so",
                       "20m 0s before the range's end (--end)" in " ".join(late_doc.get("notes", []))))
        bad = subprocess.run([a.vramwatch, "analyze", "--prometheus", url, "--query", "DCGM_FI_DEV_FB_USED{"],
                             capture_output=True, text=True, timeout=60)
        checks.append(("a bad query is exit 3 with Prometheus' reason", bad.returncode == 3 and "query" in bad.stderr))
        none = subprocess.run([a.vramwatch, "analyze", "--prometheus", url, "--query", "no_such_metric", "--end",
                               str(end)], capture_output=True, text=True, timeout=60)
        checks.append(("no series is exit 3 naming the query", none.returncode == 3 and "no_such_metric" in none.stderr))
        for end_flag, over in (([], "over the last 4h"),
                               (["--end", "2020-01-01T00:00:00Z"], "over the 4h up to 2020-01-01T00:00:00Z"),
                               (["--end", "1577836800"], "over the 4h up to 2020-01-01T00:00:00Z")):
            past = subprocess.run([a.vramwatch, "analyze", "--prometheus", url, "--query", "no_such_metric",
                                   "--range", "4h"] + end_flag, capture_output=True, text=True, timeout=60)
            checks.append((f"no series, {' '.join(end_flag) or 'no --end'}: '{over}'",
                           past.returncode == 3 and over in past.stderr))
        free = subprocess.run([a.vramwatch, "analyze", "--prometheus", url, "--query", "DCGM_FI_DEV_FB_FREE", "--end",
                               str(end)], capture_output=True, text=True, timeout=60)
        checks.append(("free memory is refused, naming the metric to ask for",
                       free.returncode == 3 and "query DCGM_FI_DEV_FB_USED" in free.stderr))
        nogpu = subprocess.run([a.vramwatch, "analyze", "--prometheus", url, "--query", "DCGM_FI_DEV_FB_USED", "--end",
                                str(end), "--gpu", "7"], capture_output=True, text=True, timeout=60)
        checks.append(("--gpu matching none lists the GPUs returned", nogpu.returncode == 3 and "node-1/2/gi1" in nogpu.stderr))
        weird = subprocess.run([a.vramwatch, "analyze", "--json", "--prometheus", url, "--query", "weird_metric",
                                "--unit", "MiB", "--end", str(end)], capture_output=True, text=True, timeout=60)
        weird_doc = json.loads(weird.stdout) if weird.stdout.strip() else {}
        huge = 12 * 6 + 1
        checks.append((f"{huge} values too large for GPU memory, each counted once",
                       f"{huge} value(s) too large" in " ".join(weird_doc.get("notes", []))
                       and [g.get("samples_without_memory") for g in weird_doc.get("gpus", [])] == [huge]))
        both = 'vramwatch_process_memory_used_bytes|vramwatch_gpu_memory_used_bytes'
        for no_processes in (False, True):
            p = subprocess.run([a.vramwatch, "analyze", "--json", "--prometheus", url, "--query",
                                f'{{__name__=~"{both}",hostname="node-8"}}', "--end", str(end)]
                               + (["--no-processes"] if no_processes else []),
                               capture_output=True, text=True, timeout=60)
            series = json.loads(p.stdout).get("gpus", []) if p.stdout.strip() else []
            pids = [g.get("pid") for g in series if g.get("pid") is not None]
            if no_processes:
                checks.append(("--no-processes leaves the per-process series out, the GPU's is judged",
                               pids == [] and [g.get("gpu") for g in series] == ["node-8/0"]))
            else:
                checks.append(("a pid label makes a per-process series", pids == [4242]))
        only = subprocess.run([a.vramwatch, "analyze", "--prometheus", url, "--query",
                               "vramwatch_process_memory_used_bytes", "--end", str(end), "--no-processes"],
                              capture_output=True, text=True, timeout=60)
        checks.append(("only per-process series and --no-processes: exit 3 saying so",
                       only.returncode == 3 and "--no-processes" in only.stderr))
        html = os.path.join(d, "r.html")
        subprocess.run([a.vramwatch, "analyze", "--prometheus", url, "--query", "DCGM_FI_DEV_FB_USED{gpu=\"1\"}",
                        "--end", str(end), "--html", html], capture_output=True, text=True, timeout=60)
        page = open(html).read() if os.path.exists(html) else ""
        checks.append(("the HTML report names the server and the query", url in page and "DCGM_FI_DEV_FB_USED" in page))
        wrong_mode = [(["--prometheus", url, "--format", "values"], "--format"),
                      (["--prometheus", url, "--columns", "timestamp,memory.used"], "--columns"),
                      (["--prometheus", url, "--interval", "5s"], "--interval"),
                      (["--prometheus", url, "--lenient"], "--lenient")]
        for flag, value in (("--query", "x"), ("--range", "6h"), ("--end", "0"), ("--unit", "MiB"),
                            ("--timeout", "5s"), ("--bearer-token-file", "t"), ("--basic-auth-file", "t"),
                            ("--ca-file", "c")):
            wrong_mode.append((["some.csv", flag, value], flag))
        for extra, want in wrong_mode:
            wrong = subprocess.run([a.vramwatch, "analyze"] + extra, capture_output=True, text=True, timeout=60)
            checks.append((f"{want} in the wrong mode is exit 3 naming it",
                           wrong.returncode == 3 and want in wrong.stderr))
        for name, ok in checks:
            print(("ok    " if ok else "FAIL  ") + name)
            if not ok:
                failures.append(name)
        if failures:
            print("stdout:", r.stdout[:3000], "\nstderr:", r.stderr[:2000])
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(d, ignore_errors=True)
    print(f"{len(checks) - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
