// LeakEngine, streaming half: buckets by time, drop segmentation, capacity. Assess() lives in
// leak_engine_assess.cpp.
#include "detection/leak_engine.h"

#include <algorithm>
#include <cmath>

#include "detection/quantile.h"

namespace vw::detection {

bool RunwayIsCritical(const std::optional<double>& tto_lo_s, const std::optional<double>& tto_s,
                      double critical_runway_s) {
  const std::optional<double>& runway = tto_lo_s ? tto_lo_s : tto_s;
  return runway && *runway < critical_runway_s;
}

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kInsufficientData: return "insufficient_data";
    case Verdict::kWarmup: return "warmup";
    case Verdict::kSettling: return "settling";
    case Verdict::kPlateau: return "plateau";
    case Verdict::kLeak: return "leak";
  }
  return "insufficient_data";
}

LeakEngine::LeakEngine(EngineConfig config) : config_(std::move(config)) {
  if (!(config_.bucket_seconds > 0)) config_.bucket_seconds = 60;
  if (!(config_.floor_quantile >= 0 && config_.floor_quantile <= 1)) config_.floor_quantile = 0.10;
  if (config_.max_buckets < 16) config_.max_buckets = 16;
  width_ = config_.bucket_seconds;
}

void LeakEngine::SetCapacity(double total_bytes, double reserved_bytes) {
  total_bytes_ = total_bytes;
  reserved_bytes_ = std::max(0.0, reserved_bytes);
}

void LeakEngine::CountOutOfOrder(double t, double after_t) {
  if (!first_out_of_order_t_) {
    first_out_of_order_t_ = t;
    first_out_of_order_after_t_ = after_t;
  }
  ++out_of_order_;
}

void LeakEngine::AddSlow(double t, double used_bytes) {
  if (!std::isfinite(t) || !std::isfinite(used_bytes)) {
    ++out_of_order_;
    return;
  }
  if (samples_ > 0 && t < last_t_) {
    CountOutOfOrder(t, last_t_);
    return;
  }
  // A fall from the previous sample: explained now by a pending departure (everything so far is
  // lowered before this sample goes in), or remembered for one noted later.
  std::optional<double> prev;
  if (open_.count > 0) {
    prev = open_.last_bytes;
  } else if (!buckets_.empty()) {
    prev = buckets_.back().last_bytes;
  }
  bool fell = false;
  if (prev && *prev - used_bytes >= config_.departure_min_bytes) {
    NoteFall(t, used_bytes, *prev);
    fell = recent_fall_ && recent_fall_->t == t;
  }
  if (samples_ == 0) {
    first_t_ = t;
    segment_start_t_ = t;
    open_grid_start_ = std::floor(t / width_) * width_;
  } else if (t >= open_grid_start_ + width_) {
    // Adapt the width to slow sampling once, before the first bucket is kept: widen (doubling)
    // until a bucket holds min_bucket_samples samples.
    if (!width_fixed_) {
      width_fixed_ = true;
      const double interval = (t - first_t_) / static_cast<double>(samples_);
      while (interval * config_.min_bucket_samples > width_) width_ *= 2;
      open_grid_start_ = std::floor(first_t_ / width_) * width_;
    }
    if (t >= open_grid_start_ + width_) {
      CloseOpenBucket();
      open_grid_start_ = std::floor(t / width_) * width_;
    }
  }
  if (open_.count == 0) {
    open_ = Bucket{};
    open_.t_start = t;
    open_.peak_bytes = used_bytes;
    open_.min_bytes = used_bytes;
  }
  AppendToOpen(t, used_bytes);
  if (fell) {
    recent_fall_->bucket_t_start = open_.t_start;
    recent_fall_->open_index = open_values_.size() - 1;
    recent_fall_->in_open = true;
  }
}

void LeakEngine::NoteFall(double t, double used_bytes, double prev_bytes) {
  const double fall = prev_bytes - used_bytes;
  if (pending_departed_bytes_ > 0 && t > pending_until_t_) pending_departed_bytes_ = 0;
  if (pending_departed_bytes_ > 0 && t > pending_after_t_ &&
      fall >= config_.departure_match_share * pending_departed_bytes_) {
    // Everything added so far came before this fall.
    const double shift = std::min(fall, pending_departed_bytes_);
    const Fall f{t, fall, open_.count > 0 ? open_.t_start : t, open_values_.size(), open_.count > 0};
    if (HeldThrough(f, shift, pending_departure_, pending_still_listed_)) {
      ShiftBefore(f, shift, pending_departure_);
      pending_departed_bytes_ -= shift;
      if (pending_departed_bytes_ < config_.departure_min_bytes) pending_departed_bytes_ = 0;
      return;
    }
    pending_departed_bytes_ = 0;  // nothing of it went on: its fall is a drop as any other
  }
  if (!recent_fall_ || t - recent_fall_->t > config_.departure_match_seconds || fall >= recent_fall_->bytes)
    recent_fall_ = Fall{t, fall, t, 0, false};
}

void LeakEngine::NoteDeparture(double last_seen_t, double now_t, double bytes, std::optional<int64_t> pid,
                               std::optional<double> first_seen_t, const std::vector<ListedHolder>& still_listed) {
  if (!(bytes > 0) || !std::isfinite(bytes)) return;
  const Departure who{
      .pid = pid, .held_bytes = bytes, .last_seen_t = last_seen_t, .gone_t = now_t, .first_seen_t = first_seen_t};
  if (recent_fall_ && recent_fall_->t > last_seen_t && recent_fall_->t <= now_t + config_.departure_match_seconds &&
      recent_fall_->bytes >= config_.departure_match_share * bytes) {
    // What this holder does not explain stays for another that left at the same time.
    Fall f = *recent_fall_;
    const double shift = std::min(f.bytes, bytes);
    if (!HeldThrough(f, shift, who, still_listed)) return;  // nothing of it went on, or it was replaced
    ShiftBefore(f, shift, who);
    f.bytes -= shift;
    if (f.bytes >= config_.departure_min_bytes) recent_fall_ = f;
    return;
  }
  pending_departed_bytes_ += bytes;
  pending_until_t_ = std::max(now_t, last_t_) + config_.departure_match_seconds;
  pending_after_t_ = last_seen_t;
  pending_departure_ = who;
  pending_still_listed_ = still_listed;
}

double LeakEngine::HeldFrom(const Fall& f, const Departure& who) const {
  double from = segment_start_t_;
  if (last_drop_ && segment_start_before_drop_ && last_drop_->t <= f.t && last_drop_->t >= f.t - 2 * width_)
    from = *segment_start_before_drop_;
  // A holder listed from the series' first sample on was there before it: nothing to leave out.
  if (who.first_seen_t && *who.first_seen_t > first_t_)
    from = std::max(from, *who.first_seen_t + config_.departure_ramp_seconds);
  return from;
}

bool LeakEngine::HeldThrough(const Fall& f, double bytes, const Departure& who,
                             const std::vector<ListedHolder>& still_listed) const {
  const double from = HeldFrom(f, who);
  double replaced_by = 0;
  for (const ListedHolder& h : still_listed) {
    if (h.first_seen_t > from && h.first_seen_t < f.t) replaced_by += h.bytes;
  }
  if (replaced_by >= config_.departure_match_share * bytes) return false;
  double lowest = INFINITY;
  for (const Bucket& b : buckets_)
    if (b.t_start >= from && b.t_end < f.t) lowest = std::min(lowest, b.min_bytes);
  if (open_.count > 0 && f.in_open && open_.t_start == f.bucket_t_start && open_.t_start >= from) {
    const size_t n = std::min(f.open_index, open_values_.size());
    for (size_t i = 0; i < n; ++i) lowest = std::min(lowest, open_values_[i]);
  }
  return lowest + config_.departure_min_bytes >= bytes;
}

void LeakEngine::ShiftBefore(const Fall& f, double bytes, const Departure& who) {
  // Earlier samples are left as they were: only these were checked to have held the memory.
  const double from = HeldFrom(f, who);
  for (Bucket& b : buckets_) {
    if (b.t_start < from) continue;
    if (b.t_end < f.t) {
      b.floor_bytes -= bytes;
      b.peak_bytes -= bytes;
      b.min_bytes -= bytes;
      b.last_bytes -= bytes;
    } else if (b.t_start < f.t) {
      // Closed with samples from both sides: its low quantile and minimum are mostly after the
      // fall, its peak before it.
      b.peak_bytes = std::max(b.peak_bytes - bytes, b.last_bytes);
      if (b.floor_bytes >= b.last_bytes + 0.5 * bytes) b.floor_bytes -= bytes;
    }
  }
  if (open_.count > 0 && f.in_open && open_.t_start == f.bucket_t_start && open_.t_start >= from) {
    const size_t n = std::min(f.open_index, open_values_.size());
    for (size_t i = 0; i < n; ++i) open_values_[i] -= bytes;
    open_.peak_bytes = *std::max_element(open_values_.begin(), open_values_.end());
    open_.min_bytes = *std::min_element(open_values_.begin(), open_values_.end());
    if (n == open_values_.size()) open_.last_bytes -= bytes;
  }
  // A segment this fall started is undone when the departure explains it (what is left of the
  // fall is less than a drop).
  if (last_drop_ && segment_start_before_drop_ && last_drop_->t <= f.t && last_drop_->t >= f.t - 2 * width_ &&
      f.bytes - bytes < config_.drop_min_bytes) {
    segment_start_t_ = *segment_start_before_drop_;
    last_drop_.reset();
    segment_start_before_drop_.reset();
  }
  ++departures_explained_;
  departed_bytes_ += bytes;
  last_departure_t_ = f.t;
  last_departed_ = who;
  recent_fall_.reset();
}

void LeakEngine::CloseOpenBucket() {
  if (open_.count == 0) return;
  open_.floor_bytes = *Quantile(open_values_, config_.floor_quantile);
  CheckDrop(open_);
  if (!buckets_.empty() && std::floor(buckets_.back().t_start / width_) == std::floor(open_.t_start / width_) &&
      buckets_.back().t_start >= segment_start_t_) {
    // After a merge the open bucket can share the coarser cell with the last kept one.
    Bucket& m = buckets_.back();
    m.t_end = open_.t_end;
    m.floor_bytes = std::min(m.floor_bytes, open_.floor_bytes);
    m.peak_bytes = std::max(m.peak_bytes, open_.peak_bytes);
    m.min_bytes = std::min(m.min_bytes, open_.min_bytes);
    m.last_bytes = open_.last_bytes;
    m.count += open_.count;
  } else {
    buckets_.push_back(open_);
  }
  open_ = Bucket{};
  open_values_.clear();
  if (buckets_.size() > config_.max_buckets) MergeBuckets();
}

void LeakEngine::CheckDrop(const Bucket& closed) {
  // Recent floor: the lowest bucket floor of this segment over the lookback.
  std::optional<double> recent;
  for (auto it = buckets_.rbegin(); it != buckets_.rend(); ++it) {
    if (it->t_start < segment_start_t_ || it->t_end < closed.t_start - config_.drop_lookback_seconds) break;
    recent = recent ? std::min(*recent, it->floor_bytes) : it->floor_bytes;
  }
  if (!recent) return;
  const double fall = *recent - closed.min_bytes;
  if (fall > config_.drop_min_bytes && fall > config_.drop_fraction * *recent) {
    segment_start_before_drop_ = segment_start_t_;
    segment_start_t_ = closed.t_start;
    last_drop_ = Drop{closed.t_start, *recent, closed.min_bytes};
  }
}

void LeakEngine::MergeBuckets() {
  // Double the width: buckets in the same cell of the coarser grid become one.
  width_ *= 2;
  std::deque<Bucket> merged;
  for (const Bucket& b : buckets_) {
    const double cell = std::floor(b.t_start / width_);
    if (!merged.empty() && std::floor(merged.back().t_start / width_) == cell &&
        (b.t_start < segment_start_t_) == (merged.back().t_start < segment_start_t_)) {
      Bucket& m = merged.back();
      m.t_end = b.t_end;
      m.floor_bytes = std::min(m.floor_bytes, b.floor_bytes);
      m.peak_bytes = std::max(m.peak_bytes, b.peak_bytes);
      m.min_bytes = std::min(m.min_bytes, b.min_bytes);
      m.last_bytes = b.last_bytes;
      m.count += b.count;
    } else {
      merged.push_back(b);
    }
  }
  buckets_ = std::move(merged);
  open_grid_start_ = std::floor(open_grid_start_ / width_) * width_;
}

}  // namespace vw::detection
