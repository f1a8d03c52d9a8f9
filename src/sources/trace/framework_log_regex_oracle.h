// The framework log parser of framework_log.h as it was written with std::regex (ECMAScript, as
// libstdc++ runs it): kept for the tests only, as the reference the hand-written matchers must give
// the same results as. Same contracts as framework_log.h's functions of the same names.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "sources/trace/framework_log.h"

namespace vw::trace::regex_oracle {

bool LooksLikeFrameworkLog(std::string_view head);
bool IsFrameworkLogHead(std::string_view head, bool complete);
Result<FrameworkLog> ParseFrameworkLog(std::string_view text, const std::string& display, bool lenient = false);

}  // namespace vw::trace::regex_oracle
