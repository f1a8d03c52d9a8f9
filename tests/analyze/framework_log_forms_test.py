#!/usr/bin/env python3
"""`vramwatch analyze` on the forms training logs print their memory figures in, beside those of
framework_logs_test.py: ranks and devices named by a line's prefix, a metrics CSV with maxima
columns, a long memory_stats() dict, an OrderedDict, units given once per line, nvidia-smi's used
memory among its total and percentage, a unit in brackets after the key. Each log is written here,
as a script prints it, and the figures read are checked in the JSON report.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

MIB = 1024 * 1024
GIB = 1024 * MIB


def run(vw, *args):
    return subprocess.run([vw, "analyze", *args], capture_output=True, text=True, timeout=120)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vramwatch", required=True)
    ap.add_argument("--schema", required=True)
    a = ap.parse_args()
    schema = json.load(open(a.schema))
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as d:
        def analyze(name, text):
            path = os.path.join(d, name)
            with open(path, "w") as f:
                f.write(text)
            r = run(a.vramwatch, "--json", path)
            try:
                j = json.loads(r.stdout)
                jsonschema.validate(j, schema)
            except (ValueError, jsonschema.ValidationError) as e:
                failures.append(f"{name}: exit {r.returncode}, no valid report ({e}): {r.stderr[:400]}")
                return path, r, {"framework": [], "notes": []}
            return path, r, j

        def layer(j, device, name):
            for f in j["framework"]:
                if f["device"] == device:
                    return f["layers"].get(name, {})
            return {}

        # Two ranks, rank 1's allocated memory creeping: each rank its own series, as cuda:N.
        for name, prefix in [("ranks.log", "[rank{r}]:"), ("ranks2.log", "rank {r} |"), ("device.log", "Device {r}:"),
                             ("ranks_cuda.log", "cuda:{r}")]:
            lines = []
            for i in range(40):
                lines.append(f"{prefix.format(r=0)} step {i} allocated: 2.00 GB reserved: 4.00 GB")
                lines.append(f"{prefix.format(r=1)} step {i} allocated: {3 + i / 100:.2f} GB reserved: 6.00 GB")
            _, r, j = analyze(name, "\n".join(lines) + "\n")
            got = [(f["device"], f["verdict"], f["layer"]) for f in j["framework"]]
            want = [(0, "flat", None), (1, "growing", "application")]
            expect(got == want, f"{name}: {got}, want {want}")
            expect(r.returncode == 1, f"{name}: exit {r.returncode}, want 1")

        # The same two ranks without a prefix: one series alternating between two levels is said to be
        # two sources, not restarts.
        lines = []
        for i in range(40):
            lines.append(f"step {i} allocated: 2.00 GB reserved: 8.00 GB")
            lines.append(f"step {i} allocated: 2.00 GB reserved: 3.00 GB")
        path, r, j = analyze("unnamed.log", "\n".join(lines) + "\n")
        notes = " ".join(j.get("notes", []))
        expect("alternate between two levels" in notes, f"unnamed.log: no note of two sources: {notes or r.stdout[:300]}")
        t = run(a.vramwatch, path)
        expect("not restarts but two processes or devices" in t.stdout, f"unnamed.log (text): {t.stdout[:600]}")

        # A metrics CSV with the maxima beside the values: the maximum rises, the value does not.
        rows = ["step,memory_allocated,max_memory_allocated,memory_reserved,max_memory_reserved"]
        for i in range(40):
            rows.append(f"{i},{2 * GIB},{3 * GIB + i * 64 * MIB},{6 * GIB},{6 * GIB}")
        _, r, j = analyze("csv_max.csv", "\n".join(rows) + "\n")
        al = layer(j, 0, "allocated")
        expect(al.get("first_bytes") == 2 * GIB and al.get("last_bytes") == 2 * GIB, f"csv_max.csv: allocated {al}")
        expect(r.returncode == 0, f"csv_max.csv: exit {r.returncode}, want 0 (nothing grows)")

        # dict(torch.cuda.memory_stats()): about 5 KiB a line, reserved near its end.
        keys = [f"'active_bytes.pool_{k}.freed': 123456" for k in range(200)]
        lines = []
        for i in range(30):
            lines.append("{" + ", ".join(keys + [f"'allocated_bytes.all.current': {4 * GIB}",
                                                  f"'reserved_bytes.all.current': {10 * GIB + i * 64 * MIB}"]) + "}")
        _, r, j = analyze("stats_dict.log", "\n".join(lines) + "\n")
        expect(layer(j, 0, "reserved").get("last_bytes") == 10 * GIB + 29 * 64 * MIB,
               f"stats_dict.log: reserved {layer(j, 0, 'reserved')} {r.stderr[:300]}")

        # print(torch.cuda.memory_stats()) on Python 3.11 and older: an OrderedDict.
        lines = [f"OrderedDict([('active.all.current', 1523), ('allocated_bytes.all.current', {4 * GIB + i * 64 * MIB}), "
                 f"('allocated_bytes.all.peak', {8 * GIB}), ('reserved_bytes.all.current', {10 * GIB})])"
                 for i in range(30)]
        _, r, j = analyze("odict.log", "\n".join(lines) + "\n")
        expect(r.returncode == 1 and [(f["device"], f["layer"]) for f in j["framework"]] == [(0, "application")],
               f"odict.log: exit {r.returncode} {j['framework'][:1]} {r.stderr[:300]}")

        # Units given once per line: the bare numbers take them.
        for name, line, alloc, res in [
                ("unit_once.log", "step {i}: allocated: 2048 MB reserved: 4096", 2048 * MIB, 4096 * MIB),
                ("unit_pair.log", "mem allocated/reserved: 2048/4096 MB", 2048 * MIB, 4096 * MIB),
                ("unit_whole.log", "step {i} Allocated 2048 / 81920 MiB", 2048 * MIB, None)]:
            _, r, j = analyze(name, "\n".join(line.format(i=i) for i in range(12)) + "\n")
            expect(layer(j, 0, "allocated").get("last_bytes") == alloc, f"{name}: allocated {layer(j, 0, 'allocated')}")
            expect(layer(j, 0, "reserved").get("last_bytes") == res, f"{name}: reserved {layer(j, 0, 'reserved')}")

        # Allocated above reserved: a misread, named with its line, never a negative cache.
        path = os.path.join(d, "misread.log")
        with open(path, "w") as f:
            f.write("allocated: 2 GiB reserved: 1 GiB\n" * 3)
        r = run(a.vramwatch, "--json", path)
        expect(r.returncode == 3 and f"{path}:1: allocated 2.0 GiB is more than reserved 1.0 GiB" in r.stderr,
               f"misread.log: exit {r.returncode}: {r.stderr[:400]}")

        # nvidia-smi's used memory, not its total nor a percentage.
        for name, line in [("smi_total.log", "nvidia-smi GPU 0 memory.total 81559 MiB memory.used {u} MiB | allocated: 20 GiB"),
                           ("smi_pct.log", "nvidia-smi GPU 0 memory 45% ({u} MiB) | allocated: 20 GiB")]:
            _, r, j = analyze(name, "\n".join(line.format(u=35000 + i) for i in range(12)) + "\n")
            dr = layer(j, 0, "driver")
            expect(dr.get("first_bytes") == 35000 * MIB and dr.get("last_bytes") == 35011 * MIB, f"{name}: driver {dr}")

        # A unit in brackets after the key.
        _, r, j = analyze("bracket_unit.log", "Memory Allocated (GB): 1.5, Reserved (GB): 3.0\n" * 12)
        expect(layer(j, 0, "allocated").get("last_bytes") == 1536 * MIB
               and layer(j, 0, "reserved").get("last_bytes") == 3 * GIB,
               f"bracket_unit.log: {layer(j, 0, 'allocated')} {layer(j, 0, 'reserved')} {r.stderr[:300]}")

    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
