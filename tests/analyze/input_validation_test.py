#!/usr/bin/env python3
"""Bad flag values and odd traces end in a clear message (exit 3) or a visible note, never in a
wrong number: durations too large for the clocks, a card size of 0 or below the memory in use,
samples out of time order, impossible dates, unknown commands, and the wording of the report
(UTC marks, file:line:column of skipped lines, oom_at on a synthetic clock)."""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

import jsonschema

checks = []


def check(name):
    def deco(fn):
        checks.append((name, fn))
        return fn
    return deco


def run(ctx, *args, stdin=None):
    return subprocess.run([ctx.vramwatch, *args], capture_output=True, text=True, timeout=120, input=stdin)


def vw(ctx, *args, stdin=None):
    return run(ctx, "analyze", *args, stdin=stdin)


def expect_error(r, *needles):
    assert r.returncode == 3, (r.returncode, r.stdout[-300:], r.stderr)
    for n in needles:
        assert n in r.stderr, (n, r.stderr)


def write(d, name, text):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def query_csv(rows, start=1_780_000_000, step=10, used=lambda i: 20000 + i, total=81559):
    """A --query-gpu CSV with epoch timestamps, `rows` (index, i) in the given order."""
    out = ["timestamp, index, memory.used [MiB], memory.total [MiB]"]
    for gpu, i in rows:
        out.append(f"{start + i * step}, {gpu}, {used(i)} MiB, {total} MiB")
    return "\n".join(out) + "\n"


@check("durations too large for the clocks are refused naming the flag, in every command (exit 3)")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        values = write(d, "used.log", "\n".join(str(1000 + i) for i in range(100)) + "\n")
        for args in (["--interval", "99999999999999999d"], ["--interval", "300s", "--critical-runway", "110000d"]):
            expect_error(vw(ctx, "--format", "values", *args, values), args[-2], "too large")
        expect_error(vw(ctx, "--prometheus", "http://127.0.0.1:1", "--range", "110000d"), "--range", "too large")
    # check, watch and record refuse them before touching NVML.
    expect_error(run(ctx, "check", "--timeout", "99999999999999999999d", "--kernel-log", "none"), "--timeout",
                 "too large")
    expect_error(run(ctx, "check", "--window", "99999999999999h", "--kernel-log", "none"), "--window", "too large")
    expect_error(run(ctx, "watch", "--interval", "110000d", "--duration", "1s"), "--interval", "too large")
    expect_error(run(ctx, "record", "--interval", "99999999999999999999d", "--duration", "1s", "-o", os.devnull),
                 "--interval", "too large")
    expect_error(run(ctx, "record", "--timeout", "0s", "--duration", "1s", "-o", os.devnull), "--timeout",
                 "greater than 0")
    # A zero --duration would stop before the first sample and still exit 0.
    expect_error(run(ctx, "record", "--duration", "0s", "-o", os.devnull), "--duration", "must be above 0")
    expect_error(run(ctx, "watch", "--duration", "0s"), "--duration", "must be above 0")


@check("a file flag the file makes needless (--interval, --total) is a note, not ignored in silence")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        rows = ["timestamp, index, memory.used [MiB], memory.total [MiB]"]
        rows += [f"{1_780_000_000 + 10 * i}, 0, {20000 + i % 7} MiB, 81559 MiB" for i in range(100)]
        path = write(d, "timed.csv", "\n".join(rows) + "\n")
        r = vw(ctx, "--json", "--interval", "5s", "--total", "10GiB", path)
        assert r.returncode == 0, (r.returncode, r.stderr)
        notes = json.loads(r.stdout)["notes"]
        assert f"{path}: --interval is not used: the file has its own times" in notes, notes
        assert f"{path}: --total is not used for GPU 0 (79.6 GiB): the file gives the card's memory.total" in notes, notes
        assert json.loads(r.stdout)["gpus"][0]["memory_total_bytes"] == 81559 << 20, r.stdout
        # Where the flags are what the file needs, nothing is said.
        values = write(d, "used.log", "\n".join(str(20000 + i % 7) for i in range(100)) + "\n")
        quiet = vw(ctx, "--json", "--format", "values", "--interval", "5s", "--total", "80GiB", values)
        assert json.loads(quiet.stdout)["notes"] == [], (quiet.stderr, quiet.stdout)


@check("a few samples above the card's total are ignored and counted; more of them than not is an error")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        # 6 h of a 200 MiB/h leak every 10 s; one garbled row says 90000 MiB of an 81559 MiB card.
        def used(i):
            return 90000 if i == 2000 else 20000 + i * 10 * 200 // 3600
        one = write(d, "one.csv", query_csv([(0, i) for i in range(2160)], used=used))
        r = vw(ctx, one)
        assert r.returncode in (0, 1), (r.returncode, r.stdout, r.stderr)  # not CRITICAL "OOM in 0s"
        assert "1 sample(s) used more than the card's total and were ignored" in r.stdout, r.stdout
        assert "87.9 GiB of 79.6 GiB" in r.stdout, r.stdout
        g = json.loads(vw(ctx, "--json", one).stdout)["gpus"][0]
        assert g["samples_above_total"] == 1 and g["first_above_total"], g
        assert g["samples"] == 2159 and g["verdict"] == "leak" and g["time_to_oom_seconds"] > 86400, g
        many = write(d, "many.csv", query_csv([(0, i) for i in range(300)],
                                              used=lambda i: 90000 if i % 3 else 20000))
        expect_error(vw(ctx, many), "above the card's total", "on 200 of 300 samples")


@check("--total reads MB and GB as nvidia-smi writes them (MiB, GiB), as the traces are read")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        values = write(d, "used.log", "\n".join(f"{21000 + i * 300 * 10 // 3600} MB" for i in range(2160)) + "\n")
        runway = {}
        for total in ("24564MiB", "24564MB"):
            r = vw(ctx, "--json", "--format", "values", "--interval", "10s", "--total", total, values)
            g = json.loads(r.stdout)["gpus"][0]
            assert g["memory_total_bytes"] == 24564 << 20, (total, g["memory_total_bytes"])
            runway[total] = g["time_to_oom_seconds"]
        assert runway["24564MiB"] == runway["24564MB"], runway


@check("a file still being written (its last line cut, without its line end) is read up to that line, with a note")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        text = query_csv([(0, i) for i in range(2000)], used=lambda i: 20000 + i)
        cut = text[:-8]  # the last row cut inside its memory.total, as a file being written ends
        path = write(d, "live.csv", cut)
        for args, stdin in ((["--json", path], None), (["--json", "-"], cut)):
            r = vw(ctx, *args, stdin=stdin)
            g = json.loads(r.stdout)["gpus"][0]
            assert g["samples"] == 1999, (args[-1], g["samples"])
            assert g["memory_used_bytes"] == (20000 + 1998) << 20, (args[-1], g["memory_used_bytes"])
            assert "its last line has no line end" in r.stderr and "left out" in r.stderr, r.stderr
            # A script reading the JSON sees the note too.
            notes = json.loads(r.stdout)["notes"]
            assert len(notes) == 1 and "its last line has no line end" in notes[0], notes
        whole = vw(ctx, "--json", write(d, "whole.csv", text))
        assert "line end" not in whole.stderr and json.loads(whole.stdout)["notes"] == [], whole.stderr
        # When the cut line was the only sample, the note comes before the error it explains.
        one = vw(ctx, write(d, "one.csv", "timestamp, index, memory.used [MiB]\n1780000000, 0, 100 MiB"))
        assert one.returncode == 3 and "its last line has no line end" in one.stderr, (one.returncode, one.stderr)


@check("a PyTorch memory log whose last line has no line end: that line is left out, with a note in the JSON too")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        lines = "".join(f"Mem memory (MB) | allocated: {i}.0 | reserved: 60.0\n" for i in range(10, 30))
        r = vw(ctx, "--json", write(d, "t.log", lines + "Mem memory (MB) | allocated: 3"))
        assert r.returncode in (0, 1, 2), (r.returncode, r.stderr)
        doc = json.loads(r.stdout)
        assert doc["framework"][0]["last_line"] == 20, doc["framework"][0]
        assert len(doc["notes"]) == 1 and "t.log" in doc["notes"][0] and "no line end" in doc["notes"][0], doc
        assert "no line end" in r.stderr, r.stderr


@check("another GPU taking an index (its UUID changes) gets a series of its own; the first one's comes back to it")
def _(ctx):
    a, b = "GPU-aaaaaaaa-0000-0000-0000-000000000001", "GPU-bbbbbbbb-0000-0000-0000-000000000002"
    with tempfile.TemporaryDirectory() as d:
        rows = ["timestamp, index, uuid, memory.used [MiB], memory.total [MiB]"]
        for i in range(2160):
            # a holds 10000 MiB, then b leaks 2000 MiB/h on the same index, then a is back, flat.
            uuid = b if 720 <= i < 1440 else a
            used = 30000 + (i - 720) * 2000 * 10 // 3600 if uuid == b else 10000 + i % 7
            rows.append(f"{1_780_000_000 + 10 * i}, 1, {uuid}, {used} MiB, 81559 MiB")
        path = write(d, "swap.csv", "\n".join(rows) + "\n")
        r = vw(ctx, "--json", path)
        gpus = json.loads(r.stdout)["gpus"]
        by_uuid = {g["uuid"]: g for g in gpus}
        assert sorted(by_uuid) == [a, b] and len(gpus) == 2, [(g["uuid"], g["samples"]) for g in gpus]
        assert by_uuid[a]["samples"] == 1440 and by_uuid[a]["verdict"] != "leak", by_uuid[a]
        assert by_uuid[b]["samples"] == 720 and by_uuid[b]["verdict"] == "leak", by_uuid[b]
        text = vw(ctx, path).stdout
        assert f"uuid       {b}" in text, text[:600]


@check("a PID that comes back with another command (reused) is another process, with a series of its own")
def _(ctx):
    lines = [json.dumps({"schema": "vramwatch.record/1", "host": "h"})]
    for i in range(2160):
        cmd = "python train.py" if i < 1080 else "python eval.py"
        used = (10000 + i % 5) if i < 1080 else (5000 + (i - 1080) * 1000 * 10 // 3600)
        lines.append(json.dumps({"t": 1_780_000_000 + 10 * i, "gpu": "0", "index": 0, "used_bytes": (used + 1000) << 20,
                                 "total_bytes": 81559 << 20,
                                 "processes": [{"pid": 5000, "type": "C", "command": cmd, "used_bytes": used << 20}]}))
    with tempfile.TemporaryDirectory() as d:
        path = write(d, "reuse.jsonl", "\n".join(lines) + "\n")
        r = vw(ctx, "--json", path)
        procs = [g for g in json.loads(r.stdout)["gpus"] if g.get("pid") == 5000]
        got = sorted((g["command"], g["samples"], g["verdict"] == "leak") for g in procs)
        assert got == [("python eval.py", 1080, True), ("python train.py", 1080, False)], got


@check("a PID listed twice in one sample (on two MIG instances) is one sample of the sum of its rows")
def _(ctx):
    lines = [json.dumps({"schema": "vramwatch.record/1", "host": "h"})]
    for i in range(400):
        procs = [{"pid": 5000, "type": "C", "command": "python train.py", "used_bytes": 1000 << 20},
                 {"pid": 7000, "type": "C", "command": "python other.py", "used_bytes": 50 << 20},
                 {"pid": 5000, "type": "C", "command": "python train.py", "used_bytes": (2000 + i) << 20}]
        lines.append(json.dumps({"t": 1_780_000_000 + 10 * i, "gpu": "0", "index": 0, "used_bytes": (3100 + i) << 20,
                                 "total_bytes": 81559 << 20, "processes": procs}))
    with tempfile.TemporaryDirectory() as d:
        path = write(d, "twice.jsonl", "\n".join(lines) + "\n")
        gpus = json.loads(vw(ctx, "--json", path).stdout)["gpus"]
        p = [g for g in gpus if g.get("pid") == 5000]
        assert len(p) == 1 and p[0]["samples"] == 400, [(g.get("pid"), g["samples"]) for g in gpus]
        assert p[0]["memory_used_bytes"] == (3000 + 399) << 20, p[0]["memory_used_bytes"]


@check("several GPUs in a file without an index, uuid or pci.bus_id column: a note says they were read as one")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        rows, indexed = ["timestamp, memory.used [MiB], memory.total [MiB]"], [
            "timestamp, index, memory.used [MiB], memory.total [MiB]"]
        for i in range(400):
            for gpu, used in ((0, 20000 + i % 7), (1, 40000 + i * 3)):
                t = f"{1_780_000_000 + 10 * i}.{100 + 2 * gpu}"  # nvidia-smi: one row per GPU, ms apart
                rows.append(f"{t}, {used} MiB, 81559 MiB")
                indexed.append(f"{t}, {gpu}, {used} MiB, 81559 MiB")
        r = vw(ctx, "--json", write(d, "two.csv", "\n".join(rows) + "\n"))
        assert "may hold several GPUs that no column tells apart" in r.stderr, r.stderr
        notes = json.loads(r.stdout)["notes"]
        assert len(notes) == 1 and "two.csv: GPU " in notes[0] and "several GPUs" in notes[0], notes
        ok = vw(ctx, "--json", write(d, "indexed.csv", "\n".join(indexed) + "\n"))
        assert "several GPUs" not in ok.stderr and len(json.loads(ok.stdout)["gpus"]) == 2, ok.stderr
        assert json.loads(ok.stdout)["notes"] == [], ok.stdout


@check("--gpu over several files: a file without that GPU is left out with a note; no file with it is an error")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        g0 = write(d, "g0.csv", query_csv([(0, i) for i in range(400)]))
        g1 = write(d, "g1.csv", query_csv([(1, i) for i in range(400)]))
        r = vw(ctx, "--json", "--gpu", "1", g0, g1)
        assert r.returncode in (0, 1, 2), (r.returncode, r.stderr)
        gpus = json.loads(r.stdout)["gpus"]
        assert [g["gpu"] for g in gpus] == ["1"], gpus
        assert "g0.csv: no GPU matches --gpu 1" in r.stderr and "(left out)" in r.stderr, r.stderr
        assert [n for n in json.loads(r.stdout)["notes"] if "g0.csv: no GPU matches --gpu 1" in n], r.stdout
        expect_error(vw(ctx, "--gpu", "5", g0, g1), "g0.csv: no GPU matches --gpu 5", "g1.csv: no GPU matches --gpu 5")
        # A PyTorch log without that device is left out the same way.
        log = write(d, "t.log", "".join(f"Mem memory (MB) | allocated: {i}.0 | reserved: 60.0\n" for i in range(10, 30)))
        r = vw(ctx, "--json", "--gpu", "1", g1, log)
        assert r.returncode in (0, 1, 2), (r.returncode, r.stderr)
        assert "t.log: no device matches --gpu 1" in r.stderr and "(left out)" in r.stderr, r.stderr
        assert [n for n in json.loads(r.stdout)["notes"] if n.endswith("(left out)") and "t.log" in n], r.stdout


@check("a report that cannot be written to standard output (a full disk) is exit 3 with a message")
def _(ctx):
    examples = os.path.join(ctx.examples, "training-leak.csv")
    for args in (["analyze", "--json", examples], ["analyze", examples], ["version"]):
        with open("/dev/full", "w") as full:
            r = subprocess.run([ctx.vramwatch, *args], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
        assert r.returncode == 3, (args, r.returncode, r.stderr)
        assert "cannot write to standard output" in r.stderr, (args, r.stderr)


@check("a FIFO or pipe is read whole, as the same file is: nothing eaten by a look for a PyTorch log")
def _(ctx):
    import threading
    with tempfile.TemporaryDirectory() as d:
        # Over 64 KiB, so that a look at the start would take whole lines from the trace.
        text = query_csv([(0, i) for i in range(6000)])
        path = write(d, "run.csv", text)
        want = json.loads(vw(ctx, "--json", path).stdout)["gpus"][0]["samples"]
        assert want == 6000, want
        for name, body in (("small.fifo", query_csv([(0, i) for i in range(30)])), ("big.fifo", text)):
            fifo = os.path.join(d, name)
            os.mkfifo(fifo)
            writer = threading.Thread(target=lambda: open(fifo, "w").write(body))
            writer.start()
            r = vw(ctx, "--json", fifo)
            writer.join(timeout=5)
            assert r.stdout, (name, r.returncode, r.stderr)  # 30 samples are too few for a verdict: exit 3
            got = json.loads(r.stdout)["gpus"][0]["samples"]
            assert got == body.count("\n") - 1, (name, got, r.stderr)


@check("an unknown --format names the flag and every format analyze reads, torch included")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        values = write(d, "used.log", "\n".join(str(40000 + i) for i in range(300)) + "\n")
        expect_error(vw(ctx, "--format", "bogus", values), "--format: unknown trace format 'bogus'", "recording",
                     "or torch")


@check("--total 0 is a bad size; used above the total on every sample is an error naming the columns")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        values = write(d, "used.log", "\n".join(str(40000 + i) for i in range(300)) + "\n")
        expect_error(vw(ctx, "--format", "values", "--interval", "300s", "--total", "0", values), "--total",
                     "greater than zero")
        r = vw(ctx, "--format", "values", "--interval", "300s", "--total", "10GiB", values)
        expect_error(r, "above the card's total", "--total 10GiB")
        assert r.stdout == "", "no CRITICAL 'OOM in 0s' report"
    nounits = os.path.join(ctx.data, "h200-driver580", "query-gpu-nounits.csv")
    swapped = "timestamp,index,memory.total,memory.used"
    r = vw(ctx, "--json", "--columns", swapped, nounits)
    expect_error(r, "above the card's total", "--columns " + swapped)
    assert r.stdout == ""
    r = vw(ctx, "--json", "--columns", "timestamp,index,memory.used,memory.total", nounits)
    assert r.returncode in (0, 1, 2, 3) and r.stdout, (r.returncode, r.stderr)
    assert json.loads(r.stdout)["gpus"][0]["memory_total_bytes"] == 143771 * 2 ** 20


@check("samples out of time order are counted in the text and JSON; a file written newest first is an error")
def _(ctx):
    n = 1800
    with tempfile.TemporaryDirectory() as d:
        backwards = write(d, "backwards.csv", query_csv([(0, i) for i in reversed(range(n))]))
        r = vw(ctx, backwards)
        expect_error(r, "backwards.csv", "run backwards in time", f"{n - 1} of {n}")
        halves = [(0, i) for i in range(n // 2, n)] + [(0, i) for i in range(n // 2)]
        swapped = write(d, "swapped.csv", query_csv(halves))
        r = vw(ctx, "--json", swapped)
        doc = json.loads(r.stdout)
        jsonschema.validate(doc, ctx.schema)
        g = doc["gpus"][0]
        assert g["samples"] == n // 2 and g["samples_out_of_order"] == n // 2, g
        assert g["first_out_of_order"] == "2026-05-28T20:26:40Z", g["first_out_of_order"]
        text = vw(ctx, swapped).stdout
        assert f"{n // 2} sample(s) out of time order were ignored" in text, text
        assert "the first, at 2026-05-28 20:26:40 UTC, came after" in text, text
        ordered = vw(ctx, "--json", write(d, "ordered.csv", query_csv([(0, i) for i in range(n)])))
        assert json.loads(ordered.stdout)["gpus"][0]["samples_out_of_order"] == 0


@check("a clock written without a zone that goes back an hour (daylight saving) is named as such")
def _(ctx):
    def smi(seconds):  # nvidia-smi's zone-less times, from 2026/10/25 00:00:00 as written
        out = ["timestamp, index, memory.used [MiB], memory.total [MiB]"]
        base = datetime.datetime(2026, 10, 25)
        for s in seconds:
            stamp = (base + datetime.timedelta(seconds=s)).strftime("%Y/%m/%d %H:%M:%S")
            out.append(f"{stamp}.000, 0, 20000 MiB, 81559 MiB")
        return "\n".join(out) + "\n"
    with tempfile.TemporaryDirectory() as d:
        # 00:00 to 02:59:50, then 02:00 again: the hour's second pass is left out, and said why.
        autumn = write(d, "autumn.csv", smi(list(range(0, 3 * 3600, 10)) + list(range(2 * 3600, 6 * 3600, 10))))
        text = vw(ctx, autumn).stdout
        assert "359 sample(s) out of time order were ignored" in text, text
        assert "the clock went back an hour: a daylight-saving change" in text, text
        # Mostly the second pass: an error that does not tell to sort (that would interleave them).
        r = vw(ctx, write(d, "short.csv", smi(list(range(2 * 3600 + 3000, 3 * 3600, 10)) +
                                              list(range(2 * 3600, 2 * 3600 + 2900, 10)))))
        expect_error(r, "run backwards in time", "the clock went back an hour", "--until, --since")
        assert "Sort it by time" not in r.stderr, r.stderr
        # Epoch seconds carry their zone: the same hour back is a file out of order, not daylight saving.
        text = vw(ctx, write(d, "epoch.csv", query_csv([(0, i) for i in range(1080)] +
                                                      [(0, i) for i in range(720, 1800)]))).stdout
        assert "out of time order were ignored" in text and "daylight" not in text, text


@check("one sample dated a year ahead is the one ignored, wherever it is, with one thread and in blocks")
def _(ctx):
    n = 4320
    start = 1_773_478_800  # 2026-03-14T09:00:00Z
    for line in (1001, 4001):  # 1-based file lines, after the header
        rows = ["timestamp, index, memory.used [MiB], memory.total [MiB]"]
        for i in range(n):
            t = start + 5 * i + (365 * 86400 if i + 2 == line else 0)
            rows.append(f"{t}, 0, {int(20000 + 200 * i * 5 / 3600)} MiB, 81559 MiB")
        with tempfile.TemporaryDirectory() as d:
            path = write(d, "ahead.csv", "\n".join(rows) + "\n")
            docs = []
            for env in ({"VRAMWATCH_ANALYZE_THREADS": "1"}, {"VRAMWATCH_ANALYZE_THREADS": "4"},
                        {"VRAMWATCH_ANALYZE_THREADS": "4", "VRAMWATCH_ANALYZE_BLOCK_BYTES": "65536"}):
                for lenient in ([], ["--lenient"]):
                    r = subprocess.run([ctx.vramwatch, "analyze", "--json", *lenient, path], capture_output=True,
                                       text=True, timeout=120, env={**os.environ, **env})
                    assert r.returncode == 1, (line, env, r.returncode, r.stderr)
                    docs.append(r.stdout)
            assert all(doc == docs[0] for doc in docs), "one thread and blocks must agree"
            g = json.loads(docs[0])["gpus"][0]
            assert g["samples"] == n - 1 and g["samples_out_of_order"] == 1, (line, g["samples"], g)
            assert g["first_out_of_order"].startswith("2027-03-14"), g["first_out_of_order"]
            assert g["end"].startswith("2026-03-14T14:59:55"), g["end"]
            rate = g["leak_rate_bytes_per_second"] * 3600 / 2 ** 20
            assert 180 < rate < 220, rate
            assert g["time_to_oom_seconds"] < 30 * 86400, g["time_to_oom_seconds"]
            text = vw(ctx, path).stdout
            assert "1 sample(s) out of time order were ignored (the first, at 2027-03-14" in text, text
            # watch --replay leaves the same line out and reaches the same verdict (it had fed the
            # line, left out every later one as out of order, and ended "settling").
            w = subprocess.run([ctx.vramwatch, "watch", "--replay", path], capture_output=True, text=True, timeout=120)
            assert w.returncode == 1, (line, w.returncode, w.stdout[-600:], w.stderr[-600:])
            assert "GPU 0: leak, 200 MiB/h" in w.stdout, w.stdout[-600:]
            assert "1 instant(s) out of time order left out" in w.stderr, w.stderr[-600:]


@check("unknown commands get a suggestion; --version works like version")
def _(ctx):
    r = run(ctx, "analyse", "x.csv")
    expect_error(r, "unknown command 'analyse' (did you mean analyze?)")
    expect_error(run(ctx, "chek"), "unknown command 'chek' (did you mean check?)")
    expect_error(run(ctx, "frobnicate"), "unknown command 'frobnicate'", "analyze")
    v, plain = run(ctx, "--version"), run(ctx, "version")
    assert v.returncode == 0 and v.stdout == plain.stdout and v.stdout.startswith("vramwatch "), (v, plain)
    top = run(ctx, "--help")
    assert top.returncode == 0 and "--version" in top.stdout, top.stdout  # the README names it


@check("error messages name the value: --gpu, --since after --until, empty --columns name, Prometheus")
def _(ctx):
    q = os.path.join(ctx.data, "h200-driver580", "query-gpu.csv")
    expect_error(vw(ctx, "--gpu", "9", q), "--gpu 9", "the GPUs in the trace: 0 (00000000:00:06.0, GPU-d343804b")
    r = vw(ctx, "--json", "--gpu", "0000:00:06.0", q)
    assert r.returncode != 3 or json.loads(r.stdout)["gpus"], (r.returncode, r.stderr)
    assert json.loads(r.stdout)["gpus"][0]["pci_bus_id"] == "00000000:00:06.0"
    assert vw(ctx, "--json", "--gpu", "00000000:00:06.0", q).stdout == r.stdout
    expect_error(vw(ctx, "--since", "2026-03-14T12:00:00", "--until", "2026-03-14T10:00:00", q),
                 "--since 2026-03-14T12:00:00 is after --until 2026-03-14T10:00:00")
    expect_error(vw(ctx, "--columns", "timestamp,,memory.used,memory.total", q), "column 2 is empty")
    expect_error(vw(ctx, "--columns", "timestamp,index,", q), "column 3 is empty")
    expect_error(vw(ctx, "--prometheus", "http://127.0.0.1:1", "--range", "1h"), "http://127.0.0.1:1",
                 "cannot connect (connection refused")


@check("--since/--until take dmon's YYYYMMDD HH:MM:SS; impossible dates are refused")
def _(ctx):
    dmon = os.path.join(ctx.data, "h200-driver580", "dmon.log")
    r = vw(ctx, "--json", "--since", "20261129 19:11:52", dmon)
    assert r.stdout, (r.returncode, r.stderr)
    doc = json.loads(r.stdout)
    assert all(g["start"] >= "2026-11-29T19:11:52" for g in doc["gpus"]), doc["gpus"]
    full = json.loads(vw(ctx, "--json", dmon).stdout)
    assert doc["gpus"][0]["samples"] < full["gpus"][0]["samples"]
    leak = os.path.join(ctx.examples, "training-leak.csv")
    for flag in ("--since", "--until"):
        expect_error(vw(ctx, flag, "2026-02-30T10:00:00", leak), flag, "2026-02-30T10:00:00", "no such date")
    with tempfile.TemporaryDirectory() as d:
        bad = write(d, "feb30.csv", "timestamp, index, memory.used [MiB]\n2026/02/28 10:00:00.000, 0, 1 MiB\n"
                                    "2026/02/30 10:00:00.000, 0, 1 MiB\n")
        expect_error(vw(ctx, bad), "feb30.csv:3:")


@check("text times of a trace with a zone are marked UTC; wall-clock ones are not")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        epoch = write(d, "epoch.csv", query_csv([(0, i) for i in range(400)]))
        text = subprocess.run([ctx.vramwatch, "analyze", epoch], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "TZ": "America/New_York"}).stdout
        assert re.search(r"span +2026-05-28 20:26 UTC → 2026-05-28 21:33 UTC", text), text
    text = vw(ctx, os.path.join(ctx.examples, "training-leak.csv")).stdout
    assert "UTC" not in text and "2026-03-14 09:00 →" in text, text
    assert re.search(r"OOM in .*\(at 2026-03-\d\d \d\d:\d\d\)", text), text


@check("--lenient lists skipped lines as file:line:column: reason, like the strict error")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        lines = open(os.path.join(ctx.examples, "training-healthy.csv")).read().splitlines()
        lines[100] = re.sub(r", \d+ MiB, ", ", lots MiB, ", lines[100], count=1)
        bad = write(d, "bad.csv", "\n".join(lines) + "\n")
        strict = vw(ctx, bad)
        where = re.search(r"(\S*bad\.csv:101:\d+): ", strict.stderr)
        assert strict.returncode == 3 and where, strict.stderr
        doc = json.loads(vw(ctx, "--lenient", "--json", bad).stdout)
        example = doc["skipped_examples"][0]
        assert example.startswith(where.group(1) + ": expected"), (example, where.group(1))
        text = vw(ctx, "--lenient", bad).stdout
        assert f"  {example}\n" in text, text


@check("oom_at on a synthetic clock is seconds from the start, like leak_start")
def _(ctx):
    values = "\n".join(str(20000 + i // 3) for i in range(2000)) + "\n"
    r = vw(ctx, "--json", "--format", "values", "--interval", "10s", "--total", "80GiB", "-", stdin=values)
    g = json.loads(r.stdout)["gpus"][0]
    assert g["verdict"] == "leak" and g["clock"] == "synthetic", g
    assert re.fullmatch(r"\d+\.\d{3}", g["oom_at"]), g["oom_at"]
    assert re.fullmatch(r"\d+\.\d{3}", g["leak_start"]), g["leak_start"]
    end = float(g["end"])
    assert abs(float(g["oom_at"]) - (end + g["time_to_oom_seconds"])) < 0.01, (g["oom_at"], end)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vramwatch", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--schema", required=True)
    ap.add_argument("--data", required=True, help="the project's captures (tests/data)")
    ctx = ap.parse_args()
    ctx.schema = json.load(open(ctx.schema))
    failed = 0
    for name, fn in checks:
        try:
            fn(ctx)
            print(f"ok    {name}")
        except Exception as e:  # noqa: BLE001 - report every failure with its reason
            failed += 1
            print(f"FAIL  {name}: {type(e).__name__}: {str(e)[:1200]}")
    print(f"{len(checks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
