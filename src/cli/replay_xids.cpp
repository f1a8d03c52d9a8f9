#include "cli/replay_xids.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>

#include "core/printable.h"

namespace vw::cli {

namespace {

// Seconds east of UTC of this machine's zone at `utc_t` (TZ, else /etc/localtime).
double LocalOffsetAt(double utc_t) {
  const auto t = static_cast<std::time_t>(std::floor(utc_t));
  std::tm tm{};
  if (localtime_r(&t, &tm) == nullptr) return 0;
  return static_cast<double>(tm.tm_gmtoff);
}

int YearOf(double t) {
  return std::stoi(FormatIso8601(t, false).substr(0, 4));
}

}  // namespace

std::optional<Timestamp> XidWallTime(const kernel::XidEvent& e, double reference_t) {
  const std::string& w = e.wall_clock;
  if (w.empty()) return std::nullopt;
  if (std::isdigit(static_cast<unsigned char>(w.front()))) {  // ISO 8601
    auto ts = ParseTimestamp(w);
    if (!ts.ok()) return std::nullopt;
    return *ts;
  }
  // ctime with weekday and year ("Fri Nov 27 10:00:00 2026"): 24 characters or so.
  if (auto ts = ParseTimestamp(w); ts.ok()) return *ts;
  // syslog "Nov 27 10:00:00": no weekday, no year; of the reference's year, the one before and the
  // one after, the one that puts the line nearest the reference ("Jan  1" in a trace that starts
  // on Dec 31 is the next year's).
  const int year = YearOf(reference_t);
  std::optional<Timestamp> best;
  for (int y : {year - 1, year, year + 1}) {
    auto ts = ParseTimestamp("Day " + w + " " + std::to_string(y));
    if (!ts.ok()) continue;  // "Feb 29" of a year without one
    if (!best || std::fabs(ts->seconds - reference_t) < std::fabs(best->seconds - reference_t)) best = *ts;
  }
  return best;
}

ReplayXids::ReplayXids(const kernel::KernelLogScan& scan, bool trace_has_zone, double first_t)
    : uuid_by_pci_(scan.uuid_by_pci) {
  size_t to_utc = 0, to_wall = 0, unread = 0;
  std::string first_unread;  // the first time written that could not be read
  for (const kernel::XidEvent& e : scan.events) {
    std::optional<Timestamp> ts = XidWallTime(e, first_t);
    if (!ts) {
      if (!e.wall_clock.empty() && unread++ == 0) first_unread = e.wall_clock;
      untimed_.push_back(e);
      continue;
    }
    double t = ts->seconds;
    if (ts->has_zone && !trace_has_zone) {
      t += LocalOffsetAt(t);
      ++to_wall;
    } else if (!ts->has_zone && trace_has_zone) {
      t -= LocalOffsetAt(t - LocalOffsetAt(t));
      ++to_utc;
    }
    timed_.push_back({t, e});
  }
  std::stable_sort(timed_.begin(), timed_.end(), [](const Placed& a, const Placed& b) { return a.t < b.t; });
  if (const size_t none = untimed_.size() - unread; none > 0) {
    notes_.push_back(
        fmt::format("{} Xid line{} of the kernel log carr{} no absolute time (plain dmesg or /dev/kmsg, seconds since "
                    "boot): counted at the start of the replay; `dmesg -T` or syslog lines can be placed in the trace",
                    none, none == 1 ? "" : "s", none == 1 ? "ies" : "y"));
  }
  if (unread > 0) {
    // `dmesg -T` writes the day and month in the locale's words ("Fr Aug 30", "ven. août 30").
    notes_.push_back(fmt::format(
        "{} Xid line{} of the kernel log {} a time that could not be read (the first: \"{}\"; expected \"Fri Aug 30 "
        "11:43:09 2024\", \"Aug 30 11:43:09\" or ISO 8601; `dmesg -T` writes the locale's day and month names: run it "
        "with LC_ALL=C): counted at the start of the replay",
        unread, unread == 1 ? "" : "s", unread == 1 ? "has" : "have", Printable(Utf8Shortened(first_unread, 60))));
  }
  if (to_wall > 0) {
    notes_.push_back(
        fmt::format("{} kernel log time{} with a zone converted to this machine's local time (TZ) to match the trace's "
                    "zone-less clock",
                    to_wall, to_wall == 1 ? "" : "s"));
  }
  if (to_utc > 0) {
    notes_.push_back(fmt::format(
        "{} zone-less kernel log time{} taken as this machine's local time (TZ) to match the trace's UTC clock", to_utc,
        to_utc == 1 ? "" : "s"));
  }
}

kernel::KernelLogScan ReplayXids::Due(double t) {
  kernel::KernelLogScan out;
  out.uuid_by_pci = uuid_by_pci_;
  if (!started_) {
    started_ = true;
    out.events = untimed_;
  }
  while (next_ < timed_.size() && timed_[next_].t <= t) out.events.push_back(timed_[next_++].event);
  return out;
}

}  // namespace vw::cli
