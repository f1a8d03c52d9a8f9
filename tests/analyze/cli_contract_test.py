#!/usr/bin/env python3
"""The user-facing contract of `vramwatch analyze`: verdicts and numbers on the bundled examples,
exit codes, --json schema, --gpu/--since/--until, and clear errors on bad input."""
import argparse
import html
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import jsonschema

TRUE_RATE = 300 * 1024 * 1024 / 3600.0  # bytes/s, from examples/make_examples.py

checks = []


def check(name):
    def deco(fn):
        checks.append((name, fn))
        return fn
    return deco


def vw(ctx, *args, stdin=None):
    return subprocess.run([ctx.vramwatch, "analyze", *args], capture_output=True, text=True, timeout=120, input=stdin)


@check("leaking example: verdict leak, rate within 15 % of the true rate, CI at most 2 % off it, runway set")
def _(ctx):
    r = vw(ctx, "--json", os.path.join(ctx.examples, "training-leak.csv"))
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, ctx.schema)
    g = doc["gpus"][0]
    assert g["verdict"] == "leak", g
    assert r.returncode in (1, 2), r.returncode
    rate = g["leak_rate_bytes_per_second"]
    assert abs(rate - TRUE_RATE) / TRUE_RATE < 0.15, (rate, TRUE_RATE)
    lo, hi = g["leak_rate_ci_bytes_per_second"]
    # The example's floor also carries a few late allocator steps on top of the 300 MiB/h leak, so
    # the measured floor slope is a little above it; the interval must still sit on the true rate.
    assert lo <= rate <= hi, (lo, rate, hi)
    assert lo <= TRUE_RATE * 1.02 and hi >= TRUE_RATE * 0.98, (lo, TRUE_RATE, hi)
    tto = g["time_to_oom_seconds"]
    # (capacity − recent peak) / rate: about (81559 − 46400) MiB at 300 MiB/h ≈ 117 h.
    assert 80 * 3600 < tto < 160 * 3600, tto
    lo_t, hi_t = g["time_to_oom_ci_seconds"]
    assert lo_t <= tto and (hi_t is None or tto <= hi_t)
    assert g["evidence"], "a leak verdict must say why"
    assert g["start"].startswith("2026-03-14T09:00:00") and g["end"].startswith("2026-03-14T14:59:50")


@check("healthy example: not a leak, exit 0")
def _(ctx):
    r = vw(ctx, "--json", os.path.join(ctx.examples, "training-healthy.csv"))
    doc = json.loads(r.stdout)
    g = doc["gpus"][0]
    assert g["verdict"] in ("plateau", "settling"), g["verdict"]
    assert g["leak_rate_bytes_per_second"] is None and g["time_to_oom_seconds"] is None
    assert r.returncode == 0, r.returncode


@check("text report names the verdict, the rate and the OOM time")
def _(ctx):
    r = vw(ctx, os.path.join(ctx.examples, "training-leak.csv"))
    assert "leak" in r.stdout and "MiB/h" in r.stdout and "OOM in" in r.stdout, r.stdout


@check("--critical-runway above the runway makes the leak CRITICAL (exit 2)")
def _(ctx):
    r = vw(ctx, "--critical-runway", "30d", os.path.join(ctx.examples, "training-leak.csv"))
    assert r.returncode == 2, r.returncode


@check("--until before the leak start: no leak")
def _(ctx):
    r = vw(ctx, "--json", "--until", "2026/03/14 10:00:00", os.path.join(ctx.examples, "training-leak.csv"))
    g = json.loads(r.stdout)["gpus"][0]
    assert g["verdict"] != "leak", g
    assert g["end"] <= "2026-03-14T10:00:00", g["end"]


@check("--since cuts the start; --gpu with an unknown GPU is an error")
def _(ctx):
    r = vw(ctx, "--json", "--since", "2026-03-14T12:00:00", os.path.join(ctx.examples, "training-leak.csv"))
    g = json.loads(r.stdout)["gpus"][0]
    assert g["start"] >= "2026-03-14T12:00:00", g["start"]
    r = vw(ctx, "--gpu", "7", os.path.join(ctx.examples, "training-leak.csv"))
    assert r.returncode == 3 and "--gpu" in r.stderr, (r.returncode, r.stderr)


@check("malformed line: exit 3, message names file:line:col, no report printed")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, "bad.csv")
        lines = open(os.path.join(ctx.examples, "training-healthy.csv")).read().splitlines()
        lines[100] = lines[100].replace(" MiB,", " MiX,", 1).replace(", 0, ", ", 0, ", 1)
        lines[100] = re.sub(r", \d+ MiB, ", ", lots MiB, ", lines[100])
        open(bad, "w").write("\n".join(lines) + "\n")
        r = vw(ctx, bad)
        assert r.returncode == 3, r.returncode
        assert re.search(r"bad\.csv:101:\d+", r.stderr), r.stderr
        assert r.stdout == "", "no partial verdict may be printed"
        r = vw(ctx, "--lenient", "--json", bad)
        doc = json.loads(r.stdout)
        assert doc["skipped_lines"] == 1, doc["skipped_lines"]
        assert "101" in doc["skipped_examples"][0], doc["skipped_examples"]


@check("bytes that are not UTF-8 in a skipped line give valid JSON (U+FFFD), never a crash")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, "bad.bin.csv")
        lines = open(os.path.join(ctx.examples, "training-healthy.csv"), "rb").read().splitlines()
        lines[100] = lines[100].replace(b" MiB,", b" \xffiB,", 1)
        open(bad, "wb").write(b"\n".join(lines) + b"\n")
        r = subprocess.run([ctx.vramwatch, "analyze", "--lenient", "--json", bad], capture_output=True, timeout=120)
        assert r.returncode in (0, 1, 2), (r.returncode, r.stderr[-300:])
        doc = json.loads(r.stdout.decode("utf-8"))
        jsonschema.validate(doc, ctx.schema)
        assert doc["skipped_lines"] == 1, doc["skipped_lines"]
        assert "\ufffd" in doc["skipped_examples"][0], doc["skipped_examples"]
        r = subprocess.run([ctx.vramwatch, "analyze", "--json", bad], capture_output=True, timeout=120)
        assert r.returncode == 3 and r.stdout == b"", (r.returncode, r.stdout[:200])


@check("empty file, missing file and unknown format give clear errors (exit 3)")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        empty = os.path.join(d, "empty.csv")
        open(empty, "w").close()
        for args, needle in (([empty], "empty.csv"), ([os.path.join(d, "nope.csv")], "nope.csv"),
                             (["--format", "bogus", empty], "bogus"), (["--interval", "fast", empty], "--interval")):
            r = vw(ctx, *args)
            assert r.returncode == 3, (args, r.returncode)
            assert needle in r.stderr, (args, r.stderr)


@check("bare memory.used loop from standard input with --interval and --total")
def _(ctx):
    values = "\n".join(str(20000 + i // 6) for i in range(1440)) + "\n"  # 10 MiB/h at 5 min? no: per 10 s
    r = vw(ctx, "--json", "--format", "values", "--interval", "10s", "--total", "80GiB", "-", stdin=values)
    doc = json.loads(r.stdout)
    g = doc["gpus"][0]
    assert g["samples"] == 1440, g["samples"]
    assert g["memory_total_bytes"] == 80 * 1024 ** 3
    assert g["clock"] == "synthetic"


@check("--plot and --html write complete files with one chart per GPU and the OOM marker for the leak")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        svg, html = os.path.join(d, "p.svg"), os.path.join(d, "r.html")
        r = vw(ctx, "--plot", svg, "--html", html, os.path.join(ctx.examples, "training-leak.csv"),
               os.path.join(ctx.examples, "training-healthy.csv"))
        assert r.returncode == 1, (r.returncode, r.stderr)
        page = open(html).read()
        assert page.count("data-gpu=") >= 2, "one chart per GPU"
        assert page.count('data-role="oom"') == 1, "the OOM marker only on the leaking GPU"
        assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
        plot = open(svg).read()
        assert plot.startswith("<?xml") and plot.rstrip().endswith("</svg>")
        r = vw(ctx, "--html", os.path.join(d, "missing", "r.html"), os.path.join(ctx.examples, "training-leak.csv"))
        assert r.returncode == 3 and "missing" in r.stderr, (r.returncode, r.stderr)


@check("--html of two files names each series' file, as the text report's `source` does, and in its <title>")
def _(ctx):
    leak, healthy = os.path.join(ctx.examples, "training-leak.csv"), os.path.join(ctx.examples, "training-healthy.csv")
    with tempfile.TemporaryDirectory() as d:
        page_path = os.path.join(d, "both.html")
        r = vw(ctx, "--html", page_path, leak, healthy)
        assert r.returncode == 1, (r.returncode, r.stderr)
        page = open(page_path).read()
    for path in (leak, healthy):
        assert f"  source     {path}\n" in r.stdout, path
        assert page.count(f'data-source="{html.escape(path)}"') == 1, path
        name = os.path.basename(path)
        assert page.count(f'title="{html.escape(path)}">{name}</span>') == 2, f"{name}: its row and its heading"
    assert f"<title>vramwatch report · {html.escape(leak)}, {html.escape(healthy)}</title>" in page


CLOCK_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d")


def leak_evidence(ctx, *args, stdin=None):
    """The leak's evidence (JSON), its text report and its --html page for one trace."""
    with tempfile.TemporaryDirectory() as d:
        page = os.path.join(d, "r.html")
        r = vw(ctx, "--json", *args, stdin=stdin)
        assert r.returncode in (1, 2), (r.returncode, r.stderr)
        g = json.loads(r.stdout)["gpus"][0]
        assert g["verdict"] == "leak", g["verdict"]
        text = vw(ctx, "--html", page, *args, stdin=stdin)
        assert text.returncode == r.returncode, (text.returncode, text.stderr)
        return g, text.stdout, open(page, encoding="utf-8").read()


def growing_since(evidence):
    found = [e for e in evidence if e.startswith("Growing since ")]
    assert len(found) == 1, evidence
    return found[0]


@check("evidence names moments on the trace's clock: UTC times, wall-clock times, or offsets without a clock")
def _(ctx):
    leak = os.path.join(ctx.examples, "training-leak.csv")
    lines = open(leak, encoding="utf-8").read().splitlines()
    with tempfile.TemporaryDirectory() as d:
        # The same samples with their times in UTC ("2026-03-14T09:00:00.035Z"), and as bare values.
        utc_path = os.path.join(d, "utc.csv")
        with open(utc_path, "w", encoding="utf-8") as f:
            f.write(lines[0] + "\n")
            for line in lines[1:]:
                ts, rest = line.split(",", 1)
                f.write(ts.replace("/", "-").replace(" ", "T", 1) + "Z," + rest + "\n")
        values = "".join(line.split(",")[3].split()[0] + "\n" for line in lines[1:])
        wall, wall_text, wall_html = leak_evidence(ctx, leak)
        utc, utc_text, utc_html = leak_evidence(ctx, utc_path)
    synthetic, syn_text, syn_html = leak_evidence(ctx, "--format", "values", "--interval", "10s", "--total",
                                                  "81559MiB", "-", stdin=values)
    assert (wall["clock"], utc["clock"], synthetic["clock"]) == ("wall", "utc", "synthetic")

    # Wall clock: the times as written, no zone, no offsets; the leak start is the one the report gives.
    since = growing_since(wall["evidence"])
    start = wall["leak_start"][:16].replace("T", " ")  # "2026-03-14T10:08:25.019" -> "2026-03-14 10:08"
    assert since.startswith(f"Growing since {start} at "), (since, wall["leak_start"])
    assert not any("UTC" in e or re.search(r" \+\d+[hms]", e) for e in wall["evidence"]), wall["evidence"]
    # UTC: the same sentences, each clock time followed by " UTC", as in the rest of the report.
    assert utc["leak_start"] == wall["leak_start"] + "Z", (utc["leak_start"], wall["leak_start"])
    assert utc["evidence"] == [CLOCK_TIME.sub(lambda m: m.group(0) + " UTC", e) for e in wall["evidence"]], \
        (utc["evidence"], wall["evidence"])
    assert f"Growing since {start} UTC at " in growing_since(utc["evidence"]), utc["evidence"]
    # ... as the rest of the report names the times of that trace: the span, the verdict sentence.
    assert "span       2026-03-14 09:00 UTC → " in utc_text, utc_text
    assert f"since {start} UTC" in utc_html and f"since {start} UTC" not in wall_html, start
    # Every output that prints the evidence prints it so: text, JSON and HTML.
    for g, text, page in ((wall, wall_text, wall_html), (utc, utc_text, utc_html), (synthetic, syn_text, syn_html)):
        sentence = growing_since(g["evidence"])
        assert f"    - {sentence}\n" in text, (sentence, text)
        assert f"<li>{html.escape(sentence).replace('&#x27;', '&#39;')}</li>" in page, sentence
    # No clock: the trace's own times (seconds from its first sample), written as the report
    # writes them ("t+1h 8m"), never a date.
    since = growing_since(synthetic["evidence"])
    start_s = float(synthetic["leak_start"])
    assert since.startswith(f"Growing since t+{int(start_s // 3600)}h {int(start_s % 3600 // 60)}m"), (since, start_s)
    assert not any(CLOCK_TIME.search(e) or "UTC" in e for e in synthetic["evidence"]), synthetic["evidence"]


@check("pmon log (H200, driver 580): its process series reported, insufficient_data, exit 3")
def _(ctx):
    pmon = os.path.join(ctx.data, "h200-driver580", "pmon.log")
    r = vw(ctx, "--json", pmon)
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert "no memory values" not in r.stderr, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, ctx.schema)
    assert len(doc["gpus"]) == 1, doc["gpus"]
    g = doc["gpus"][0]
    assert g["pid"] == 1073 and g["verdict"] == "insufficient_data" and g["samples"] == 5, g
    assert g["memory_used_bytes"] == 2566 * 1024 * 1024, g["memory_used_bytes"]
    text = vw(ctx, pmon)
    assert text.returncode == 3 and "PID 1073" in text.stdout and "insufficient_data" in text.stdout, text.stdout


def write_pmon(d, samples, step_s, rows):
    """A pmon log in `d` (dated 2026-03-14 from 09:00 UTC): `samples` instants `step_s` apart, each with
    the (pid, MB, command) rows that rows(i) gives; returns its path."""
    lines = ["#Date       Time        gpu         pid   type     fb   ccpm    command",
             "#YYYYMMDD   HH:MM:SS    Idx           #    C/G     MB     MB    name"]
    for i in range(samples):
        t = time.gmtime(1_773_478_800 + step_s * i)
        day, clock = time.strftime("%Y%m%d", t), time.strftime("%H:%M:%S", t)
        for pid, mb, command in rows(i):
            lines.append(f" {day}   {clock}      0  {pid:>9}     C  {mb:>5}      0    {command}")
    path = os.path.join(d, "pmon.log")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


@check("pmon: a process's runway counts the memory of the processes listed beside it")
def _(ctx):
    # 6 h every 5 s: PID 4242 leaks 200 MiB/h from 10000 MiB, PID 5151 holds 5000 MiB, on an 80 GiB card.
    with tempfile.TemporaryDirectory() as d:
        path = write_pmon(d, 4320, 5, lambda i: [(4242, 10000 + 200 * i * 5 // 3600, "python train.py"),
                                                 (5151, 5000, "python serve")])
        r = vw(ctx, "--json", "--total", "80GiB", path)
        assert r.returncode in (0, 1), (r.returncode, r.stderr)
        leak = [g for g in json.loads(r.stdout)["gpus"] if g.get("pid") == 4242][0]
        assert leak["verdict"] == "leak", leak
        # (80 GiB - 11.2 GiB peak - 4.9 GiB of PID 5151) / 200 MiB/h: about 13.6 days, not 14.6.
        room = 80 * 1024 - (10000 + 1200) - 5000
        expected_s = room / 200 * 3600
        assert abs(leak["time_to_oom_seconds"] - expected_s) < 0.03 * expected_s, (leak["time_to_oom_seconds"], expected_s)
        assert any("other holders of this GPU use" in e for e in leak["evidence"]), leak["evidence"]


@check("pmon: a holder that exits stops counting against the runway, in analyze and in watch --replay alike")
def _(ctx):
    # 8 h every minute on an 80 GiB card: PID 100 leaks 2 GiB/h from 10000 MB; PID 200 holds 55000 MB
    # for the first half hour only. At the end PID 100 has over a day of room, not minutes.
    with tempfile.TemporaryDirectory() as d:
        path = write_pmon(d, 480, 60, lambda i: [(100, 10000 + 2048 * i // 60, "leaker")] +
                          ([(200, 55000, "big")] if i < 30 else []))
        r = vw(ctx, "--json", "--total", "80GiB", path)
        leak = [g for g in json.loads(r.stdout)["gpus"] if g.get("pid") == 100][0]
        assert leak["verdict"] == "leak" and leak["time_to_oom_seconds"] > 86400, leak
        w = subprocess.run([ctx.vramwatch, "watch", "--replay", path, "--total", "80GiB"], capture_output=True,
                           text=True, timeout=120)
        assert w.returncode == 1, (w.returncode, w.stdout[-600:], w.stderr[-300:])  # a warning, never critical
        assert "severity=critical" not in w.stdout, w.stdout[-600:]
        assert "pid=100" in w.stdout, w.stdout[-600:]


@check("watch --replay of a recording through a pipe, standard input or a FIFO reads it whole, with its header's host")
def _(ctx):
    # 3 h every 10 s, two GPUs, GPU 0 leaking 1 GiB/h: about 400 KB, far more than a pipe's buffer.
    # Before, the replay opened the path a second time for the header's host: on a pipe that took a
    # chunk of the file away from the reader (an error mid-file), and from standard input the host
    # was lost (hostname= in the alerts).
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "rec.jsonl")
        with open(path, "w") as f:
            f.write('{"schema":"vramwatch.record/1","started":"2026-07-14T00:00:00Z","host":"node-p",'
                    '"source":"nvml","interval_s":10.0}\n')
            for i in range(3 * 360 + 1):
                t = f"2026-07-14T{i * 10 // 3600:02d}:{i * 10 // 60 % 60:02d}:{i * 10 % 60:02d}.000Z"
                for g in (0, 1):
                    mib = 20000 + 1024 * i * 10 / 3600 if g == 0 else 30000 + (i * 7919 % 17)
                    f.write(json.dumps({"t": t, "gpu": str(g), "index": g, "uuid": f"GPU-{g}0000000-0000-0000-0000-000000000000",
                                        "name": "NVIDIA H100 80GB HBM3", "used_bytes": int(mib * 2**20),
                                        "total_bytes": 81559 * 2**20, "free_bytes": None, "reserved_bytes": None,
                                        "util": 0.9}, separators=(",", ":")) + "\n")
        assert os.path.getsize(path) > 256 * 1024
        cmd = [ctx.vramwatch, "watch", "--for", "10m"]
        base = subprocess.run(cmd + ["--replay", path], capture_output=True, text=True, timeout=120)
        assert base.returncode in (1, 2), (base.returncode, base.stdout[-600:], base.stderr[-600:])
        assert "GPU 0: leak" in base.stdout and "hostname=node-p" in base.stdout, base.stdout[-600:]
        with open(path, "rb") as f:
            stdin = subprocess.run(cmd + ["--replay", "-"], stdin=f, capture_output=True, text=True, timeout=120)
        fifo = os.path.join(d, "rec.fifo")
        os.mkfifo(fifo)
        writer = subprocess.Popen(["sh", "-c", f"cat '{path}' > '{fifo}'"])
        piped = subprocess.run(cmd + ["--replay", fifo], capture_output=True, text=True, timeout=120)
        writer.wait(timeout=30)
        for name, r in (("standard input", stdin), ("FIFO", piped)):
            assert (r.returncode, r.stdout) == (base.returncode, base.stdout), \
                (name, r.returncode, r.stderr[-600:], r.stdout[-600:], base.stdout[-600:])


@check("watch --replay --lenient reads past a malformed line and names it at the end, as analyze --lenient does")
def _(ctx):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "cut.jsonl")
        with open(path, "w") as f:
            f.write('{"schema":"vramwatch.record/1","host":"node-p","source":"nvml","interval_s":60.0}\n')
            for i in range(240):
                t = f"2026-07-14T{i // 60:02d}:{i % 60:02d}:00Z"
                line = json.dumps({"t": t, "gpu": "0", "index": 0, "used_bytes": (20000 + 17 * i) * 2**20,
                                   "total_bytes": 81559 * 2**20}, separators=(",", ":"))
                # A recorder killed mid-line, then started again on the same file: a cut line.
                f.write((line[:40] if i == 100 else line) + "\n")
        strict = subprocess.run([ctx.vramwatch, "watch", "--replay", path], capture_output=True, text=True, timeout=120)
        assert strict.returncode == 3 and "cut.jsonl:102:" in strict.stderr, (strict.returncode, strict.stderr[-600:])
        lenient = subprocess.run([ctx.vramwatch, "watch", "--replay", path, "--lenient"], capture_output=True, text=True,
                                 timeout=120)
        assert lenient.returncode != 3, (lenient.returncode, lenient.stderr[-600:])
        assert "skipped 1 malformed line(s) (--lenient):" in lenient.stderr, lenient.stderr[-600:]
        assert f"{path}:102:" in lenient.stderr, lenient.stderr[-600:]
        assert "GPU 0:" in lenient.stdout, lenient.stdout[-600:]
        alone = subprocess.run([ctx.vramwatch, "watch", "--lenient"], capture_output=True, text=True, timeout=60)
        assert alone.returncode == 3 and "they need --replay" in alone.stderr, (alone.returncode, alone.stderr)
        # A flag right after --replay was taken for the file: "open --lenient: No such file".
        swapped = subprocess.run([ctx.vramwatch, "watch", "--replay", "--lenient", path], capture_output=True, text=True,
                                 timeout=60)
        assert swapped.returncode == 3, (swapped.returncode, swapped.stderr)
        assert "expected the file to replay right after --replay, got the flag '--lenient'" in swapped.stderr, \
            swapped.stderr


@check("every bad --since/--until value is exit 3 and lists the accepted time forms")
def _(ctx):
    forms = "YYYY/MM/DD HH:MM:SS.mmm, YYYYMMDD HH:MM:SS, ISO 8601 or epoch seconds"
    for flag in ("--since", "--until"):
        for value in ("garbage", "10:00", "2026/02/30", "99999999999999", "2026-03-14T10:00:00+25:00"):
            r = vw(ctx, flag, value, os.path.join(ctx.examples, "training-leak.csv"))
            assert r.returncode == 3, (flag, value, r.returncode)
            assert flag in r.stderr and forms in r.stderr, (flag, value, r.stderr)


@check("--help describes --unit auto as it behaves: _bytes names are bytes, other names ask for --unit")
def _(ctx):
    r = subprocess.run([ctx.vramwatch, "analyze", "--help"], capture_output=True, text=True, timeout=60)
    text = " ".join(r.stdout.split())
    start = text.index("--unit")
    unit_help = text[start:text.index("--format", start)]
    assert "_bytes" in unit_help and "asks for --unit" in unit_help, unit_help
    assert "bytes otherwise" not in unit_help, unit_help


@check("dmon log without processes and no fb values: still the clear 'no memory values' error")
def _(ctx):
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
        f.write("#Date        Time         gpu     sm    mem    fb\n#YYYYMMDD    HH:MM:SS     Idx      %      %     MB\n")
        f.write(" 20261129    19:11:50       0      0      0      -\n 20261129    19:11:51       0      0      0      -\n")
    try:
        r = vw(ctx, f.name)
        assert r.returncode == 3 and "no memory values" in r.stderr, (r.returncode, r.stderr)
    finally:
        os.unlink(f.name)


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
            print(f"FAIL  {name}: {type(e).__name__}: {str(e)[:800]}")
    print(f"{len(checks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
