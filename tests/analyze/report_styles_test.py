#!/usr/bin/env python3
"""One style per report: `analyze`'s text report, its evidence, the --html page and the --plot
chart name the leak's start, its out-of-memory moment and its rate with the same strings.

Two traces of the same samples (an hour's plateau at 20000 MiB, then 1500 MiB/h for three hours,
10 s apart, on an 81559 MiB card): bare values without a clock, and nvidia-smi CSV with UTC
times. For each, the strings the text report prints (the rate line, "OOM in ... (at ...)", the
"Growing since ..." of the evidence) must appear as such in the HTML page and the SVG chart, and
the older chart forms (a signed "+1.46 GiB/h", "+1h 10m 55s" offsets, "around 21:00") must not."""
import argparse
import datetime
import html
import os
import re
import subprocess
import sys
import tempfile

START = 1795766400  # 2026-11-27T08:00:00Z


def mib_at(i):
    t = 10 * i
    wobble = (i * 7919) % 5  # 0..4 MiB, deterministic
    return 20000 + wobble + (1500 * (t - 3600) / 3600 if t > 3600 else 0)


def samples():
    return [round(mib_at(i)) for i in range(4 * 360 + 1)]


def run(vramwatch, args, d, stdin=None):
    page, chart = os.path.join(d, "r.html"), os.path.join(d, "p.svg")
    r = subprocess.run([vramwatch, "analyze", "--html", page, "--plot", chart, *args], capture_output=True,
                       text=True, timeout=120, input=stdin)
    assert r.returncode in (1, 2), (r.returncode, r.stderr, r.stdout)
    return r.stdout, open(page, encoding="utf-8").read(), open(chart, encoding="utf-8").read()


def check(name, text, page, chart, expect_clock):
    rate = re.search(r"^  rate       (.+)$", text, re.M)
    oom = re.search(r"^  OOM in     (\S+ \S+ \(at [^)]+\))", text, re.M)
    since = re.search(r"^    - Growing since (.+?) at (\d+ MiB/h) ", text, re.M)
    assert rate and oom and since, text
    assert since.group(2) in rate.group(1), (since.group(2), rate.group(1))
    if expect_clock:
        assert since.group(1).endswith(" UTC") and re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC$", since.group(1)), since
    else:
        assert re.match(r"t\+\d+h \d+m$", since.group(1)), since.group(1)
    wanted = {
        "rate": rate.group(1),
        "OOM": "OOM in " + oom.group(1),
        "leak start": "since " + since.group(1),
    }
    for where, doc in (("HTML", page), ("SVG", chart)):
        for what, s in wanted.items():
            assert html.escape(s, quote=False) in doc, f"{name}: {where} lacks the {what} '{s}'"
        # The forms the charts used to write beside the text report's.
        for old in (r"[+-]\d+\.\d\d GiB/h", r"\d+\.\d\d–\d+\.\d\d GiB/h", r"since \+\d", r"runs out around",
                    r"OOM \+\d", r"\+\d+[dhm] \d+[hm] \d+s"):
            assert not re.search(old, doc), f"{name}: {where} still writes /{old}/: {re.search(old, doc).group(0)}"
    # The "Out of memory" fact and the verdict sentence of the page say it as the text does.
    assert f"memory runs out in {html.escape(oom.group(1), quote=False)}" in page, name
    print(f"ok    {name}: {wanted}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vramwatch", required=True)
    ctx = ap.parse_args()
    values = samples()
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        csv = os.path.join(d, "utc.csv")
        with open(csv, "w", encoding="utf-8") as f:
            f.write("timestamp, index, name, memory.used [MiB], memory.total [MiB]\n")
            for i, v in enumerate(values):
                f.write(f"{iso(START + 10 * i)}, 0, NVIDIA H100 80GB HBM3, {v} MiB, 81559 MiB\n")
        cases = [
            ("no clock", ["--format", "values", "--interval", "10s", "--total", "81559MiB", "-"],
             "".join(f"{v}\n" for v in values), False),
            ("UTC", [csv], None, True),
        ]
        for name, args, stdin, clock in cases:
            try:
                check(name, *run(ctx.vramwatch, args, d, stdin), clock)
            except AssertionError as e:
                failed += 1
                print(f"FAIL  {name}: {str(e)[:1500]}")
    return 1 if failed else 0


def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


if __name__ == "__main__":
    sys.exit(main())
