"""Reference numbers for the C++ Mann-Kendall tests: pymannkendall.

Usage: mann_kendall_reference.py FILE
FILE: one series per line, values separated by spaces, in time order.
Prints two lines per series, "original" and "hamed_rao", each: name s var_s z p tau (17 digits),
from pymannkendall.original_test and hamed_rao_modification_test with alpha=0.05.
Exits with status 2 and a message on stderr when pymannkendall is missing or FILE is malformed.
"""
import sys

try:
    import pymannkendall
except ImportError as exc:  # the C++ test turns this into a failure with this text
    sys.stderr.write(
        f"mann_kendall_reference.py: pymannkendall is not installed in this Python ({sys.executable}): {exc}\n")
    sys.exit(2)


def main() -> int:
    if len(sys.argv) != 2:
        sys.stderr.write("usage: mann_kendall_reference.py FILE\n")
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = [[float(v) for v in line.split()] for line in f if line.strip()]
    for ys in cases:
        for name, test in (("original", pymannkendall.original_test),
                           ("hamed_rao", pymannkendall.hamed_rao_modification_test)):
            r = test(ys, alpha=0.05)
            print(name, " ".join(f"{float(v):.17g}" for v in (r.s, r.var_s, r.z, r.p, r.Tau)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
