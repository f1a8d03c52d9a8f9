#include "core/finding.h"

#include <algorithm>
#include <cctype>

namespace vw {
namespace {

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

}  // namespace

bool GpuKeyLess(std::string_view a, std::string_view b) {
  if (a.empty() != b.empty()) return a.empty();
  const bool na = AllDigits(a), nb = AllDigits(b);
  if (na != nb) return na;
  if (na) {  // numeric order without parsing: fewer digits (after leading zeros) first
    a.remove_prefix(std::min(a.find_first_not_of('0'), a.size()));
    b.remove_prefix(std::min(b.find_first_not_of('0'), b.size()));
    if (a.size() != b.size()) return a.size() < b.size();
  }
  return a < b;
}

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kOk: return "ok";
    case Severity::kWarning: return "warning";
    case Severity::kCritical: return "critical";
  }
  return "ok";
}

int ExitCodeFor(Severity worst) {
  return static_cast<int>(worst);
}

}  // namespace vw
