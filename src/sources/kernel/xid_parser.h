// Xid parser: NVIDIA driver error events ("NVRM: Xid (PCI:0000:3b:00): 79, ...") out of kernel
// log text, in every spelling the drivers and log tools produce:
//   - with `pid=..., name=..., ` (515+), `pid=...,` only (pre-515), or neither (570+, unknown process);
//     pid may be the literal '<unknown>' (then missing, never 0);
//   - MIG attribution "(PCI:0000:3b:00 GPU-I:02 GPU-CI:01)"; the pre-2015 form without "PCI:";
//   - a trailing " caused by previous Xid N" (570.124+);
//   - prefixes: dmesg "[ 1936.51] ", "dmesg --ctime" "[Fri Aug 30 11:43:09 2024] ", journald/syslog
//     "Feb 15 17:37:45 host kernel: " or "2026-11-27T10:00:00.5+00:00 host kernel: " (RFC 3339),
//     journalctl -o short-full "Fri 2026-11-27 10:00:00 UTC host kernel: ", RFC 5424
//     "<4>1 2026-11-27T10:00:00Z host kernel - - - " (a leading priority "<4>" is skipped), and
//     /dev/kmsg records "6,1234,5678,-;" (time in µs).
// A line that names an Xid but cannot be read is counted in the scan (UnreadableXidNote).
// Also the map line "NVRM: GPU at PCI:0000:3b:00: GPU-<uuid>" the driver logs once per GPU.
//
// PCI addresses are normalised to NVML's spelling "00000000:3B:00.0" so events match GpuSnapshot.
// Times: `monotonic_s` is seconds since boot (from dmesg/kmsg prefixes) when the line had one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vw::kernel {

struct XidEvent {
  int xid = 0;
  std::string pci_bus_id;                    // normalised "00000000:3B:00.0"
  std::optional<unsigned> gpu_instance;      // MIG "GPU-I:NN"
  std::optional<unsigned> compute_instance;  // MIG "GPU-CI:NN"
  std::optional<int64_t> pid;                // missing when absent or '<unknown>'
  std::string process_name;                  // empty when absent or <unknown>
  std::string message;                       // the driver's text after the code (and pid/name)
  std::optional<int> caused_by_xid;          // "caused by previous Xid N"
  std::optional<double> monotonic_s;         // seconds since boot, from "[ 123.45]" or kmsg
  std::string wall_clock;  // "Feb 15 17:37:45", "Fri Aug 30 11:43:09 2024" or "2026-11-27T10:00:00+00:00" as written
  std::string line;        // the whole input line
  // Earlier events of the same GPU and code that a bounded list (the daemon's) folded into this
  // one: counted with it, their details not kept. 0 for a parsed line.
  uint64_t folded = 0;
};

// "PCI:0000:3b:00", "0000:3b:00", "0000:3b:00.0", "00000000:3B:00.0", "3b:00.0" -> "00000000:3B:00.0".
// Empty when the text is not a PCI address.
std::string NormalizePciBusId(std::string_view text);

// One line -> an event, or nullopt when it is not an Xid line.
std::optional<XidEvent> ParseXidLine(std::string_view line);

struct KernelLogScan {
  std::vector<XidEvent> events;                    // in log order
  std::map<std::string, std::string> uuid_by_pci;  // normalised PCI -> "GPU-..." from map lines
  size_t lines = 0;
  // Lines that name an Xid ("NVRM: Xid (") but could not be read (cut short, no code, a code out
  // of range): how many, and the first one with its line number (1-based in the text scanned).
  size_t unreadable_xid_lines = 0;
  size_t first_unreadable_line = 0;
  std::string first_unreadable;
};

// Every line of `text` ("\n"-separated, "\r" tolerated).
KernelLogScan ScanKernelLog(std::string_view text);

// What a reader tells the user about the Xid lines of `source` that could not be read (empty when
// none): how many, the first (with its line number when `line_numbers`, i.e. the text scanned was
// the whole file), and the form expected.
std::string UnreadableXidNote(const KernelLogScan& scan, std::string_view source, bool line_numbers);

// Removes events whose monotonic time is more than `max_age_s` before `uptime_s` (both seconds
// since boot), except codes for which `keep_always(xid)` is true. Events without a time stay.
// Returns how many were removed.
size_t DropOlderThan(KernelLogScan& scan, double uptime_s, double max_age_s,
                     bool (*keep_always)(const XidEvent& event));

}  // namespace vw::kernel
