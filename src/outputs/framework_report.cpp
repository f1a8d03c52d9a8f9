#include "outputs/framework_report.h"

#include <fmt/format.h>

#include <cmath>

namespace vw::outputs {
namespace {

using json = nlohmann::json;

json Opt(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? json(*v) : json(nullptr);
}

}  // namespace

std::string FrameworkHeadline(const detection::FrameworkSplit& d) {
  using detection::FrameworkLayer;
  using detection::FrameworkVerdict;
  switch (d.verdict) {
    case FrameworkVerdict::kGrowing:
      switch (d.layer) {
        case FrameworkLayer::kApplication: return "growing in the application's live tensors";
        case FrameworkLayer::kAllocatorCache: return "growing in PyTorch's allocator cache";
        case FrameworkLayer::kInsideFramework: return "growing inside PyTorch";
        case FrameworkLayer::kBelowFramework: return "growing below PyTorch";
        case FrameworkLayer::kNotSplit: return "growing (the log cannot tell where)";
        case FrameworkLayer::kNone: break;
      }
      return "growing";
    case FrameworkVerdict::kSettled: return "no growth (it rose, then held)";
    case FrameworkVerdict::kFlat: return "no growth";
    case FrameworkVerdict::kTooShort: return "too short to judge";
  }
  return "";
}

std::string FrameworkSourceName(const std::string& source) {
  if (source == "-") return "standard input";
  const size_t slash = source.find_last_of('/');
  return slash == std::string::npos || slash + 1 == source.size() ? source : source.substr(slash + 1);
}

std::vector<FrameworkStep> DeviceSteps(const FrameworkReport& report, int device) {
  std::vector<FrameworkStep> out;
  for (const FrameworkStep& s : report.steps) {
    if (s.device == device) out.push_back(s);
  }
  return out;
}

json FrameworkJson(const std::vector<FrameworkReport>& reports) {
  json out = json::array();
  for (const FrameworkReport& r : reports) {
    for (const detection::FrameworkSplit& d : r.devices) {
      json layers = json::object();
      for (const detection::LayerTrend& t : d.layers) {
        json ci = t.rate_lo_bytes_per_step && t.rate_hi_bytes_per_step
                      ? json::array({*t.rate_lo_bytes_per_step, *t.rate_hi_bytes_per_step})
                      : json(nullptr);
        layers[t.name] = {{"steps", t.n},
                          {"first_bytes", t.first_bytes},
                          {"last_bytes", t.last_bytes},
                          {"min_bytes", t.min_bytes},
                          {"max_bytes", t.max_bytes},
                          {"rate_bytes_per_step", Opt(t.rate_bytes_per_step)},
                          {"rate_ci_bytes_per_step", ci},
                          {"mann_kendall_z", Opt(t.mk_z)},
                          {"mann_kendall_p", Opt(t.mk_p)},
                          {"rising", t.rising},
                          {"settled", t.settled}};
      }
      const char* layer = detection::FrameworkLayerName(d.layer);
      out.push_back({{"source", r.source},
                     {"device", d.device},
                     {"steps", d.steps},
                     {"first_line", d.first_line},
                     {"last_line", d.last_line},
                     {"verdict", detection::FrameworkVerdictName(d.verdict)},
                     {"layer", layer != nullptr ? json(layer) : json(nullptr)},
                     {"layers", layers},
                     {"evidence", d.evidence},
                     {"next_step", d.next_step.empty() ? json(nullptr) : json(d.next_step)},
                     {"not_read", r.not_read},
                     {"not_read_examples", r.not_read_examples}});
    }
  }
  return out;
}

std::string FrameworkText(const std::vector<FrameworkReport>& reports) {
  std::string s;
  for (const FrameworkReport& r : reports) {
    if (r.not_read > 0) {
      s += fmt::format("PyTorch memory log {}: {} value(s) not read:\n", r.source, r.not_read);
      for (const std::string& e : r.not_read_examples) s += "  " + e + "\n";
      s += "\n";
    }
    for (const detection::FrameworkSplit& d : r.devices) {
      std::string headline = FrameworkHeadline(d);
      if (d.verdict == detection::FrameworkVerdict::kGrowing) headline.replace(0, 7, "GROWING");
      s += fmt::format("PyTorch memory log {}, device {}: {}\n", r.source, d.device, headline);
      s += fmt::format("  {} step{} (lines {}-{})\n", d.steps, d.steps == 1 ? "" : "s", d.first_line, d.last_line);
      for (const std::string& e : d.evidence) s += "  " + e + "\n";
      if (!d.next_step.empty()) s += "  Next: " + d.next_step + "\n";
      s += "\n";
    }
  }
  return s;
}

Severity FrameworkSeverity(const detection::FrameworkSplit& split) {
  return split.verdict == detection::FrameworkVerdict::kGrowing ? Severity::kWarning : Severity::kOk;
}

}  // namespace vw::outputs
