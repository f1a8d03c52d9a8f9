#!/usr/bin/env python3
"""`vramwatch analyze` on damaged captures, end to end: the bundled examples and the project's
captures with random bytes changed, deleted, inserted or cut off (a fixed seed, so every run tests the
same inputs). For each, strict and --lenient, with one parsing thread and with block-parallel parsing
on small blocks: the exit code is one of the documented ones (never a signal or an abort), --json
output with a verdict is valid JSON of the documented schema, and the one-thread and block-parallel
runs print the same bytes."""
import argparse
import glob
import json
import os
import random
import subprocess
import sys
import tempfile

import jsonschema

# Bytes a damaged capture tends to hold: digits, separators, units, nvidia-smi's missing-value
# spellings, a NUL, and bytes that are not UTF-8 on their own.
ALPHABET = b'0123456789 ,.:/\n\r"%MiB[]N/A-|#\t\x00\xff\xc3'
VARIANTS = ({"VRAMWATCH_ANALYZE_THREADS": "1"},
            {"VRAMWATCH_ANALYZE_THREADS": "2", "VRAMWATCH_ANALYZE_BLOCK_BYTES": "4099"})


def damage(rng, data):
    b = bytearray(data)
    if rng.random() < 0.25:  # a capture cut off while it was being written
        return bytes(b[:rng.randrange(1, len(b) + 1)])
    for _ in range(rng.randint(1, 30)):
        i = rng.randrange(len(b))
        op = rng.random()
        if op < 0.4:
            b[i] = rng.choice(ALPHABET)
        elif op < 0.7:
            del b[i:i + rng.randint(1, 60)]
        else:
            b[i:i] = bytes(rng.choice(ALPHABET) for _ in range(rng.randint(1, 25)))
        if not b:
            b = bytearray(b"\n")
    return bytes(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vramwatch", required=True)
    ap.add_argument("--inputs", nargs="+", required=True, help="folders whose files are damaged")
    ap.add_argument("--schema", required=True)
    ap.add_argument("--cases", type=int, default=80)
    ap.add_argument("--seed", type=int, default=20261129)
    ctx = ap.parse_args()
    schema = json.load(open(ctx.schema))
    sources = sorted(f for d in ctx.inputs for f in glob.glob(os.path.join(d, "**", "*"), recursive=True)
                     if os.path.isfile(f) and not f.endswith((".md", ".py")))
    assert sources, ctx.inputs
    rng = random.Random(ctx.seed)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in range(ctx.cases):
            src = sources[case % len(sources)]
            data = open(src, "rb").read()[:200_000]
            path = os.path.join(tmp, f"case{case}" + os.path.splitext(src)[1])
            open(path, "wb").write(damage(rng, data))
            for args in (["--json"], ["--json", "--lenient"]):
                runs = []
                for variant in VARIANTS:
                    env = dict(os.environ, **variant)
                    r = subprocess.run([ctx.vramwatch, "analyze", *args, path], capture_output=True, env=env,
                                       timeout=120)
                    runs.append(r)
                    where = f"case {case} (from {os.path.basename(src)}) {' '.join(args)} {variant}"
                    if r.returncode not in (0, 1, 2, 3):
                        failures.append(f"{where}: exit {r.returncode}: {r.stderr[-300:]!r}")
                    elif r.stdout:  # a report: any verdict, or 3 when no series had enough data
                        try:
                            jsonschema.validate(json.loads(r.stdout.decode("utf-8")), schema)
                        except Exception as e:  # noqa: BLE001 - report the input and the reason
                            failures.append(f"{where}: not the documented JSON: {type(e).__name__}: {str(e)[:200]}")
                    elif r.returncode != 3 or not r.stderr:
                        failures.append(f"{where}: exit {r.returncode}, no report and no error message")
                a, b = runs
                if (a.returncode, a.stdout, a.stderr) != (b.returncode, b.stdout, b.stderr):
                    failures.append(f"case {case} (from {os.path.basename(src)}) {' '.join(args)}: one thread and "
                                    f"block-parallel parsing differ (exit {a.returncode} vs {b.returncode})")
    for f in failures[:20]:
        print("FAIL ", f)
    print(f"{ctx.cases} damaged captures, {ctx.cases * 4} runs: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
