// SeriesAnalysis: everything `analyze` (and the live page) knows about one series once its
// samples have gone through a LeakEngine: identity, capacity, a bounded sketch of the raw curve for
// plotting, the engine's buckets and its assessment. Outputs (text, JSON, SVG, HTML) render this.
//
// Units: times are seconds (see core/time.h), sizes bytes.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/sample.h"
#include "detection/leak_engine.h"

namespace vw::detection {

// One point of the plotted raw curve.
struct SeriesPoint {
  double t = 0;
  double used_bytes = 0;
};

// A marked event on the time axis (an Xid, a process start/exit).
struct SeriesEvent {
  double t = 0;
  std::string label;  // "Xid 79", "pid 4242 exited"
};

// A sample whose used memory was above the card's total it came with (seconds, bytes).
struct AboveTotalSample {
  double t = 0;
  uint64_t used_bytes = 0, total_bytes = 0;
};

struct SeriesAnalysis {
  GpuIdentity gpu;                      // for a process series: the GPU it runs on
  std::optional<int64_t> pid;           // set for a per-process series
  std::string process_command;          // for a per-process series
  std::optional<uint64_t> total_bytes;  // card (or MIG instance) size
  // A process series on a MIG GPU instance whose size the trace shows: that instance's id, and
  // total_bytes is the instance's size (the runway is against it); unset otherwise.
  std::optional<unsigned> mig_gpu_instance_id;
  std::optional<uint64_t> reserved_bytes;
  bool has_zone = false;         // times carry a zone (print "Z")
  bool synthetic_time = false;   // the trace had no clock: times count from 0
  std::vector<SeriesPoint> raw;  // decimated raw curve, at most a few thousand points,
                                 // keeping each stretch's min and max
  std::deque<Bucket> buckets;    // the engine's buckets (floor/peak envelopes), the open one last
                                 // once it counts in the floor (LeakEngine::CountedOpenBucket)
  std::vector<SeriesEvent> events;
  Assessment assessment;
  // Samples ignored because they were older than the sample before them (a file written
  // newest-first, logs concatenated in the wrong order, a clock stepped back), and the first one:
  // its time and the time of the sample it followed.
  size_t out_of_order = 0;
  std::optional<double> first_out_of_order_t, first_out_of_order_after_t;
  // Samples ignored because their used memory was above the total they came with (no card holds
  // more than its size: a wrong column, a wrong --total, a garbled line), the first of them, and
  // the least used memory among them (bytes).
  size_t above_total = 0;
  std::optional<AboveTotalSample> first_above_total;
  uint64_t least_above_total_bytes = 0;

  // Whether the first sample out of order came about an hour (55–65 minutes) before the one it
  // followed, on a clock written without a zone: the hour a daylight-saving change repeats, whose
  // second pass is left out (and the rate across it may be off).
  bool ClockWentBackAnHour() const {
    if (has_zone || synthetic_time || !first_out_of_order_t || !first_out_of_order_after_t) return false;
    const double back = *first_out_of_order_after_t - *first_out_of_order_t;
    return back >= 55 * 60 && back <= 65 * 60;
  }
};

// The advice for ClockWentBackAnHour().
inline constexpr const char* kDaylightSavingAdvice =
    "the clock went back an hour: a daylight-saving change in times written without a zone? Sorting would "
    "interleave the two passes through that hour: analyze the part before or after it (--until, --since), or "
    "record with a zone (`vramwatch record` writes UTC)";

}  // namespace vw::detection
