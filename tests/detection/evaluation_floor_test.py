#!/usr/bin/env python3
"""Runs the full detection evaluation (vw-evaluate, 1200 traces, seed 11) and fails when vramwatch
falls below the figures it reached when this test was written, or loses its lead over the usual
Prometheus rules. The release goals (97 % / 90 % recall) are higher and not met yet: see
docs/detection.md. These floors catch a regression, they do not claim the goals."""
import re
import subprocess
import sys

FLOORS = {
    "healthy_flagged_max": 0,  # of 700 healthy traces, seed 11
    "recall_40_2h_min": 83.0,  # %, measured 85.3
    "recall_500_1h_min": 80.0,  # %, measured 83.0
    "rate_error_median_max": 10.0,  # %, goal; measured 0.1
    "ci_coverage_min": 85.0,  # %, goal; measured 88.6
}


def row(text, label):
    m = re.search(r"^\s*" + re.escape(label) + r".*$", text, re.M)
    if not m:
        raise AssertionError(f"no line '{label}' in the report")
    return m.group(0)


def percents(line):
    return [float(x) for x in re.findall(r"(\d+(?:\.\d+)?)%", line)]


def main():
    exe = sys.argv[1]
    r = subprocess.run([exe, "--traces", "1200", "--seed", "11", "--quiet"], capture_output=True, text=True,
                       timeout=1200)
    if r.returncode != 0:
        print(r.stdout[-3000:], r.stderr[-3000:])
        print("0 passed, 1 failed")
        return 1
    out = r.stdout
    checks = []
    flagged = re.findall(r"(\d+)/700", row(out, "healthy traces flagged"))
    # Columns: vramwatch's verdicts, its leak alert (the same verdicts after `for:`), that alert while
    # critical (under a day of runway), the baselines.
    ours, alert, critical = int(flagged[0]), int(flagged[1]), int(flagged[2])
    baselines = [int(x) for x in flagged[3:]]
    checks.append((f"healthy traces flagged {ours} <= {FLOORS['healthy_flagged_max']}",
                   ours <= FLOORS["healthy_flagged_max"]))
    checks.append((f"the leak alert flags no more than the verdicts ({alert} <= {ours})", alert <= ours))
    checks.append((f"the critical alert flags no more than the leak alert ({critical} <= {alert})", critical <= alert))
    checks.append((f"fewer false alarms than every baseline ({ours} vs {baselines})", all(ours < b for b in baselines)))
    r40 = percents(row(out, ">=40 MiB/h, ran >=2h: at end"))[0]
    checks.append((f"recall >=40 MiB/h after 2h {r40}% >= {FLOORS['recall_40_2h_min']}%", r40 >= FLOORS["recall_40_2h_min"]))
    r500 = percents(row(out, ">=500 MiB/h: within 1h"))[0]
    checks.append((f"recall >=500 MiB/h within 1h {r500}% >= {FLOORS['recall_500_1h_min']}%",
                   r500 >= FLOORS["recall_500_1h_min"]))
    err = percents(row(out, "rate error median"))[0]
    checks.append((f"rate error median {err}% <= {FLOORS['rate_error_median_max']}%", err <= FLOORS["rate_error_median_max"]))
    cov = percents(row(out, "CI holds the true rate"))[0]
    checks.append((f"CI coverage {cov}% >= {FLOORS['ci_coverage_min']}%", cov >= FLOORS["ci_coverage_min"]))
    failed = 0
    for name, ok in checks:
        print(("ok    " if ok else "FAIL  ") + name)
        failed += 0 if ok else 1
    print(f"{len(checks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
