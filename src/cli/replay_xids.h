// Xid events of a kernel log file placed on a replayed trace's clock (`watch --replay FILE
// --kernel-log LOG`), so that they reach the pipeline when the trace reaches their time.
//
// A line's absolute time comes from its prefix (kernel/xid_parser.h): `dmesg -T` / `--ctime`
// ("[Fri Nov 27 10:00:00 2026]"), syslog ("Nov 27 10:00:00 host kernel:", no year: of the year of
// the trace's first sample, the one before and the one after, the one that puts the line nearest
// that sample), or ISO 8601 ("2026-11-27T10:00:00+00:00 host kernel:", rsyslog, journalctl -o
// short-iso). Plain dmesg ("[  123.456]", seconds since boot) and /dev/kmsg records carry no
// absolute time: those events cannot be placed and are fed at the trace's start.
//
// Clocks: a zone-less time is local wall clock as written, a zoned one is UTC (core/time.h). When
// the trace and the log disagree, the log's time is converted with this machine's time zone (TZ):
// a zone-less line becomes UTC for a zoned trace, a zoned line becomes local wall clock for a
// zone-less trace; a note says so.
//
// Units: seconds (core/time.h). Threading: plain data and free functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/time.h"
#include "sources/kernel/xid_parser.h"

namespace vw::cli {

// The absolute time written in an event's prefix, or nullopt when it has none (or it does not
// parse). `reference_t` (on any clock) gives the year of syslog stamps that lack one.
std::optional<Timestamp> XidWallTime(const kernel::XidEvent& e, double reference_t);

class ReplayXids {
 public:
  // `trace_has_zone`: the trace's times are UTC (else wall clock as written); `first_t`: the time
  // of its first sample.
  ReplayXids(const kernel::KernelLogScan& scan, bool trace_has_zone, double first_t);

  // Events not yet returned whose time is at or before `t` (and, on the first call, those with
  // no absolute time), in time order, with the log's PCI -> UUID map.
  kernel::KernelLogScan Due(double t);

  size_t untimed() const { return untimed_.size(); }
  size_t not_yet_due() const { return timed_.size() - next_; }
  // What the user should know: lines that could not be placed, clock conversions.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  struct Placed {
    double t = 0;
    kernel::XidEvent event;
  };
  std::vector<Placed> timed_;  // by time (stable: log order among equal times)
  std::vector<kernel::XidEvent> untimed_;
  std::map<std::string, std::string> uuid_by_pci_;
  std::vector<std::string> notes_;
  size_t next_ = 0;
  bool started_ = false;
};

}  // namespace vw::cli
