#!/usr/bin/env python3
"""Control characters from a recording never reach the terminal raw through `watch --replay`.

A recorded command or host is text any local user chose. Takes tests/data/emulator/departed-holder.jsonl
(PID 41877 leaks on GPU 0, so GpuProcessMemoryLeak names its command), gives that command an OSC title
sequence, a bell and a newline followed by a fake line, and the header's host an ANSI colour, and asserts
that:
- the alert lines on stdout carry them written out (`\\x1b`, `\\n`), never the raw bytes, and the fake
  line does not start a line of its own;
- an error naming a file name with an escape sequence writes it out too.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vramwatch", required=True)
    ap.add_argument("--data", required=True, help="the project's captures (tests/data)")
    a = ap.parse_args()
    src = os.path.join(a.data, "emulator", "departed-holder.jsonl")
    hostile = "python3 train.py\x1b]0;pwned\x07\nGPU 9 (fake) — plateau  [ok]"
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "hostile.jsonl")
        with open(src) as f, open(trace, "w") as out:
            for n, line in enumerate(f):
                rec = json.loads(line)
                if n == 0:
                    rec["host"] = "vm\x1b[31m"
                for p in rec.get("processes", []):
                    if p.get("command") == "python3 train.py --config llama-7b.yaml":
                        p["command"] = hostile
                out.write(json.dumps(rec) + "\n")
        w = subprocess.run([a.vramwatch, "watch", "--replay", trace, "--for", "2m", "--finding-for", "30s"],
                           capture_output=True, timeout=300)
        out, err = w.stdout.decode("utf-8", "replace"), w.stderr.decode("utf-8", "replace")
        if "GpuProcessMemoryLeak" not in out:
            fail(f"no GpuProcessMemoryLeak line to look at (exit {w.returncode}): {out[-2000:]} {err[-2000:]}")
        for raw, name in (("\x1b", "ESC"), ("\x07", "BEL"), ("\r", "CR")):
            if raw in out or raw in err:
                fail(f"a raw {name} reached the terminal: {out[-2000:]!r}")
        if any(line.startswith("GPU 9 (fake)") for line in out.splitlines()):
            fail(f"the command's newline started a line of its own: {out[-2000:]}")
        if "\\x1b]0;pwned\\x07\\nGPU 9 (fake)" not in out:
            fail(f"the command is not written out in the alert line: {out[-2000:]}")
        if "vm\\x1b[31m" not in out:
            fail(f"the host is not written out in the alert line: {out[-2000:]}")

        missing = os.path.join(d, "no\x1b[31msuch.jsonl")
        w = subprocess.run([a.vramwatch, "watch", "--replay", missing], capture_output=True, timeout=60)
        err = w.stderr.decode("utf-8", "replace")
        if w.returncode == 0 or "\x1b" in err or "no\\x1b[31msuch.jsonl" not in err:
            fail(f"the missing file's name is not written out (exit {w.returncode}): {err!r}")
    print("ok")


if __name__ == "__main__":
    main()
