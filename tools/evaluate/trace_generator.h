// TraceGenerator: a seeded generator of labelled GPU memory traces for evaluating the leak
// detector against the shapes healthy and leaking jobs really make (docs/detection.md, tools/evaluate/README.md).
//
// Each trace is one GPU's `memory.used` sampled at a fixed interval, in whole MiB as nvidia-smi
// reports it, plus its label: healthy or leak, the shape, the true leak rate and start, the card
// size. Trace `i` of a generator depends only on (seed, i): the same seed gives the same corpus on
// every machine (own RNG and distributions, no std:: distributions whose output varies by library).
//
// Shapes (the index picks the shape round-robin over AllShapes(), so every corpus is balanced):
// healthy: plateau, preallocated pool (90–97 % of the card), eval/checkpoint spikes, allocator
// staircase thinning like ln n, one-off step (model reload, or drop and re-ramp), exponential
// settling, serving oscillation; leaks: linear, staircase of 2/20/64 MiB chunks, under spikes,
// under heavy noise, under serving oscillation. A leak never takes the series past the card: the
// trace is cut where it would (capped "trace") or, when that leaves too short a leak, the rate is
// lowered (capped "rate"); the label records which, and its rate is the one in the series.
//
// Units: times in seconds from the first sample (start_epoch_s gives the wall clock), sizes in
// MiB in the series and bytes in labels, rates in bytes/second.
// Threading: Generate() is const and thread-safe; call it from many threads at once.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace vw::evaluate {

enum class Shape {
  kPlateau,
  kPreallocated,
  kSpikes,
  kWarmupStaircase,
  kReloadStep,
  kSettling,
  kServing,
  kLeakLinear,
  kLeakStaircase,
  kLeakUnderSpikes,
  kLeakUnderNoise,
  kLeakUnderServing,
};

// Every shape, healthy ones first, in the round-robin order Generate() uses.
std::span<const Shape> AllShapes();
std::string_view ShapeName(Shape shape);                    // "plateau", "leak_under_noise", ...
std::optional<Shape> ShapeFromName(std::string_view name);  // nullopt for a name ShapeName never gives
bool IsLeak(Shape shape);

struct TraceLabel {
  int id = 0;  // index in the corpus
  Shape shape = Shape::kPlateau;
  bool leak = false;                   // true for the leak shapes
  double total_bytes = 0;              // memory.total of the card
  double interval_s = 1;               // sampling interval (seconds, a whole number of ms)
  double duration_s = 0;               // time of the last sample (the first is at 0)
  double noise_mib = 0;                // standard deviation of the sample noise (MiB)
  double warmup_end_s = 0;             // the job's initial ramp is over (seconds)
  double leak_rate_bps = 0;            // true leak rate (bytes/second), 0 for healthy traces
  std::optional<double> leak_start_s;  // when the leak begins (seconds from the first sample)
  double leak_chunk_mib = 0;           // staircase leaks: size of one leaked chunk; 0 = continuous
  std::string capped;                  // "", "trace" (cut before the card fills) or "rate" (lowered)
  // Serving shapes (0 otherwise): the load's cycle, trough to peak (MiB), and its period (seconds);
  // the batch level on top of it, drawn uniform in [0, load_swing_mib] and held for a random time.
  double load_cycle_mib = 0;
  double load_cycle_period_s = 0;
  double load_swing_mib = 0;
  double start_epoch_s = 0;  // wall-clock time of the first sample (Unix seconds, UTC)

  bool HasServingLoad() const { return load_cycle_mib > 0 || load_swing_mib > 0; }
};

struct Trace {
  TraceLabel label;
  std::vector<int32_t> used_mib;  // sample i is taken at i * label.interval_s

  double TimeOf(size_t i) const { return static_cast<double>(i) * label.interval_s; }
  double HoursOfData() const { return label.duration_s / 3600.0; }
};

struct GeneratorConfig {
  uint64_t seed = 1;
  double min_hours = 1, max_hours = 12;               // trace length, uniform
  double min_interval_s = 0.1, max_interval_s = 10;   // sampling interval, log-uniform
  double max_noise_mib = 60;                          // noise standard deviation up to this
  double min_rate_mib_h = 20, max_rate_mib_h = 4096;  // leak rate, log-uniform
};

class TraceGenerator {
 public:
  explicit TraceGenerator(GeneratorConfig config = {});

  // Trace number `index` (>= 0) of the corpus; its shape is AllShapes()[index % 12].
  Trace Generate(int index) const;
  // The same, with the shape chosen by the caller (tests).
  Trace Generate(int index, Shape shape) const;

  const GeneratorConfig& config() const { return config_; }

 private:
  GeneratorConfig config_;
};

// Writes the trace as `nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total
// --format=csv -lms N` would: "timestamp, index, memory.used [MiB], memory.total [MiB]", then rows
// like "2026/01/05 09:00:00.100, 0, 12345 MiB, 81920 MiB" (UTC wall clock of start_epoch_s + t).
Status WriteNvidiaSmiCsv(const Trace& trace, const std::string& path);

// labels.csv: one row per trace (file name, shape, card, interval, leak rate and start, ...).
// `files[i]` is the CSV file name of labels[i] (relative to the labels file).
// The label's load_cycle_mib, load_cycle_period_s and load_swing_mib as three CSV fields joined
// by commas (labels.csv and vw-evaluate's --csv-out); empty without a serving load.
std::string LoadCsvFields(const TraceLabel& label);

Status WriteLabelsCsv(std::span<const TraceLabel> labels, std::span<const std::string> files, const std::string& path);

// "2026/01/05 09:00:00.100": the nvidia-smi spelling of a Unix time (UTC), milliseconds rounded.
std::string FormatNvidiaSmiTimestamp(double epoch_s);

}  // namespace vw::evaluate
