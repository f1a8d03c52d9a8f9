// SeriesBuilder: turns a stream of samples of one series (one GPU's used memory, or one process's)
// into a SeriesAnalysis: feeds the LeakEngine, tracks capacity, and keeps a bounded min/max sketch
// of the raw curve for plots. `analyze` uses one per GPU (and per GPU+PID where the trace lists
// processes); the live daemon uses the same class, so batch and live cannot disagree (analyze
// holds a few samples back, HoldBackSamples(), to leave out a short run of samples with a wrong
// date; `watch --replay` does the same for the instants of a file, the live daemon takes samples as
// they come).
//
// Cost: O(1) amortised per sample; memory bounded by `max_points` and the engine's bucket cap.
// Units: seconds, bytes. Threading: one thread at a time.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/sample.h"
#include "detection/leak_engine.h"
#include "detection/series_analysis.h"

namespace vw::detection {

// Keeps at most ~2*max_points points of a long curve: time is cut into bins whose width doubles
// whenever the bin count would exceed max_points; each bin keeps its lowest and highest sample.
class MinMaxDecimator {
 public:
  explicit MinMaxDecimator(size_t max_points = 2000) : max_bins_(max_points < 4 ? 4 : max_points) {}
  // Inline for the common case (a time in the cached range of the last bin); the rest, with the
  // same result, in AddSlow.
  void Add(double t, double value) {
    if (started_ && t >= bin_lo_ && t < bin_hi_ && !bins_.empty() && bins_.back().first == bin_n_) {
      Bin& b = bins_.back().second;
      if (value < b.v_min) b = Bin{t, value, b.t_max, b.v_max};
      if (value > b.v_max) {
        b.t_max = t;
        b.v_max = value;
      }
      return;
    }
    AddSlow(t, value);
  }
  std::vector<SeriesPoint> Points() const;  // in time order

 private:
  struct Bin {
    double t_min = 0, v_min = 0, t_max = 0, v_max = 0;
  };
  void AddSlow(double t, double value);
  void Compact();
  // The bin number of time t: floor((t - origin_) / width_), from the cached range when t is in it.
  long long BinOf(double t) {
    if (t >= bin_lo_ && t < bin_hi_) return bin_n_;
    return BinSlow(t);
  }
  long long BinSlow(double t);
  // The smallest time whose bin number is m or more; false when not found in a few steps.
  bool Boundary(long long m, double* out) const;
  void ForgetBinRange() {
    bin_lo_ = 1;
    bin_hi_ = 0;
  }

  size_t max_bins_;
  double origin_ = 0;
  double width_ = 1.0;  // seconds per bin
  bool started_ = false;
  // Every time in [bin_lo_, bin_hi_) has bin number bin_n_ (empty when bin_lo_ > bin_hi_): the bin
  // number is monotonic in t, so the two ends found exactly once per bin spare a division and a
  // floor per sample. Forgotten when the width changes.
  double bin_lo_ = 1, bin_hi_ = 0;
  long long bin_n_ = 0;
  bool bin_range_failed_ = false;                // a boundary was not found: compute every bin until the next Compact()
  std::vector<std::pair<long long, Bin>> bins_;  // (bin number, bin), in order
};

class SeriesBuilder {
 public:
  SeriesBuilder(GpuIdentity gpu, EngineConfig config = {}, size_t max_points = 2000);

  // Gaps between samples as they came (before any was held back or left out): how many were under
  // kCloseGapSeconds, and how many kWideGapSeconds or more. A file of several GPUs read as one
  // (no column tells them apart) comes in bursts: one row per GPU within milliseconds, then the
  // sampling interval.
  static constexpr double kCloseGapSeconds = 0.02, kWideGapSeconds = 0.5;
  size_t close_gaps() const { return close_gaps_; }
  size_t wide_gaps() const { return wide_gaps_; }

  // The GPU the series was made for (its first sample's identity), and the command of its process
  // (SetProcess; empty for a GPU's series).
  const GpuIdentity& gpu() const { return meta_.gpu; }
  // Fills in what the first sample did not know of the GPU (a recording line written before its
  // identity could be read has no uuid, name or bus id) from `later`, a later sample of the same
  // GPU; what is known is kept. Cheap when nothing is missing: called for every sample.
  void CompleteGpu(const GpuIdentity& later) {
    GpuIdentity& g = meta_.gpu;
    if (!g.uuid.empty() && !g.name.empty() && !g.pci_bus_id.empty() && g.index) return;
    if (g.uuid.empty()) g.uuid = later.uuid;
    if (g.name.empty()) g.name = later.name;
    if (g.pci_bus_id.empty()) g.pci_bus_id = later.pci_bus_id;
    if (!g.index) g.index = later.index;
  }
  const std::string& process_command() const { return meta_.process_command; }

  // One sample; `used` missing samples are counted but not fed to the engine, and so are samples
  // whose `used` is above the `total` they came with (impossible data: SeriesAnalysis::above_total).
  void Add(const MemorySample& sample);
  // The same from the values alone: `total`/`reserved` update the capacity as in Add(sample).
  // Inline: optionals passed by value to a call are written to the stack in pieces and read back
  // whole, a store-forwarding stall per sample (measured: ~5 % of `analyze`).
  void AddMemory(double t, std::optional<uint64_t> used_bytes, std::optional<uint64_t> total_bytes,
                 std::optional<uint64_t> reserved_bytes) {
    if (total_bytes) SetCapacity(*total_bytes, reserved_bytes);
    if (!used_bytes) {
      ++missing_;
      return;
    }
    if (total_bytes && *used_bytes > *total_bytes) {  // no card holds more than its size
      CountAboveTotal(t, *used_bytes, *total_bytes);
      return;
    }
    Add(t, static_cast<double>(*used_bytes));
  }
  // A bare value (per-process series).
  void Add(double t, double used_bytes) {
    if (have_arrival_) {
      const double gap = t - last_arrival_t_;
      close_gaps_ += gap >= 0 && gap < kCloseGapSeconds;
      wide_gaps_ += gap >= kWideGapSeconds;
    }
    have_arrival_ = true;
    last_arrival_t_ = t;
    if (!hold_back_) {
      Feed(t, used_bytes);
    } else if (held_count_ == kHeld && t >= held_[Held(kHeld - 1)].t && std::isfinite(t) && std::isfinite(used_bytes)) {
      // Inline for the common case: no sample held is ahead of this one, so the oldest goes in.
      Feed(held_[held_first_].t, held_[held_first_].bytes);
      held_[held_first_] = {t, used_bytes};
      held_first_ = (held_first_ + 1) % kHeld;
    } else {
      HoldBackSlow(t, used_bytes);
    }
  }

  // For a whole recorded stream (analyze): the last kHeld samples are held until the ones after
  // them show whether a run of them (up to kHeld) is ahead of its neighbours on both sides (lines
  // with a wrong date, a clock off for a few samples): such a run is left out and counted as out of
  // time order (LeakEngine::CountOutOfOrder), and the samples after it go in. A sample older than
  // the samples held and the one put in before them is the one left out. The first sample is never
  // left out this way, so a file written newest first still has every sample after its first
  // counted. Call Finish() after the last sample: Snapshot() does not see the samples held. Off by
  // default (the live daemon).
  void HoldBackSamples() { hold_back_ = true; }
  // The most samples held back: the longest run ahead that is left out.
  static constexpr size_t kHeld = 8;
  // Puts the sample held (if any) in; the stream has ended.
  void Finish();
  void SetCapacity(std::optional<uint64_t> total_bytes, std::optional<uint64_t> reserved_bytes) {
    // Inline for the common case: the capacity the series already has.
    if (!total_bytes) return;
    if (meta_.total_bytes == total_bytes && (!reserved_bytes || meta_.reserved_bytes == reserved_bytes)) return;
    ChangeCapacity(*total_bytes, reserved_bytes);
  }

  // A process that held part of this (GPU) series' memory left (LeakEngine::NoteDeparture). With
  // samples held back (HoldBackSamples) it reaches the engine when the first sample at or after
  // `now_t` does, as it would with none held: the engine pairs a departure with the fall that
  // follows the samples it has, and it keeps one departure at a time.
  void NoteDeparture(double last_seen_t, double now_t, double bytes, std::optional<int64_t> pid = std::nullopt,
                     std::optional<double> first_seen_t = std::nullopt,
                     const std::vector<ListedHolder>& still_listed = {}) {
    if (held_count_ > 0) {
      departures_.push_back({last_seen_t, now_t, bytes, pid, first_seen_t, still_listed});
      return;
    }
    engine_.NoteDeparture(last_seen_t, now_t, bytes, pid, first_seen_t, still_listed);
  }
  // For a process series: what the GPU's other holders use now (LeakEngine::SetHeldByOthers);
  // those of its MIG instance when it is on one (SetMigInstance).
  void SetHeldByOthers(std::optional<double> bytes) {
    engine_.SetHeldByOthers(bytes, meta_.mig_gpu_instance_id.has_value());
  }

  void SetProcess(int64_t pid, std::string command);
  // For a process series: on MIG GPU instance `gpu_instance_id` of `total_bytes` (its room, with no
  // reserved memory known), or (nullopt) on the card, whose size SetCapacity then gives.
  void SetMigInstance(std::optional<unsigned> gpu_instance_id, uint64_t total_bytes = 0);
  // The series' clock (SeriesAnalysis::has_zone, synthetic_time); the evidence of later
  // Snapshot() calls names moments on it (EvidenceTimesFor): UTC clock times when the times named
  // their zone, the wall clock as written when they did not, offsets from the first sample when the
  // trace had no clock. Until it is called the evidence uses the EngineConfig given.
  void SetTimeFlags(bool has_zone, bool synthetic_time);
  void AddEvent(double t, std::string label);

  size_t samples_with_memory() const { return engine_.samples(); }
  size_t samples_without_memory() const { return missing_; }

  // The analysis as of the samples seen so far (may be called repeatedly).
  SeriesAnalysis Snapshot() const;

 private:
  void ChangeCapacity(uint64_t total_bytes, std::optional<uint64_t> reserved_bytes);
  void Feed(double t, double used_bytes) {
    if (!departures_.empty()) DeliverDepartures(t);
    engine_.Add(t, used_bytes);
    raw_.Add(t, used_bytes);
  }
  // The departures noted for times up to `t` (all of them for +inf), to the engine in order.
  void DeliverDepartures(double t);
  void HoldBackSlow(double t, double used_bytes);
  void CountAboveTotal(double t, uint64_t used_bytes, uint64_t total_bytes);

  SeriesAnalysis meta_;  // identity, flags, events; raw/buckets/assessment filled in Snapshot()
  LeakEngine engine_;
  MinMaxDecimator raw_;
  size_t missing_ = 0;
  size_t above_total_ = 0;
  std::optional<AboveTotalSample> first_above_total_;
  uint64_t least_above_total_bytes_ = 0;
  // HoldBackSamples(): the samples held back (seconds, bytes), oldest first, in time order, in a
  // ring from held_first_; the newest sample put in is the engine's (LeakEngine::last_t).
  struct HeldSample {
    double t = 0, bytes = 0;
  };
  size_t Held(size_t i) const { return (held_first_ + i) % kHeld; }  // the i-th oldest held
  bool have_arrival_ = false;
  double last_arrival_t_ = 0;
  size_t close_gaps_ = 0, wide_gaps_ = 0;
  bool hold_back_ = false;
  HeldSample held_[kHeld];
  size_t held_first_ = 0, held_count_ = 0;
  // NoteDeparture() calls waiting for the samples held back (in the order they were made).
  struct Departure {
    double last_seen_t, now_t, bytes;
    std::optional<int64_t> pid;
    std::optional<double> first_seen_t;
    std::vector<ListedHolder> still_listed;
  };
  std::vector<Departure> departures_;
};

}  // namespace vw::detection
