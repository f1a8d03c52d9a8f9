#include "sources/prometheus/prometheus_series.h"

namespace vw::prometheus {

std::string SeriesText(const std::map<std::string, std::string>& labels) {
  std::string s;
  auto name = labels.find("__name__");
  if (name != labels.end()) s = name->second;
  s += '{';
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (k == "__name__") continue;
    if (!first) s += ',';
    first = false;
    s += k + "=\"" + v + "\"";
  }
  return s + '}';
}

std::string LabelsWithoutName(const std::map<std::string, std::string>& labels) {
  std::map<std::string, std::string> rest = labels;
  rest.erase("__name__");
  return SeriesText(rest);
}

}  // namespace vw::prometheus
