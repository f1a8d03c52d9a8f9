#!/usr/bin/env bash
# `cmake --install` gives a prefix that works on its own: the executable, the NVML emulator the demo
# loads, the example traces, the deployment files and the docs, and an installed `vramwatch demo`
# that reads the installed examples (not the source tree's) and loads the installed emulator.
#
#   install_test.sh BUILD_DIR
set -euo pipefail
BUILD="$1"
PREFIX="$(mktemp -d "${TMPDIR:-/tmp}/vw-install.XXXXXX")"
trap 'rm -rf "$PREFIX"' EXIT

cmake --install "$BUILD" --prefix "$PREFIX" > "$PREFIX.log" 2>&1 || { cat "$PREFIX.log"; rm -f "$PREFIX.log"; exit 1; }
rm -f "$PREFIX.log"

fail=0
for f in bin/vramwatch lib/vramwatch/emulator/libnvidia-ml.so.1 \
  share/vramwatch/examples/training-leak.csv share/vramwatch/examples/training-healthy.csv \
  share/vramwatch/deploy/prometheus/vramwatch-rules.yml share/vramwatch/deploy/systemd/vramwatch.service \
  share/vramwatch/deploy/grafana/vramwatch-dashboard.json share/vramwatch/deploy/kubernetes/daemonset.yaml \
  share/doc/vramwatch/README.md share/doc/vramwatch/docs/analyze.md share/doc/vramwatch/docs/schema; do
  if [[ ! -e "$PREFIX/$f" ]]; then
    echo "FAIL: not installed: $f"
    fail=1
  fi
done
[[ -x "$PREFIX/bin/vramwatch" ]] || { echo "FAIL: bin/vramwatch is not executable"; exit 1; }

# The installed README's links into docs/ (pages and pictures) lead to installed files.
while read -r link; do
  if [[ ! -e "$PREFIX/share/doc/vramwatch/$link" ]]; then
    echo "FAIL: the installed README links to $link, which is not installed"
    fail=1
  fi
done < <(grep -o '](docs/[^)#]*' "$PREFIX/share/doc/vramwatch/README.md" | sed 's/^](//' | sort -u)

# The installed demo, run from an unrelated directory: exit 0, and the analyze steps name the
# installed example traces.
out="$(cd / && "$PREFIX/bin/vramwatch" demo 2>&1)" && rc=0 || rc=$?
if [[ $rc -ne 0 ]]; then
  echo "FAIL: installed 'vramwatch demo' exited $rc:"
  echo "$out" | tail -20
  fail=1
fi
if ! grep -q "source     $PREFIX/share/vramwatch/examples/training-leak.csv" <<< "$out"; then
  echo "FAIL: the installed demo did not read the installed examples:"
  grep -m3 "source" <<< "$out" || true
  fail=1
fi
if ! grep -Eq "41990 +- +bob +Z " <<< "$out"; then
  echo "FAIL: the installed demo's check step did not run against the installed emulator"
  fail=1
fi
"$PREFIX/bin/vramwatch" version > /dev/null || { echo "FAIL: installed 'vramwatch version'"; fail=1; }
[[ $fail -eq 0 ]] && echo "install: every file in place, the installed demo ran on the installed examples and emulator"
exit $fail
