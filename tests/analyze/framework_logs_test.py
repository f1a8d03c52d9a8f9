#!/usr/bin/env python3
"""`vramwatch analyze` on training logs that print PyTorch's own memory figures.

The three real logs (from issue threads, read from the shared data folder; see its SOURCES.md)
each get the layer their reporters found: allocated memory creeping in a saved-tensor hook
(pytorch#115255), alloc cur 1.9 -> 5.0 GB after a restart line (returnn#1478), and nvidia-smi
rising while PyTorch's figures hold, too few steps to test (nvdiffrast#23). Written logs check each
layer, the exit codes, standard input under --format torch, the JSON schema, and the errors.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

MIB = 1024 * 1024

# file, exit code, [(device, verdict, layer)], a phrase of the text report
REAL = [
    ("issue_pytorch115255_allocated_creep.log", 1, [(0, "growing", "application")],
     "GROWING in the application's live tensors"),
    ("issue_returnn1478_alloc_cur_creep.log", 1, [(0, "growing", "application")],
     "reserved fell from 13.00 GiB to 446 MiB at line 17"),
    ("issue_nvdiffrast23_per_iter_torch_vs_smi.log", 3, [(0, "too_short", None), (1, "too_short", None)],
     "driver rose while allocated and reserved did not"),
]


def run(vw, *args, stdin=None):
    return subprocess.run([vw, "analyze", *args], capture_output=True, text=True, timeout=120, input=stdin)


def steps_log(n, allocated, reserved, driver=None):
    """A log as a script prints it: torch.cuda.memory_*() in bytes, nvidia-smi's figure in MiB."""
    lines = []
    for i in range(n):
        lines.append(f"Iter {i} loss 0.{i:03d}")
        lines.append(f"torch.cuda.memory_allocated(0) {int(allocated(i) * MIB)}")
        lines.append(f"torch.cuda.max_memory_allocated(0) {int(allocated(i) * MIB) + 999 * MIB}")
        lines.append(f"torch.cuda.memory_reserved(0) {int(reserved(i) * MIB)}")
        if driver:
            lines.append(f"nvidia-smi GPU-0 memory (MB) {driver(i)}")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vramwatch", required=True)
    ap.add_argument("--data", required=True, help="the shared folder of real logs")
    ap.add_argument("--schema", required=True)
    a = ap.parse_args()
    schema = json.load(open(a.schema))
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    for name, code, devices, phrase in REAL:
        path = os.path.join(a.data, name)
        if not os.path.exists(path):
            print(f"FAIL: {path} is missing (the shared data folder must be present)")
            return 1
        r = run(a.vramwatch, "--json", path)
        expect(r.returncode == code, f"{name}: exit {r.returncode}, want {code}: {r.stderr}")
        j = json.loads(r.stdout)
        jsonschema.validate(j, schema)
        got = [(d["device"], d["verdict"], d["layer"]) for d in j["framework"]]
        expect(got == devices, f"{name}: {got}, want {devices}")
        expect(j["gpus"] == [], f"{name}: a framework log is no GPU trace: {j['gpus']}")
        t = run(a.vramwatch, path)
        expect(t.returncode == code, f"{name} (text): exit {t.returncode}")
        expect(phrase in t.stdout, f"{name}: '{phrase}' not in\n{t.stdout}")

    # --gpu picks devices; --since/--until have no times to cut in a log of steps.
    nvd = os.path.join(a.data, REAL[2][0])
    r = run(a.vramwatch, "--json", "--gpu", "1", nvd)
    expect([d["device"] for d in json.loads(r.stdout)["framework"]] == [1], f"--gpu 1: {r.stdout[:300]}")
    r = run(a.vramwatch, "--gpu", "5", nvd)
    expect(r.returncode == 3 and "no device matches --gpu 5; the log has device(s) 0, 1" in r.stderr,
           f"--gpu 5: {r.returncode} {r.stderr}")
    r = run(a.vramwatch, "--since", "2026-01-01T00:00:00", nvd)
    expect(r.returncode == 3 and "has steps, not times" in r.stderr, f"--since: {r.returncode} {r.stderr}")

    # The allocated figure of pytorch#115255 rises 20.4 -> 21.0 MiB over 13 steps.
    j = json.loads(run(a.vramwatch, "--json", os.path.join(a.data, REAL[0][0])).stdout)
    al = j["framework"][0]["layers"]["allocated"]
    expect(al["first_bytes"] == round(20.4 * MIB) and al["last_bytes"] == 21 * MIB, f"allocated: {al}")
    expect(al["rate_ci_bytes_per_step"][0] > 0 and al["mann_kendall_p"] < 0.01, f"allocated: {al}")
    expect(j["framework"][0]["layers"]["reserved"]["rising"] is False, "one reserved step up is no steady rise")

    with tempfile.TemporaryDirectory() as d:
        cases = [
            # PyTorch's figures hold, nvidia-smi's climbs 2 MiB a step: below PyTorch.
            ("below.log", steps_log(40, lambda i: 304, lambda i: 724, lambda i: 2796 + 2 * i), 1,
             "below_framework", "GROWING below PyTorch"),
            # allocated holds, reserved creeps in 20 MiB blocks: the allocator's cache.
            ("cache.log", steps_log(60, lambda i: 3000 + i % 3, lambda i: 6000 + 20 * (i // 3)), 1,
             "allocator_cache", "GROWING in PyTorch's allocator cache"),
            # a ramp, then a hold for 50 steps: no growth.
            ("warmup.log", steps_log(60, lambda i: min(4200, 1000 + 400 * i), lambda i: min(5600, 1500 + 500 * i)),
             0, None, "no growth (it rose, then held)"),
        ]
        for name, text, code, layer, phrase in cases:
            path = os.path.join(d, name)
            with open(path, "w") as f:
                f.write(text)
            r = run(a.vramwatch, "--json", path)
            expect(r.returncode == code, f"{name}: exit {r.returncode}, want {code}: {r.stderr}")
            j = json.loads(r.stdout)
            jsonschema.validate(j, schema)
            expect(j["framework"][0]["layer"] == layer, f"{name}: {j['framework'][0]['layer']}, want {layer}")
            t = run(a.vramwatch, path)
            expect(phrase in t.stdout, f"{name}: '{phrase}' not in\n{t.stdout}")

        # Standard input is a trace unless --format torch says otherwise.
        below = cases[0][1]
        r = run(a.vramwatch, "--json", "--format", "torch", "-", stdin=below)
        expect(r.returncode == 1 and json.loads(r.stdout)["framework"][0]["layer"] == "below_framework",
               f"stdin --format torch: {r.returncode} {r.stderr}")
        r = run(a.vramwatch, "-", stdin=below)
        expect(r.returncode == 3 and "--format" in r.stderr and "PyTorch" in r.stderr,
               f"stdin without --format: {r.returncode} {r.stderr}")

        # PowerShell's `>` writes UTF-16 (with a byte-order mark) and "\r\n": the same log, the same
        # verdict.
        wide = os.path.join(d, "wide.log")
        with open(wide, "wb") as f:
            f.write(below.replace("\n", "\r\n").encode("utf-16"))
        r = run(a.vramwatch, "--json", wide)
        expect(r.returncode == 1 and json.loads(r.stdout)["framework"][0]["layer"] == "below_framework",
               f"UTF-16 log: {r.returncode} {r.stdout[:300]} {r.stderr}")

        # A trace and a framework log together: both reports, the worst exit.
        examples = os.path.join(os.path.dirname(a.schema), "..", "..", "examples", "training-healthy.csv")
        r = run(a.vramwatch, "--json", examples, os.path.join(d, "below.log"))
        j = json.loads(r.stdout)
        expect(r.returncode == 1 and len(j["gpus"]) == 1 and len(j["framework"]) == 1,
               f"trace + log: {r.returncode} {r.stderr}")

        # A fraction with no unit is not read, and the report says where; a negative size is an
        # error naming the file and line, and --lenient skips that line.
        bad = os.path.join(d, "bad.log")
        with open(bad, "w") as f:
            f.write("Mem | allocated: 20 MiB\nMem | allocated: 20.4 | reserved: 26.0\n")
        r = run(a.vramwatch, bad)
        expect(r.returncode == 3 and f"{bad}:2: 'allocated: 20.4' has no unit" in r.stdout, f"bad: {r.stdout}")
        j = json.loads(run(a.vramwatch, "--json", bad).stdout)
        expect(j["framework"][0]["not_read"] == 2, f"not_read: {j['framework'][0]['not_read']}")
        neg = os.path.join(d, "neg.log")
        with open(neg, "w") as f:
            f.write("allocated: 20 MiB\nallocated: -3 MiB\nallocated: 21 MiB\n")
        r = run(a.vramwatch, neg)
        expect(r.returncode == 3 and f"{neg}:2: 'allocated: -3 MiB' is not a memory size (negative)" in r.stderr,
               f"negative: {r.stderr}")
        r = run(a.vramwatch, "--lenient", "--json", neg)
        expect(r.returncode == 3 and json.loads(r.stdout)["framework"][0]["not_read"] == 1, f"lenient: {r.stderr}")
        # --plot and --html draw a log by step: one chart per device, beside the traces' charts.
        svg, html = os.path.join(d, "p.svg"), os.path.join(d, "p.html")
        r = run(a.vramwatch, "--plot", svg, "--html", html, os.path.join(d, "below.log"))
        expect(r.returncode == 1, f"--plot: {r.returncode} {r.stderr}")
        text = open(svg).read() if os.path.exists(svg) else ""
        expect(text.count("<svg ") == 1 and 'data-verdict="growing" data-layer="below_framework"' in text
               and 'data-role="driver"' in text and 'data-role="trend" data-layer="driver"' in text,
               f"--plot of below.log: {text[:400]}")
        page = open(html).read() if os.path.exists(html) else ""
        expect('<section class="vw-framework"' in page and "growing below PyTorch" in page, f"--html: {page[:400]}")
        r = run(a.vramwatch, "--plot", svg, "--html", html, examples, *[os.path.join(a.data, n) for n, *_ in REAL])
        text = open(svg).read()
        expect(r.returncode == 1 and text.count("<svg ") == 1 + 1 + 4 and text.count("vw-framework-chart") == 4,
               f"--plot of a trace and three logs: exit {r.returncode}, {text.count('<svg ')} svg elements")
        expect('data-role="restart"' in text, "the returnn log's restart is not marked")
        page = open(html).read()
        series, logs = page.count('<section class="vw-series"'), page.count('<section class="vw-framework"')
        expect(series == 1 and logs == 4, f"--html of a trace and three logs: {series} series, {logs} log sections")
        # A --query-gpu CSV with a memory.reserved column is still a trace.
        csv = os.path.join(d, "q.csv")
        with open(csv, "w") as f:
            f.write("timestamp, index, memory.used [MiB], memory.total [MiB], memory.reserved [MiB]\n")
            for i in range(30):
                f.write(f"2026/03/14 10:{i:02d}:00.000, 0, 20000 MiB, 81559 MiB, 479 MiB\n")
        r = run(a.vramwatch, "--json", csv)
        j = json.loads(r.stdout)
        expect(len(j["gpus"]) == 1 and "framework" not in j, f"query csv: {r.stdout[:200]} {r.stderr}")

    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
