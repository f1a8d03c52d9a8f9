#!/usr/bin/env python3
"""Writes the bundled example traces (deterministic): a leaking training run and a healthy one.

Both are what `nvidia-smi --query-gpu=timestamp,index,name,memory.used,memory.total --format=csv -l 10`
prints on an 80 GB card during a 6-hour run: a fast warm-up ramp, allocator steps that thin out,
evaluation spikes every 30 minutes. The leaking run adds 300 MiB/h from hour 1 on (the true rate
that tests compare vramwatch's estimate with).
"""
import datetime
import math
import random
import sys

TOTAL_MIB = 81559
START = datetime.datetime(2026, 3, 14, 9, 0, 0)
STEP_S = 10
HOURS = 6
LEAK_MIB_PER_H = 300.0
LEAK_START_S = 3600


def trace(leak: bool, seed: int):
    rng = random.Random(seed)
    steps = []  # allocator steps: (time s, MiB), rarer over time
    t = 120.0
    while t < HOURS * 3600:
        steps.append((t, rng.choice([2, 20, 20, 64])))
        t *= 1.6
    for i in range(HOURS * 3600 // STEP_S):
        ts = i * STEP_S
        level = 520 + 38000 * (1 - math.exp(-ts / 180.0))  # CUDA context, then warm-up ramp to ~38 GiB
        level += sum(mib for (st, mib) in steps if st <= ts)
        if (ts % 1800) > 1680:  # eval phase: 2 minutes every 30 minutes
            level += 6144
        if leak and ts >= LEAK_START_S:
            level += LEAK_MIB_PER_H * (ts - LEAK_START_S) / 3600.0
        level += rng.gauss(0, 3)
        yield START + datetime.timedelta(seconds=ts, milliseconds=rng.randint(0, 40)), int(round(level))


def write(path: str, leak: bool, seed: int):
    with open(path, "w", newline="\n") as f:
        f.write("timestamp, index, name, memory.used [MiB], memory.total [MiB]\n")
        for when, used in trace(leak, seed):
            stamp = when.strftime("%Y/%m/%d %H:%M:%S.") + f"{when.microsecond // 1000:03d}"
            f.write(f"{stamp}, 0, NVIDIA H100 80GB HBM3, {used} MiB, {TOTAL_MIB} MiB\n")


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    write(f"{out}/training-leak.csv", True, 7)
    write(f"{out}/training-healthy.csv", False, 11)
