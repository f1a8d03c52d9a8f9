#include "detection/framework_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "core/units.h"
#include "detection/mann_kendall.h"
#include "detection/quantile.h"
#include "detection/theil_sen.h"

namespace vw::detection {
namespace {

constexpr double kMinRiseBytes = 64 * kMiB;  // a rise of this much is never too small to count
constexpr double kMinRiseShare = 0.01;       // ... nor one of 1 % of the layer's level

struct Series {
  std::vector<double> x;  // step index
  std::vector<double> y;  // bytes
};

// At most kMaxFrameworkPoints points: each run of consecutive steps keeps its lowest value.
Series Thin(const Series& s) {
  if (s.y.size() <= kMaxFrameworkPoints) return s;
  const size_t group = (s.y.size() + kMaxFrameworkPoints - 1) / kMaxFrameworkPoints;
  Series out;
  for (size_t i = 0; i < s.y.size(); i += group) {
    const size_t end = std::min(s.y.size(), i + group);
    out.x.push_back(s.x[i]);
    out.y.push_back(*std::min_element(s.y.begin() + static_cast<std::ptrdiff_t>(i),
                                      s.y.begin() + static_cast<std::ptrdiff_t>(end)));
  }
  return out;
}

// Sizes as a training log prints them, to a tenth of a MiB: "2796 MiB", "20.4 MiB", "51.2 KiB",
// "20.60 GiB" (from 10 GiB). A log's steps differ by little, so the usual rounding would hide them.
std::string Precise(double bytes) {
  const double b = std::fabs(bytes);
  auto trimmed = [](double v, const char* unit) {
    std::string s = fmt::format("{:.1f}", v);
    if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
    return s + " " + unit;
  };
  if (b >= 10 * 1024 * kMiB) return fmt::format("{:.2f} GiB", b / (1024 * kMiB));
  if (b >= kMiB) return trimmed(b / kMiB, "MiB");
  if (b >= 1024) return trimmed(b / 1024, "KiB");
  return fmt::format("{:.0f} B", b);
}

std::string Size(double bytes) {
  return (bytes < 0 ? "-" : "") + Precise(bytes);
}

std::string Signed(double bytes) {
  if (bytes == 0) return "0 B";
  return (bytes > 0 ? "+" : "-") + Precise(bytes);
}

std::string PValue(double p) {
  return p < 0.001 ? std::string("p < 0.001") : fmt::format("p = {:.3f}", p);
}

// `level_bytes`: what the 1 % of the least rise is taken of: the layer's own first value, or for a
// difference (cache, outside) the first value of the layer it is part of (reserved, driver), so a
// cache of a few MiB in a 10 GiB pool does not make 1 % of nothing a rise.
LayerTrend Measure(const std::string& name, const Series& raw, size_t steps, double level_bytes) {
  LayerTrend t;
  t.name = name;
  t.n = raw.y.size();
  if (raw.y.empty()) return t;
  t.first_bytes = raw.y.front();
  t.last_bytes = raw.y.back();
  t.min_bytes = *std::min_element(raw.y.begin(), raw.y.end());
  t.max_bytes = *std::max_element(raw.y.begin(), raw.y.end());
  if (t.n < kMinFrameworkSteps) return t;
  const Series s = Thin(raw);
  auto mk = EngineMannKendall(s.y);
  auto ts = TheilSen(s.x, s.y, 0.90, mk ? std::max(1.0, mk->variance_factor) : 1.0);
  if (!mk || !ts) return t;
  t.mk_z = mk->z;
  t.mk_p = mk->p;
  t.rate_bytes_per_step = ts->slope;
  t.rate_lo_bytes_per_step = ts->low_slope;
  t.rate_hi_bytes_per_step = ts->high_slope;
  t.intercept_bytes = ts->intercept;
  const bool upward = mk->z > 0 && mk->p < kFrameworkAlpha;
  const double level = std::max(std::fabs(level_bytes), 1.0);
  const double least = std::min(kMinRiseBytes, kMinRiseShare * level);
  const double rise = ts->slope * static_cast<double>(steps > 0 ? steps - 1 : 0);
  // Still rising in its second half: a warm-up that ramps and then holds is not growth.
  const size_t half = s.y.size() / 2;
  auto late = TheilSen(std::span<const double>(s.x).subspan(half), std::span<const double>(s.y).subspan(half), 0.90);
  // ... at a quarter of the whole log's pace at least: a ramp that stopped has a second half whose
  // slope is its noise's, near zero either way.
  const bool keeps_going = late && late->slope > 0 && late->slope >= 0.25 * ts->slope;
  t.rising = upward && ts->low_slope > 0 && rise > 0 && rise >= least && keeps_going;
  // Rose by enough from its first tenth to its second half, but not within that half: a step or a
  // warm-up. (Medians, so that noise around a level does not read as one.)
  std::vector<double> early(s.y.begin(),
                            s.y.begin() + static_cast<std::ptrdiff_t>(std::max<size_t>(1, s.y.size() / 10)));
  std::vector<double> second(s.y.begin() + static_cast<std::ptrdiff_t>(half), s.y.end());
  t.settled = !t.rising && !keeps_going && *Median(second) - *Median(early) >= least;
  return t;
}

// "allocated (live tensors): 20.4 MiB → 21 MiB over 13 steps (+614.4 KiB), +51.2 KiB per step
// [+41 KiB, +51.2 KiB], Mann–Kendall p < 0.001: rising, in its second half too".
std::string Sentence(const LayerTrend& t, const char* meaning) {
  std::string s = fmt::format("{} ({}): {} → {} over {} step{} ({})", t.name, meaning, Size(t.first_bytes),
                              Size(t.last_bytes), t.n, t.n == 1 ? "" : "s", Signed(t.last_bytes - t.first_bytes));
  if (t.max_bytes == t.min_bytes) return s + ", the same at every step";
  if (!t.rate_bytes_per_step) return s + fmt::format(", between {} and {}", Size(t.min_bytes), Size(t.max_bytes));
  s += fmt::format(", {} per step [{}, {}], Mann–Kendall {}", Signed(*t.rate_bytes_per_step),
                   Signed(*t.rate_lo_bytes_per_step), Signed(*t.rate_hi_bytes_per_step), PValue(*t.mk_p));
  if (t.rising) return s + ": rising, in its second half too";
  if (t.settled) return s + ": it rose, then held through its second half (a step or a warm-up, not steady growth)";
  return s + ": not a steady rise";
}

const char* Meaning(const std::string& name) {
  if (name == "allocated") return "live tensors";
  if (name == "cache") return "reserved - allocated: the allocator's cache";
  if (name == "reserved") return "held by PyTorch's allocator";
  if (name == "driver") return "the driver's used memory";
  return "driver - reserved: memory outside PyTorch's allocator";
}

const LayerTrend* Find(const std::vector<LayerTrend>& layers, const char* name) {
  for (const auto& l : layers) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

bool Rising(const std::vector<LayerTrend>& layers, const char* name) {
  const LayerTrend* l = Find(layers, name);
  return l != nullptr && l->rising;
}

// A layer that holds: printed, and not rising (too few values to test count as holding).
bool Holds(const std::vector<LayerTrend>& layers, const char* name) {
  const LayerTrend* l = Find(layers, name);
  return l != nullptr && !l->rising;
}

std::string NextStep(FrameworkLayer layer) {
  switch (layer) {
    case FrameworkLayer::kApplication:
      return "The application keeps tensors alive from step to step: look for losses or outputs kept in a list "
             "(append loss.item(), not loss), graphs kept by backward(retain_graph=True), caches and hooks that "
             "hold activations; torch.cuda.memory._record_memory_history() and a snapshot name where the "
             "surviving tensors were allocated.";
    case FrameworkLayer::kAllocatorCache:
      return "PyTorch's caching allocator holds more and more memory that no tensor uses (fragmentation): try "
             "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, keep tensor shapes steady between steps, and watch "
             "torch.cuda.memory_stats()['num_alloc_retries'].";
    case FrameworkLayer::kInsideFramework:
      return "Memory inside PyTorch grows; log torch.cuda.memory_allocated() beside memory_reserved() at every "
             "step to tell live tensors from the allocator's cache.";
    case FrameworkLayer::kNotSplit:
      return "Print torch.cuda.memory_allocated() and memory_reserved() beside the driver's figure at every step: "
             "then the growth can be placed in the tensors, the allocator's cache, or below PyTorch.";
    case FrameworkLayer::kBelowFramework:
      return "Memory grows below PyTorch, where torch.cuda.memory_* cannot see it: a native extension or library "
             "that allocates on its own (custom CUDA ops, a rasteriser, cuDNN/cuBLAS workspaces, NCCL, TensorRT), "
             "or another CUDA context in the process. Disable extensions one at a time; `vramwatch check` shows "
             "the process's driver figure.";
    case FrameworkLayer::kNone: break;
  }
  return "";
}

}  // namespace

std::string FrameworkBytes(double bytes) {
  return Size(bytes);
}

std::string FrameworkSignedBytes(double bytes) {
  return Signed(bytes);
}

const char* FrameworkVerdictName(FrameworkVerdict v) {
  switch (v) {
    case FrameworkVerdict::kTooShort: return "too_short";
    case FrameworkVerdict::kFlat: return "flat";
    case FrameworkVerdict::kSettled: return "settled";
    case FrameworkVerdict::kGrowing: return "growing";
  }
  return "too_short";
}

const char* FrameworkLayerName(FrameworkLayer l) {
  switch (l) {
    case FrameworkLayer::kApplication: return "application";
    case FrameworkLayer::kAllocatorCache: return "allocator_cache";
    case FrameworkLayer::kInsideFramework: return "inside_framework";
    case FrameworkLayer::kBelowFramework: return "below_framework";
    case FrameworkLayer::kNotSplit: return "not_split";
    case FrameworkLayer::kNone: break;
  }
  return nullptr;
}

FrameworkSplit SplitFrameworkView(int device, std::span<const FrameworkStep> all_steps) {
  FrameworkSplit out;
  out.device = device;
  // A restart (or torch.cuda.empty_cache()) drops reserved memory to under half of its value before
  // (the last step that printed it): only the steps from the last such drop on are one run. A log
  // without reserved memory: allocated memory under half of its value before, staying there for
  // the next three values that print it (allocated memory falls that far within a step too, when
  // activations are freed, and comes back).
  size_t start = 0;
  std::optional<std::string> restart;
  const bool any_reserved = std::any_of(all_steps.begin(), all_steps.end(),
                                        [](const FrameworkStep& s) { return s.reserved_bytes.has_value(); });
  auto value = [&](const FrameworkStep& s) { return any_reserved ? s.reserved_bytes : s.allocated_bytes; };
  std::optional<double> before;
  // Drops, and drops whose next value is back above twice theirs: two processes or devices printing
  // into one log without naming theirs alternate so, where a restart drops once and climbs again.
  size_t drops = 0, drop_and_back = 0, values = 0;
  std::optional<size_t> last_drop;
  for (size_t i = 0; i < all_steps.size(); ++i) {
    const std::optional<uint64_t> v = value(all_steps[i]);
    if (!v) continue;
    const double now = static_cast<double>(*v);
    bool drop = before && now < 0.5 * *before;
    if (drop && !any_reserved) {
      size_t seen = 0;
      for (size_t k = i + 1; k < all_steps.size() && seen < 3; ++k) {
        if (const auto w = value(all_steps[k])) {
          ++seen;
          drop &= static_cast<double>(*w) < 0.5 * *before;
        }
      }
    }
    if (before && now > 2 * *before && last_drop && *last_drop + 1 == values) ++drop_and_back;
    if (before && now < 0.5 * *before) {
      ++drops;
      last_drop = values;
    }
    if (drop) {
      start = i;
      restart = fmt::format(
          "{} fell from {} to {} at line {} (a restart, or torch.cuda.empty_cache()): only the {} step{} from there "
          "on are judged.",
          any_reserved ? "reserved" : "allocated", Precise(*before), Precise(now), all_steps[i].line,
          all_steps.size() - i, all_steps.size() - i == 1 ? "" : "s");
    }
    before = now;
    ++values;
  }
  if (drop_and_back >= kMinMixedDrops && 4 * drops >= values) {
    out.mixed_sources = true;
    out.evidence.push_back(fmt::format(
        "{} dropped to under half and came back at the next step {} times in {} steps: these are not restarts but "
        "two processes or devices printing into one log without naming theirs (prefix each line with its "
        "device, 'cuda:N' or '[rankN]:', to judge each apart); judged as one series they cannot be.",
        any_reserved ? "reserved" : "allocated", drop_and_back, values));
  }
  const std::span<const FrameworkStep> steps = all_steps.subspan(start);
  out.steps = steps.size();
  if (steps.empty()) return out;
  if (restart) out.evidence.push_back(*restart);
  out.first_step = start;
  out.first_line = steps.front().line;
  out.last_line = steps.back().line;

  using Get = std::function<std::optional<double>(const FrameworkStep&)>;
  auto opt = [](const std::optional<uint64_t>& v) {
    return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
  };
  const std::pair<const char*, Get> series[] = {
      {"allocated", [&](const FrameworkStep& s) { return opt(s.allocated_bytes); }},
      {"cache",
       [&](const FrameworkStep& s) {
         return s.allocated_bytes && s.reserved_bytes ? std::optional<double>(static_cast<double>(*s.reserved_bytes) -
                                                                              static_cast<double>(*s.allocated_bytes))
                                                      : std::nullopt;
       }},
      {"reserved", [&](const FrameworkStep& s) { return opt(s.reserved_bytes); }},
      {"driver", [&](const FrameworkStep& s) { return opt(s.driver_used_bytes); }},
      {"outside",
       [&](const FrameworkStep& s) {
         return s.driver_used_bytes && s.reserved_bytes
                    ? std::optional<double>(static_cast<double>(*s.driver_used_bytes) -
                                            static_cast<double>(*s.reserved_bytes))
                    : std::nullopt;
       }},
  };
  std::map<std::string, Series> built;
  for (const auto& [name, get] : series) {
    Series& s = built[name];
    for (size_t i = 0; i < steps.size(); ++i) {
      if (auto v = get(steps[i])) {
        s.x.push_back(static_cast<double>(i));
        s.y.push_back(*v);
      }
    }
  }
  for (const auto& [name, get] : series) {
    const Series& s = built[name];
    if (s.y.empty()) continue;
    // A difference's least rise is taken of the layer it is part of: reserved for the cache, the
    // driver's figure for outside (both printed wherever the difference is).
    const std::string_view n = name;
    const Series& of = n == "cache" ? built["reserved"] : n == "outside" ? built["driver"] : s;
    out.layers.push_back(Measure(name, s, steps.size(), of.y.front()));
  }
  for (const LayerTrend& t : out.layers) out.evidence.push_back(Sentence(t, Meaning(t.name)));

  const auto& L = out.layers;
  const bool measured = std::any_of(L.begin(), L.end(), [](const LayerTrend& t) { return t.mk_p.has_value(); });
  const bool has_allocated = Find(L, "allocated") != nullptr;
  if (Rising(L, "allocated")) {
    out.layer = FrameworkLayer::kApplication;
  } else if (Rising(L, "cache") && Holds(L, "allocated")) {
    out.layer = FrameworkLayer::kAllocatorCache;
  } else if (Rising(L, "reserved") && !has_allocated) {
    out.layer = FrameworkLayer::kInsideFramework;
  } else if ((Rising(L, "outside") || Rising(L, "driver")) && Holds(L, "reserved")) {
    out.layer = FrameworkLayer::kBelowFramework;
  } else if (Rising(L, "reserved") || Rising(L, "cache")) {
    // Reserved memory rises, but allocated memory is printed too seldom to tell the tensors from
    // the cache.
    out.layer = FrameworkLayer::kInsideFramework;
  } else if (Rising(L, "driver") || Rising(L, "outside")) {
    // The driver's figure rises, but the log lacks PyTorch's reserved memory to place it.
    out.layer = FrameworkLayer::kNotSplit;
  }
  if (out.layer != FrameworkLayer::kNone) {
    out.verdict = FrameworkVerdict::kGrowing;
    static const std::map<FrameworkLayer, const char*> kWhere = {
        {FrameworkLayer::kApplication, "in the application's live tensors (allocated memory rises step after step)"},
        {FrameworkLayer::kAllocatorCache,
         "in the allocator's cache: reserved memory rises while allocated memory holds"},
        {FrameworkLayer::kInsideFramework,
         "inside PyTorch: reserved memory rises (allocated memory is not printed, or too seldom, to tell the "
         "tensors from the allocator's cache)"},
        {FrameworkLayer::kNotSplit,
         "in the driver's figure, but the log does not print PyTorch's reserved memory beside it to tell where"},
        {FrameworkLayer::kBelowFramework,
         "below PyTorch: the driver's used memory rises while PyTorch's reserved memory holds"}};
    out.evidence.push_back(std::string("Growing ") + kWhere.at(out.layer) + ".");
    out.next_step = NextStep(out.layer);
  } else if (!measured) {
    out.verdict = FrameworkVerdict::kTooShort;
    // Too short to test: say which layers moved at all, which is where to look if it goes on.
    std::vector<std::string> moved, held;
    for (const LayerTrend& t : L) {
      if (t.name == "cache" || t.name == "outside") continue;
      (t.last_bytes > t.first_bytes ? moved : held).push_back(t.name);
    }
    std::string s = fmt::format("{} step{} {} too few to test for a trend (at least {} are needed).", out.steps,
                                out.steps == 1 ? "" : "s", out.steps == 1 ? "is" : "are", kMinFrameworkSteps);
    if (!moved.empty() && !held.empty()) {
      s += fmt::format(" Over them {} rose while {} did not: if that goes on, look there first.",
                       fmt::join(moved, " and "), fmt::join(held, " and "));
    }
    out.evidence.push_back(s);
  } else if (std::any_of(L.begin(), L.end(), [](const LayerTrend& t) { return t.settled; })) {
    out.verdict = FrameworkVerdict::kSettled;
    out.evidence.push_back("Nothing grows: what rose did so early and then held (a warm-up).");
  } else {
    out.verdict = FrameworkVerdict::kFlat;
    out.evidence.push_back("Nothing grows steadily in any layer.");
  }
  return out;
}

std::vector<FrameworkSplit> SplitFrameworkLog(std::span<const FrameworkStep> steps) {
  std::map<int, std::vector<FrameworkStep>> by_device;
  for (const FrameworkStep& s : steps) by_device[s.device].push_back(s);
  std::vector<FrameworkSplit> out;
  for (const auto& [device, ss] : by_device) out.push_back(SplitFrameworkView(device, ss));
  return out;
}

}  // namespace vw::detection
