#include "core/finding.h"

namespace vw {

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
