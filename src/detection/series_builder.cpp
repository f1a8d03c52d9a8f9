#include "detection/series_builder.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace vw::detection {

void MinMaxDecimator::AddSlow(double t, double value) {
  if (!started_) {
    origin_ = t;
    started_ = true;
  }
  long long n = BinOf(t);
  if (bins_.empty() || bins_.back().first != n) {
    if (!bins_.empty() && n < bins_.back().first) n = bins_.back().first;  // out-of-order: fold in
    if (bins_.empty() || bins_.back().first != n) {
      bins_.push_back({n, Bin{t, value, t, value}});
      if (bins_.size() > max_bins_) Compact();
      return;
    }
  }
  Bin& b = bins_.back().second;
  if (value < b.v_min) b = Bin{t, value, b.t_max, b.v_max};
  if (value > b.v_max) {
    b.t_max = t;
    b.v_max = value;
  }
}

long long MinMaxDecimator::BinSlow(double t) {
  // Held within ±2⁶² so that any time converts (sources pass only times before the year 10000; a
  // time beyond the range shares the outermost bin, NaN bin 0).
  constexpr double kMaxBin = 4611686018427387904.0;
  const double q = std::floor((t - origin_) / width_);
  const auto n = std::isnan(q) ? 0LL : static_cast<long long>(std::clamp(q, -kMaxBin, kMaxBin));
  if (bin_range_failed_ || !std::isfinite(t)) return n;
  double lo = 0, hi = 0;
  if (Boundary(n, &lo) && Boundary(n + 1, &hi) && lo <= t && t < hi) {
    bin_lo_ = lo;
    bin_hi_ = hi;
    bin_n_ = n;
  } else {
    bin_range_failed_ = true;
    ForgetBinRange();
  }
  return n;
}

bool MinMaxDecimator::Boundary(long long m, double* out) const {
  // The bin number as a double: floor() of the same expression BinSlow() casts.
  auto bin = [this](double x) { return std::floor((x - origin_) / width_); };
  const auto target = static_cast<double>(m);
  double x = origin_ + target * width_;  // within a few ulps of the boundary
  if (!std::isfinite(x)) return false;
  constexpr int kSteps = 64;
  if (bin(x) >= target) {
    for (int i = 0; i < kSteps; ++i) {
      const double below = std::nextafter(x, -HUGE_VAL);
      if (bin(below) < target) {
        *out = x;
        return true;
      }
      x = below;
    }
    return false;
  }
  for (int i = 0; i < kSteps; ++i) {
    x = std::nextafter(x, HUGE_VAL);
    if (bin(x) >= target) {
      *out = x;
      return true;
    }
  }
  return false;
}

void MinMaxDecimator::Compact() {
  width_ *= 2;
  ForgetBinRange();
  bin_range_failed_ = false;
  std::vector<std::pair<long long, Bin>> merged;
  merged.reserve(bins_.size() / 2 + 1);
  for (const auto& [n, bin] : bins_) {
    long long m = n >= 0 ? n / 2 : (n - 1) / 2;
    if (merged.empty() || merged.back().first != m) {
      merged.push_back({m, bin});
      continue;
    }
    Bin& into = merged.back().second;
    if (bin.v_min < into.v_min) {
      into.v_min = bin.v_min;
      into.t_min = bin.t_min;
    }
    if (bin.v_max > into.v_max) {
      into.v_max = bin.v_max;
      into.t_max = bin.t_max;
    }
  }
  bins_ = std::move(merged);
}

std::vector<SeriesPoint> MinMaxDecimator::Points() const {
  std::vector<SeriesPoint> out;
  out.reserve(bins_.size() * 2);
  for (const auto& [n, b] : bins_) {
    if (b.t_min == b.t_max && b.v_min == b.v_max) {
      out.push_back({b.t_min, b.v_min});
    } else if (b.t_min <= b.t_max) {
      out.push_back({b.t_min, b.v_min});
      out.push_back({b.t_max, b.v_max});
    } else {
      out.push_back({b.t_max, b.v_max});
      out.push_back({b.t_min, b.v_min});
    }
  }
  return out;
}

SeriesBuilder::SeriesBuilder(GpuIdentity gpu, EngineConfig config, size_t max_points)
    : engine_(std::move(config)), raw_(max_points) {
  meta_.gpu = std::move(gpu);
}

void SeriesBuilder::Add(const MemorySample& sample) {
  AddMemory(sample.t, sample.used_bytes, sample.total_bytes, sample.reserved_bytes);
}

void SeriesBuilder::CountAboveTotal(double t, uint64_t used_bytes, uint64_t total_bytes) {
  if (!first_above_total_) first_above_total_ = AboveTotalSample{t, used_bytes, total_bytes};
  least_above_total_bytes_ = above_total_ == 0 ? used_bytes : std::min(least_above_total_bytes_, used_bytes);
  ++above_total_;
}

void SeriesBuilder::HoldBackSlow(double t, double used_bytes) {
  if (!std::isfinite(t) || !std::isfinite(used_bytes)) {
    Feed(t, used_bytes);  // the engine counts it; nothing to hold
    return;
  }
  // The held samples ahead of this one: the newest `ahead` (they are in time order).
  size_t ahead = 0;
  while (ahead < held_count_ && held_[Held(held_count_ - 1 - ahead)].t > t) ++ahead;
  if (ahead > 0) {
    const bool fed = engine_.samples() > 0;
    const bool behind_fed = fed && t < engine_.last_t();
    // The first sample is never left out: with nothing put in yet and every held sample ahead,
    // this one is the odd one.
    if (behind_fed || (!fed && ahead == held_count_)) {
      // Older than the samples held and than the one put in before them.
      engine_.CountOutOfOrder(t, held_[Held(held_count_ - 1)].t);
      return;
    }
    // The run held is ahead of both its neighbours: it is the one out of order.
    const double before = held_count_ > ahead ? held_[Held(held_count_ - ahead - 1)].t : engine_.last_t();
    for (size_t i = held_count_ - ahead; i < held_count_; ++i) engine_.CountOutOfOrder(held_[Held(i)].t, before);
    held_count_ -= ahead;
  }
  if (held_count_ == kHeld) {
    Feed(held_[held_first_].t, held_[held_first_].bytes);
    held_first_ = (held_first_ + 1) % kHeld;
    --held_count_;
  }
  held_[Held(held_count_)] = {t, used_bytes};
  ++held_count_;
}

void SeriesBuilder::Finish() {
  for (size_t i = 0; i < held_count_; ++i) Feed(held_[Held(i)].t, held_[Held(i)].bytes);
  held_count_ = 0;
  held_first_ = 0;
  DeliverDepartures(std::numeric_limits<double>::infinity());
}

void SeriesBuilder::DeliverDepartures(double t) {
  size_t n = 0;
  while (n < departures_.size() && departures_[n].now_t <= t) {
    const Departure& d = departures_[n++];
    engine_.NoteDeparture(d.last_seen_t, d.now_t, d.bytes, d.pid, d.first_seen_t, d.still_listed);
  }
  departures_.erase(departures_.begin(), departures_.begin() + static_cast<std::ptrdiff_t>(n));
}

void SeriesBuilder::ChangeCapacity(uint64_t total_bytes, std::optional<uint64_t> reserved_bytes) {
  meta_.total_bytes = total_bytes;
  if (reserved_bytes) meta_.reserved_bytes = reserved_bytes;
  engine_.SetCapacity(static_cast<double>(total_bytes), static_cast<double>(meta_.reserved_bytes.value_or(0)));
}

void SeriesBuilder::SetMigInstance(std::optional<unsigned> gpu_instance_id, uint64_t total_bytes) {
  if (!gpu_instance_id) {
    if (meta_.mig_gpu_instance_id) meta_.total_bytes.reset();  // the card's size comes with SetCapacity
    meta_.mig_gpu_instance_id.reset();
    return;
  }
  meta_.mig_gpu_instance_id = gpu_instance_id;
  if (meta_.total_bytes == total_bytes && !meta_.reserved_bytes) return;
  meta_.total_bytes = total_bytes;
  meta_.reserved_bytes.reset();
  engine_.SetCapacity(static_cast<double>(total_bytes), 0);
}

void SeriesBuilder::SetProcess(int64_t pid, std::string command) {
  meta_.pid = pid;
  meta_.process_command = std::move(command);
}

void SeriesBuilder::SetTimeFlags(bool has_zone, bool synthetic_time) {
  meta_.has_zone = has_zone;
  meta_.synthetic_time = synthetic_time;
  engine_.SetEvidenceTimes(EvidenceTimesFor(has_zone, synthetic_time));
}

void SeriesBuilder::AddEvent(double t, std::string label) {
  meta_.events.push_back({t, std::move(label)});
}

SeriesAnalysis SeriesBuilder::Snapshot() const {
  SeriesAnalysis out = meta_;
  out.raw = raw_.Points();
  out.buckets = engine_.buckets();
  if (std::optional<Bucket> open = engine_.CountedOpenBucket()) out.buckets.push_back(*open);
  out.assessment = engine_.Assess();
  out.out_of_order = engine_.out_of_order();
  out.first_out_of_order_t = engine_.first_out_of_order_t();
  out.first_out_of_order_after_t = engine_.first_out_of_order_after_t();
  out.above_total = above_total_;
  out.first_above_total = first_above_total_;
  out.least_above_total_bytes = least_above_total_bytes_;
  return out;
}

}  // namespace vw::detection
