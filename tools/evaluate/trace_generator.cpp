#include "trace_generator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "core/units.h"

namespace vw::evaluate {
namespace {

constexpr std::array<Shape, 12> kShapes = {
    Shape::kPlateau,       Shape::kPreallocated,    Shape::kSpikes,         Shape::kWarmupStaircase,
    Shape::kReloadStep,    Shape::kSettling,        Shape::kServing,        Shape::kLeakLinear,
    Shape::kLeakStaircase, Shape::kLeakUnderSpikes, Shape::kLeakUnderNoise, Shape::kLeakUnderServing,
};

// memory.total as nvidia-smi prints it for common cards (MiB): V100-16GB, RTX 4090, A10, V100-32GB,
// A100-40GB, L40S, A100-80GB, H100-80GB, H100 NVL, H200.
constexpr std::array<double, 10> kCardMib = {16384, 24564, 23028, 32768, 40960, 46068, 81920, 81559, 95830, 143771};

// xoshiro256** seeded through splitmix64: fast, and the same numbers on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& s : s_) s = SplitMix(seed);
  }
  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double Uniform(double a, double b) { return a + (b - a) * Uniform(); }
  double LogUniform(double a, double b) { return std::exp(Uniform(std::log(a), std::log(b))); }
  bool Chance(double p) { return Uniform() < p; }
  size_t Index(size_t n) { return static_cast<size_t>(Uniform() * static_cast<double>(n)); }
  double Exponential(double mean) { return -mean * std::log1p(-Uniform()); }
  double Normal() {  // Box–Muller, second value cached
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = 0;
    do u1 = Uniform();
    while (u1 <= 0);
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double a = 2.0 * std::numbers::pi * Uniform();
    spare_ = r * std::sin(a);
    has_spare_ = true;
    return r * std::cos(a);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t SplitMix(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::array<uint64_t, 4> s_{};
  double spare_ = 0;
  bool has_spare_ = false;
};

struct Step {
  double t = 0;
  double mib = 0;
};

// A periodic temporary excursion (eval pass, checkpoint gather): +amp during [phase + kP, +dur).
struct Excursion {
  double period_s = 3600, duration_s = 60, phase_s = 0, amp_mib = 0;
};

// Everything that makes one series; Value() is called with non-decreasing t.
struct Model {
  double idle_mib = 0;     // before the job starts
  double job_start_s = 0;  // the warm-up ramp begins
  double base_mib = 0;     // level the warm-up approaches
  double warmup_s = 300;   // the ramp reaches base_mib this long after job_start_s
  // Reload: the process restarts at reload_s, memory is idle for reload_down_s, then ramps to
  // reload_base_mib the same way. reload_s < 0: none.
  double reload_s = -1, reload_down_s = 0, reload_base_mib = 0;
  std::vector<Step> steps;  // permanent increments, sorted by time
  std::vector<Excursion> excursions;
  double settle_amp_mib = 0, settle_tau_s = 1, settle_start_s = 0;
  double osc_amp_mib = 0, osc_period_s = 600, osc_phase = 0;
  std::vector<Step> swings;  // serving batch level: value from t on (absolute MiB), sorted
  double swing_max_mib = 0;  // ... each drawn uniform in [0, this]
  double noise_sigma = 0;
  double leak_mib_s = 0, leak_start_s = 0, leak_chunk_mib = 0, leak_phase = 0;

  size_t next_step = 0, next_swing = 0;
  double step_sum = 0, swing_level = 0;

  // Fast at first, then slower, and exactly `to` once warmup_s has passed.
  double Ramp(double t, double from, double start, double to) const {
    if (t < start) return from;
    if (t >= start + warmup_s) return to;
    const double rest = 1.0 - (t - start) / warmup_s;
    return from + (to - from) * (1.0 - rest * rest * rest);
  }

  double Value(double t, Rng& rng) {
    double v = 0;
    if (reload_s >= 0 && t >= reload_s) {
      const double up = reload_s + reload_down_s;
      v = t < up ? idle_mib : Ramp(t, idle_mib, up, reload_base_mib);
    } else {
      v = Ramp(t, idle_mib, job_start_s, base_mib);
    }
    while (next_step < steps.size() && steps[next_step].t <= t) step_sum += steps[next_step++].mib;
    v += step_sum;
    for (const Excursion& e : excursions) {
      if (t < e.phase_s) continue;
      if (std::fmod(t - e.phase_s, e.period_s) < e.duration_s) v += e.amp_mib;
    }
    if (settle_amp_mib > 0 && t > settle_start_s) {
      v += settle_amp_mib * (1.0 - std::exp(-(t - settle_start_s) / settle_tau_s));
    }
    if (osc_amp_mib > 0 && t > job_start_s) {
      v += osc_amp_mib * 0.5 * (1.0 + std::sin(2.0 * std::numbers::pi * t / osc_period_s + osc_phase));
    }
    while (next_swing < swings.size() && swings[next_swing].t <= t) swing_level = swings[next_swing++].mib;
    v += swing_level;
    if (leak_mib_s > 0 && t > leak_start_s) {
      const double leaked = leak_mib_s * (t - leak_start_s);
      v += leak_chunk_mib > 0 ? leak_chunk_mib * std::floor(leaked / leak_chunk_mib + leak_phase) : leaked;
    }
    if (noise_sigma > 0) v += noise_sigma * rng.Normal();
    return std::max(0.0, std::round(v));
  }

  // The highest the background (all but noise and leak) can reach after t_from.
  double BackgroundMaxMib() const {
    double m = std::max(base_mib, reload_s >= 0 ? reload_base_mib : 0.0);
    for (const Step& s : steps) m += std::max(0.0, s.mib);
    for (const Excursion& e : excursions) m += e.amp_mib;
    m += settle_amp_mib + osc_amp_mib;
    double swing_max = 0;
    for (const Step& s : swings) swing_max = std::max(swing_max, s.mib);
    return m + swing_max + 5.0 * noise_sigma;
  }
};

double RoundToMs(double s) {
  return std::max(0.001, std::round(s * 1000.0) / 1000.0);
}

// Steps of a caching allocator finding new peak shapes: a Poisson process of intensity
// c / (τ0 + t) from the job start, so the count by t grows like c·ln(1 + t/τ0).
std::vector<Step> AllocatorSteps(Rng& rng, double start, double end, double c, double tau0) {
  std::vector<Step> steps;
  double s = 0;
  for (;;) {
    s += rng.Exponential(1.0);
    const double t = start + tau0 * (std::exp(s / c) - 1.0);
    if (t > end) break;
    const double u = rng.Uniform();
    double mib = 2;
    if (u > 0.9) {
      mib = 2.0 * std::round(rng.Uniform(32, 256));  // a large block, rounded to 2 MiB
    } else if (u > 0.5) {
      mib = 20;
    }
    steps.push_back({t, mib});
  }
  return steps;
}

void AddSpikes(Rng& rng, Model& m, double total_mib, double after_s) {
  Excursion eval;
  eval.period_s = rng.Uniform(15, 90) * 60;
  eval.duration_s = rng.Uniform(1, 8) * 60;
  eval.phase_s = after_s + rng.Uniform(0, eval.period_s);
  eval.amp_mib = std::round(rng.Uniform(0.02, 0.12) * total_mib);
  m.excursions.push_back(eval);
  if (rng.Chance(0.6)) {
    Excursion ckpt;
    ckpt.period_s = rng.Uniform(30, 180) * 60;
    ckpt.duration_s = rng.Uniform(0.5, 3) * 60;
    ckpt.phase_s = after_s + rng.Uniform(0, ckpt.period_s);
    ckpt.amp_mib = std::round(rng.Uniform(0.01, 0.08) * total_mib);
    m.excursions.push_back(ckpt);
  }
}

void AddServing(Rng& rng, Model& m, double total_mib, double duration_s) {
  m.osc_amp_mib = std::round(rng.Uniform(0.04, 0.2) * total_mib);
  m.osc_period_s = rng.Uniform(5, 60) * 60;
  m.osc_phase = rng.Uniform(0, 2 * std::numbers::pi);
  const double mean_hold = rng.Uniform(30, 300);
  const double swing_max = rng.Uniform(0.01, 0.08) * total_mib;
  m.swing_max_mib = swing_max;
  for (double t = m.job_start_s; t < duration_s; t += rng.Exponential(mean_hold)) {
    m.swings.push_back({t, std::round(rng.Uniform(0, swing_max))});
  }
}

}  // namespace

std::span<const Shape> AllShapes() {
  return kShapes;
}

std::string_view ShapeName(Shape shape) {
  switch (shape) {
    case Shape::kPlateau: return "plateau";
    case Shape::kPreallocated: return "preallocated";
    case Shape::kSpikes: return "spikes";
    case Shape::kWarmupStaircase: return "warmup_staircase";
    case Shape::kReloadStep: return "reload_step";
    case Shape::kSettling: return "settling";
    case Shape::kServing: return "serving";
    case Shape::kLeakLinear: return "leak_linear";
    case Shape::kLeakStaircase: return "leak_staircase";
    case Shape::kLeakUnderSpikes: return "leak_under_spikes";
    case Shape::kLeakUnderNoise: return "leak_under_noise";
    case Shape::kLeakUnderServing: return "leak_under_serving";
  }
  return "unknown";
}

std::optional<Shape> ShapeFromName(std::string_view name) {
  for (Shape s : kShapes)
    if (ShapeName(s) == name) return s;
  return std::nullopt;
}

bool IsLeak(Shape shape) {
  switch (shape) {
    case Shape::kLeakLinear:
    case Shape::kLeakStaircase:
    case Shape::kLeakUnderSpikes:
    case Shape::kLeakUnderNoise:
    case Shape::kLeakUnderServing: return true;
    default: return false;
  }
}

TraceGenerator::TraceGenerator(GeneratorConfig config) : config_(config) {}

Trace TraceGenerator::Generate(int index) const {
  return Generate(index, kShapes[static_cast<size_t>(index) % kShapes.size()]);
}

Trace TraceGenerator::Generate(int index, Shape shape) const {
  const GeneratorConfig& c = config_;
  Rng rng(c.seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(index) * 0xd1b54a32d192ed03ULL + 17);

  Trace trace;
  TraceLabel& label = trace.label;
  label.id = index;
  label.shape = shape;
  label.leak = IsLeak(shape);
  const double total_mib = kCardMib[rng.Index(kCardMib.size())];
  label.total_bytes = total_mib * kMiB;
  label.interval_s = RoundToMs(rng.LogUniform(c.min_interval_s, c.max_interval_s));
  double duration_s = rng.Uniform(c.min_hours, c.max_hours) * 3600.0;
  // 2026-01-05 00:00 UTC plus up to a year, on a whole second.
  label.start_epoch_s = 1767571200.0 + std::floor(rng.Uniform(0, 365 * 86400.0));

  Model m;
  m.idle_mib = std::round(rng.Uniform(0, 600));
  m.job_start_s = rng.Uniform(0, 120);
  m.warmup_s = rng.Uniform(60, 900);
  const double u = rng.Uniform();
  m.noise_sigma = c.max_noise_mib * u * u;  // mostly small, sometimes up to the maximum
  double warm_end = m.job_start_s + m.warmup_s;

  switch (shape) {
    case Shape::kPreallocated:
      m.warmup_s = rng.Uniform(10, 120);
      warm_end = m.job_start_s + m.warmup_s;
      m.noise_sigma = std::min(m.noise_sigma, rng.Uniform(0, 5));
      break;
    case Shape::kSpikes:
    case Shape::kLeakUnderSpikes: AddSpikes(rng, m, total_mib, warm_end); break;
    case Shape::kWarmupStaircase: {
      // One draw per statement: a call's arguments are evaluated in an order the compiler picks, and
      // the same seed must give the same traces whatever built it (τ0 first, as they were first drawn).
      const double tau0_s = rng.Uniform(30, 300);
      const double steps_c = rng.Uniform(2, 6);
      m.steps = AllocatorSteps(rng, m.job_start_s, duration_s, steps_c, tau0_s);
      break;
    }
    case Shape::kReloadStep:
      m.reload_s = rng.Uniform(0.2, 0.8) * duration_s;
      if (rng.Chance(0.5)) {  // one-off permanent step, no restart
        m.steps.push_back({m.reload_s, std::round(rng.Uniform(0.02, 0.12) * total_mib)});
        m.reload_s = -1;
      } else {
        m.reload_down_s = rng.Uniform(10, 300);
      }
      break;
    case Shape::kSettling:
      m.settle_start_s = warm_end;
      m.settle_amp_mib = std::round(rng.Uniform(0.03, 0.2) * total_mib);
      m.settle_tau_s = rng.Uniform(300, std::max(600.0, duration_s / 6));
      break;
    case Shape::kServing:
    case Shape::kLeakUnderServing: AddServing(rng, m, total_mib, duration_s); break;
    case Shape::kLeakUnderNoise: m.noise_sigma = rng.Uniform(25, c.max_noise_mib); break;
    default: break;
  }

  // The base level: what the model and activations hold, leaving room for the extras above.
  if (shape == Shape::kPreallocated) {
    m.base_mib = std::round(rng.Uniform(0.90, 0.97) * total_mib);
    m.base_mib = std::min(m.base_mib, total_mib - 6 * m.noise_sigma - 1);
  } else {
    m.base_mib = 0;
    const double extras = m.BackgroundMaxMib();
    const double hi = std::max(0.15, std::min(0.8, (0.93 * total_mib - extras) / total_mib));
    m.base_mib = std::round(rng.Uniform(std::min(0.1, hi), hi) * total_mib);
  }
  if (m.reload_s >= 0) {
    const double room = 0.93 * total_mib - (m.BackgroundMaxMib() - m.base_mib);
    m.reload_base_mib = std::round(std::min(room, m.base_mib * rng.Uniform(0.8, 1.3)));
  }

  if (label.leak) {
    double rate_mib_h = rng.LogUniform(c.min_rate_mib_h, c.max_rate_mib_h);
    const bool chunked = shape == Shape::kLeakStaircase ||
                         ((shape == Shape::kLeakUnderSpikes || shape == Shape::kLeakUnderServing) && rng.Chance(0.5));
    if (chunked) {
      constexpr std::array<double, 3> kChunks = {2, 20, 64};
      m.leak_chunk_mib = kChunks[rng.Index(kChunks.size())];
      m.leak_phase = rng.Uniform();
    }
    const double after = warm_end + 300;
    double start = after + rng.Uniform(0, 0.6) * std::max(0.0, duration_s - after);
    if (start > duration_s - 1800) start = std::max(warm_end, duration_s - 1800);
    // Keep the series within the card: cut the trace where it would fill, or lower the rate.
    const double headroom = 0.98 * total_mib - m.BackgroundMaxMib() - m.leak_chunk_mib;
    const double need = rate_mib_h * (duration_s - start) / 3600.0;
    if (need > headroom) {
      const double fill_s = start + std::max(0.0, headroom) / rate_mib_h * 3600.0;
      if (fill_s - start >= 1800 && fill_s >= 3600) {
        duration_s = fill_s;
        label.capped = "trace";
      } else {
        rate_mib_h = std::max(0.0, headroom) / ((duration_s - start) / 3600.0);
        label.capped = "rate";
      }
    }
    m.leak_start_s = start;
    m.leak_mib_s = rate_mib_h / 3600.0;
    label.leak_rate_bps = rate_mib_h * kMiB / 3600.0;
    label.leak_start_s = start;
    label.leak_chunk_mib = m.leak_chunk_mib;
  }

  const size_t n = static_cast<size_t>(std::floor(duration_s / label.interval_s)) + 1;
  label.duration_s = static_cast<double>(n - 1) * label.interval_s;
  label.noise_mib = m.noise_sigma;
  label.warmup_end_s = warm_end;
  label.load_cycle_mib = m.osc_amp_mib;
  label.load_cycle_period_s = m.osc_amp_mib > 0 ? m.osc_period_s : 0;
  label.load_swing_mib = m.swing_max_mib;
  trace.used_mib.resize(n);
  for (size_t i = 0; i < n; ++i) {
    trace.used_mib[i] = static_cast<int32_t>(m.Value(static_cast<double>(i) * label.interval_s, rng));
  }
  return trace;
}

}  // namespace vw::evaluate
