// The framework view against the driver view: in a framework memory log's steps (core/sample.h,
// read by sources/trace/framework_log.h), which layer of one device's memory grows step after step.
//
// Layers, from the top: `allocated` (live tensors), `cache` (reserved − allocated: what PyTorch's
// caching allocator keeps and no tensor uses), `reserved` (both), `driver` (the driver's used
// memory, when the log prints it) and `outside` (driver − reserved: contexts, libraries and
// anything allocated below PyTorch). Each layer's series, one value per step, is tested the way
// the leak engine tests a floor, by step instead of time: Mann–Kendall with the engine's Hamed–Rao
// correction at `alpha`, Sen's slope per step with its 90 % interval above zero, a rise over the
// log of at least min(64 MiB, 1 % of the layer's level; for cache and outside, of reserved's and
// the driver's), and a second half that still rises at a quarter of the whole pace at least. One
// that rose that much from its first tenth to its second half and then held is `settled` (a step
// or a warm-up), not growing. A long log is thinned to at most
// kMaxFrameworkPoints by keeping each run of consecutive steps' lowest value (its floor), so the
// peaks of a step in progress do not count. A step whose reserved memory is under half of its value
// before is a restart or an emptied cache (without reserved memory: allocated memory under half,
// staying there for three more values): only the steps from the last such drop on are judged, and
// the evidence says so. Drops that come back at once, again and again, are two unnamed sources in
// one log (mixed_sources), and the evidence says that instead.
//
// Which layer grows says where to look: allocated → the application keeps tensors; cache (with
// allocated holding) → the allocator's pool fragments; outside (with reserved holding) → memory
// taken below PyTorch (a native extension, a library, NCCL); reserved rising without an allocated
// series to split it → inside PyTorch; the driver's figure rising without reserved → not split.
// Sizes are bytes, rates bytes per step. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/sample.h"

namespace vw::detection {

inline constexpr size_t kMinFrameworkSteps = 10;    // fewer steps: too short to test
inline constexpr size_t kMaxFrameworkPoints = 480;  // longer logs are thinned to this many floors
inline constexpr double kFrameworkAlpha = 0.01;     // Mann–Kendall level (two-sided p)
// This many drops to under half that come back above twice at the next step, when at least a
// quarter of the values drop: the log mixes two sources (FrameworkSplit::mixed_sources).
inline constexpr size_t kMinMixedDrops = 3;

enum class FrameworkVerdict { kTooShort, kFlat, kSettled, kGrowing };
enum class FrameworkLayer {
  kNone,
  kApplication,
  kAllocatorCache,
  kInsideFramework,
  kBelowFramework,
  kNotSplit,  // the driver's figure rises; the log lacks reserved memory to place it
};

// "too_short", "flat", "settled", "growing".
const char* FrameworkVerdictName(FrameworkVerdict v);
// null for kNone; "application", "allocator_cache", "inside_framework", "below_framework",
// "not_split".
const char* FrameworkLayerName(FrameworkLayer l);

struct LayerTrend {
  std::string name;  // "allocated", "cache", "reserved", "driver", "outside"
  size_t n = 0;      // steps with a value
  double first_bytes = 0, last_bytes = 0, min_bytes = 0, max_bytes = 0;
  // Measured when n >= kMinFrameworkSteps:
  std::optional<double> rate_bytes_per_step;                             // Sen's slope
  std::optional<double> rate_lo_bytes_per_step, rate_hi_bytes_per_step;  // its 90 % interval
  std::optional<double> mk_z, mk_p;                                      // Mann–Kendall z and two-sided p
  // Sen's line through the floors: its value at the first judged step (step index 0 of the run
  // judged; at step i it is intercept + rate * i), for drawing the trend.
  std::optional<double> intercept_bytes;
  bool rising = false;   // every test above passed
  bool settled = false;  // rose from its first tenth to its second half, then held there
};

struct FrameworkSplit {
  int device = 0;
  size_t steps = 0;
  size_t first_line = 0, last_line = 0;  // lines of the first and last step
  size_t first_step = 0;                 // index among the device's steps of the first one judged (after a restart)
  FrameworkVerdict verdict = FrameworkVerdict::kTooShort;
  FrameworkLayer layer = FrameworkLayer::kNone;
  std::vector<LayerTrend> layers;     // those with a value, in the order above
  std::vector<std::string> evidence;  // what each layer did, and the conclusion
  std::string next_step;              // empty when nothing grows
  // The values alternate between two levels step after step (a drop to under half, back above
  // twice at the next step, again and again): two unnamed processes or devices in one series, not
  // restarts. The evidence says so, first; the verdict is of the run after the last drop.
  bool mixed_sources = false;
};

// Sizes as the evidence writes them, to a tenth of a MiB ("2796 MiB", "51.2 KiB", "20.60 GiB" from
// 10 GiB; "-" before a negative one), and with a sign ("+51.2 KiB", "0 B"): a log's steps differ by
// little, so the usual rounding would hide them.
std::string FrameworkBytes(double bytes);
std::string FrameworkSignedBytes(double bytes);

// `steps`: one device's steps, in order (FrameworkLog::steps filtered by device).
FrameworkSplit SplitFrameworkView(int device, std::span<const FrameworkStep> steps);

// Every device of a log's steps (FrameworkLog::steps), by device number.
std::vector<FrameworkSplit> SplitFrameworkLog(std::span<const FrameworkStep> steps);

}  // namespace vw::detection
