#!/usr/bin/env bash
# deploy/logrotate/vramwatch parses: logrotate --debug (which rotates nothing) reads it and reports
# no error. The `create` line names the vramwatch user that the package's sysusers file makes; a
# test machine has no such user, so the check reads a copy with root in its place.
#
#   verify_logrotate.sh SOURCE_DIR
set -euo pipefail
SRC="$1"
command -v logrotate > /dev/null || { echo "logrotate not found: install the logrotate package (scripts/bootstrap does)"; exit 1; }
TMP="$(mktemp -d "${TMPDIR:-/tmp}/vw-logrotate.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
grep -q '^ *create 0640 vramwatch vramwatch$' "$SRC/deploy/logrotate/vramwatch" ||
  { echo "FAIL: expected 'create 0640 vramwatch vramwatch' in deploy/logrotate/vramwatch"; exit 1; }
sed 's/create 0640 vramwatch vramwatch/create 0640 root root/' "$SRC/deploy/logrotate/vramwatch" > "$TMP/vramwatch"
chmod 644 "$TMP/vramwatch"
out="$(logrotate --debug --state "$TMP/state" "$TMP/vramwatch" 2>&1)" && rc=0 || rc=$?
if [[ $rc -ne 0 ]] || grep -qi '^error' <<< "$out"; then
  echo "FAIL: logrotate rejects deploy/logrotate/vramwatch (exit $rc):"
  echo "$out"
  exit 1
fi
grep -q 'rotating pattern: /var/log/vramwatch/alerts.jsonl' <<< "$out" ||
  { echo "FAIL: logrotate did not take the alert log pattern:"; echo "$out"; exit 1; }
echo "logrotate: deploy/logrotate/vramwatch parses, pattern /var/log/vramwatch/alerts.jsonl"
