"""Reference numbers for the C++ Theil-Sen tests: scipy.stats.theilslopes and kendalltau.

Usage: theil_sen_reference.py FILE
FILE: one case per line: "confidence x1 y1 x2 y2 ..." (confidence e.g. 0.9).
Prints one line per case: slope intercept low_slope high_slope kendall_tau_b (17 significant digits).
Exits with status 2 and a message on stderr when scipy is missing or FILE is malformed.
"""
import sys

try:
    import scipy.stats
except ImportError as exc:  # the C++ test turns this into a failure with this text
    sys.stderr.write(f"theil_sen_reference.py: scipy is not installed in this Python ({sys.executable}): {exc}\n")
    sys.exit(2)


def main() -> int:
    if len(sys.argv) != 2:
        sys.stderr.write("usage: theil_sen_reference.py FILE\n")
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = [[float(v) for v in line.split()] for line in f if line.strip()]
    for case in cases:
        confidence, pairs = case[0], case[1:]
        xs, ys = pairs[0::2], pairs[1::2]
        res = scipy.stats.theilslopes(ys, xs, alpha=confidence)
        tau = scipy.stats.kendalltau(xs, ys).statistic
        print(" ".join(f"{v:.17g}" for v in (res.slope, res.intercept, res.low_slope, res.high_slope, tau)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
