#!/usr/bin/env python3
"""Validates `vramwatch check --json` output against docs/schema/check.schema.json.

Usage: validate_check_schema.py VRAMWATCH SCHEMA
Runs `vramwatch demo --json` (a full report from the bundled emulated scenario) and a check that
cannot load NVML (the "unknown" shape), and validates both. Exits non-zero on the first mismatch.
"""
import json
import subprocess
import sys

import jsonschema


def main() -> int:
    exe, schema_path = sys.argv[1], sys.argv[2]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    runs = {
        "demo": [exe, "demo", "--json"],
        "no-nvml": [exe, "check", "--json", "--kernel-log", "none", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1"],
    }
    expected_status = {"demo": "critical", "no-nvml": "unknown"}
    for name, cmd in runs.items():
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
        try:
            report = json.loads(proc.stdout)
            if name == "demo":  # the demo prints its steps; the last one is the check
                report = [s for s in report["steps"] if s["step"] == "check"][0]["report"]
        except json.JSONDecodeError as e:
            print(f"{name}: stdout is not JSON ({e}):\n{proc.stdout}\n{proc.stderr}", file=sys.stderr)
            return 1
        errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
        for e in errors:
            print(f"{name}: {'/'.join(map(str, e.path))}: {e.message}", file=sys.stderr)
        if errors:
            return 1
        if report["status"] != expected_status[name]:
            print(f"{name}: status {report['status']}, expected {expected_status[name]}", file=sys.stderr)
            return 1
        kinds = {f["kind"] for f in report["findings"]}
        if name == "demo" and not {"orphaned_memory", "zombie_holder"} <= kinds:
            print(f"demo: findings {sorted(kinds)} lack orphaned_memory/zombie_holder", file=sys.stderr)
            return 1
        print(f"{name}: valid ({len(report['findings'])} findings)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
