#!/usr/bin/env python3
"""`vramwatch analyze --json` on every real third-party log in the shared data folder.

Each log was written by someone else's nvidia-smi (see SOURCES.md beside the data). For each we
assert: the run succeeds (or fails with the documented message), the JSON matches the published
schema, the GPU count is right, and no healthy (plateau / multi-phase / idle) log is called a leak.
With --markdown the script prints the table that the README shows, with the flags each log needs.
"""
import argparse
import json
import os
import subprocess
import sys

import jsonschema

# file, extra flags, GPU series expected, may it be called a leak?, note for the README
CASES = [
    ("ts_balance-budget_multiphase_15s.csv", [], 1, False, "multi-phase fine-tune/eval, 6.8 h"),
    ("ts_openad_2gpu_plateau_1s.csv", [], 2, False, "2 GPUs interleaved, flat, 8 min"),
    ("ts_rpf_ramp_plateau_60s.csv", [], 1, False, "epoch seconds, nounits, ramp then plateau, 88 min"),
    ("ts_akshay_repeated_headers_1s.csv", [], 1, False, "header repeated before every row, 4 min"),
    ("ts_landct_utf16le_bom.csv", [], 1, False, "UTF-16LE with BOM and CRLF, 7 min"),
    ("ts_vlmopt_rtx4090_bursts_1s.csv", ["--total", "24564MiB"], 1, False, "repeated benchmark bursts, 48 min"),
    ("ts_miris_ramp_plateau_release_1s.csv", [], 1, False, "ramp, plateau, release, 106 s"),
    ("ts_weightedretrain_slow_creep_1s.csv", [], 1, False, "+2 MiB steps under 1 GB spikes, 4 min"),
    ("ts_simaosantos_noheader_2gpu.log",
     ["--columns", "timestamp,index,utilization.gpu,utilization.memory,memory.used,memory.total"], 2, False,
     "noheader/nounits blocks with date and ---- lines, 2 GPUs, 2.5 h"),
    ("ts_erag_table_series_22h.log", [], 1, False, "22 h of full nvidia-smi tables, job after job"),
    ("ts_slurmmwe_table_series_l40s.log", [], 1, False, "back-to-back nvidia-smi tables, L40S, 15 min"),
    ("ts_omoknuni_noheader_creep.log", ["--columns", "utilization.gpu,memory.used", "--interval", "1s",
                                        "--total", "24564MiB"], 1, True,
     "no timestamps; concatenated runs, one creeping (ambiguous)"),
    ("dmon_glsltest_pucvmet.log", ["--interval", "1s"], 1, False, "dmon -s pucvmet, idle, 10 rows"),
]
# Without --interval: a dmon log with no memory column says so before asking for a clock.
NO_MEMORY_CASES = [
    ("dmon_mybiome_jpg_ofa_dash.log", [], "no memory values: this dmon log has no fb column"),
]


def shown_flags(flags):
    """The flags as a reader types them: `--columns a,b --interval 1s`, or an em dash for none."""
    return f"`{' '.join(flags)}`" if flags else "—"


def run(vramwatch, args):
    return subprocess.run([vramwatch, "analyze", "--json", *args], capture_output=True, text=True, timeout=240)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vramwatch", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--schema", required=True)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--readme", help="check that this README shows every row of the table, flags included")
    a = ap.parse_args()
    if not os.path.isdir(a.data):
        print(f"FAIL: the shared real-data folder {a.data} is missing", file=sys.stderr)
        return 1
    schema = json.load(open(a.schema))
    failures, passed, rows = [], 0, []
    for name, flags, gpus, may_leak, note in CASES:
        path = os.path.join(a.data, name)
        r = run(a.vramwatch, [*flags, path])
        try:
            if r.returncode not in (0, 1, 2, 3):
                raise AssertionError(f"exit {r.returncode}: {r.stderr.strip()}")
            if not r.stdout.strip():
                raise AssertionError(f"no JSON printed (exit {r.returncode}): {r.stderr.strip()}")
            doc = json.loads(r.stdout)
            jsonschema.validate(doc, schema)
            gpu_series = [g for g in doc["gpus"] if g["pid"] is None]
            if len(gpu_series) != gpus:
                raise AssertionError(f"expected {gpus} GPU series, got {len(gpu_series)}")
            leaks = [g for g in doc["gpus"] if g["verdict"] == "leak"]
            if leaks and not may_leak:
                raise AssertionError("healthy log called a leak: " + "; ".join(
                    f"gpu {g['gpu']} pid {g['pid']}: {g['evidence'][:2]}" for g in leaks))
            judged = [g for g in doc["gpus"] if g["verdict"] != "insufficient_data"]
            want_exit = 3 if not judged else (2 if any(g["severity"] == "critical" for g in doc["gpus"]) else
                                               1 if leaks else 0)
            if r.returncode != want_exit:
                raise AssertionError(f"exit {r.returncode}, expected {want_exit}")
            for g in doc["gpus"]:
                if g["samples"] <= 0:
                    raise AssertionError(f"gpu {g['gpu']}: no samples")
            verdicts = ", ".join(
                f"{'GPU ' + g['gpu'] if g['pid'] is None else 'PID ' + str(g['pid'])}: {g['verdict']}"
                for g in doc["gpus"])
            rows.append((name, shown_flags(flags), note, verdicts))
            passed += 1
        except (AssertionError, json.JSONDecodeError, jsonschema.ValidationError) as e:
            failures.append(f"{name}: {str(e)[:600]}")
    for name, flags, message in NO_MEMORY_CASES:
        r = run(a.vramwatch, [*flags, os.path.join(a.data, name)])
        if r.returncode == 3 and message in r.stderr and name in r.stderr:
            passed += 1
            rows.append((name, shown_flags(flags), "dmon -s u: utilisation only",
                         "exit 3: " + message.split(":")[0] + " (no fb column)"))
        else:
            failures.append(f"{name}: expected exit 3 naming the file and '{message}', got {r.returncode}: {r.stderr}")
    if a.markdown:
        print("| log | flags it needs | what it is | vramwatch says |\n|---|---|---|---|")
        for name, flags, note, verdicts in rows:
            print(f"| `{name}` | {flags} | {note} | {verdicts} |")
    if a.readme:
        readme = open(a.readme, encoding="utf-8").read()
        for name, flags, note, verdicts in rows:
            row = f"| `{name}` | {flags} | {note} | {verdicts} |"
            if row not in readme:
                failures.append(f"README table: the row for {name} is missing or differs; want: {row}")
    for f in failures:
        print("FAIL:", f)
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
