#!/usr/bin/env bash
# The shipped systemd unit: `systemd-analyze verify` finds nothing wrong with it (the binary is
# replaced by /bin/true, since it is not installed here), and it keeps the settings that let the
# daemon read the kernel log for Xid events (docs/watch.md, "Kernel log").
set -euo pipefail
unit="$1/deploy/systemd/vramwatch.service"
command -v systemd-analyze >/dev/null || { echo "systemd-analyze not found: install the systemd package (scripts/bootstrap does)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's#^ExecStart=/usr/bin/vramwatch #ExecStart=/bin/true #' "$unit" >"$tmp/vramwatch.service"
grep -q '^ExecStart=/bin/true ' "$tmp/vramwatch.service" || { echo "ExecStart=/usr/bin/vramwatch not found in $unit"; exit 1; }
out=$(cd "$tmp" && systemd-analyze verify --man=no ./vramwatch.service 2>&1) || { echo "$out"; exit 1; }
if [ -n "$out" ]; then
  echo "systemd-analyze verify complains about $unit:"
  echo "$out"
  exit 1
fi
fail=0
need() {
  grep -Eq "$1" "$unit" || { echo "$unit: missing $2"; fail=1; }
}
need '^CapabilityBoundingSet=.*\bCAP_SYSLOG\b' "CAP_SYSLOG in CapabilityBoundingSet (reading /dev/kmsg under dmesg_restrict)"
need '^AmbientCapabilities=.*\bCAP_SYSLOG\b' "CAP_SYSLOG in AmbientCapabilities (the service runs as User=vramwatch)"
need '^ProtectKernelLogs=no$' "ProtectKernelLogs=no (yes hides /dev/kmsg and drops CAP_SYSLOG)"
need '^DeviceAllow=/dev/kmsg r$' "DeviceAllow=/dev/kmsg r (DevicePolicy=closed hides it)"
need '^DeviceAllow=char-nvidia rw$' "DeviceAllow=char-nvidia rw (major 195's name in /proc/devices since driver 550.40)"
need '^DeviceAllow=char-nvidia-frontend rw$' "DeviceAllow=char-nvidia-frontend rw (major 195's name before driver 550.40)"
need '^ExecReload=/bin/kill -HUP \$MAINPID$' "ExecReload sending SIGHUP (reopens --alert-log; systemctl reload)"
exit $fail
