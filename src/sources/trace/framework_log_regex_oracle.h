// The framework log parser of framework_log.h run with its matchers written as std::regex
// expressions (ECMAScript, as libstdc++ runs it; framework_log_match.h gives each): kept for the
// tests only, as the reference the hand-written matchers must give the same results as. Same
// contracts as framework_log.h's functions of the same names.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "sources/trace/framework_log.h"
#include "sources/trace/framework_log_match.h"

namespace vw::trace::regex_oracle {

// The matchers as the expressions of framework_log_match.h's comments, for ParseFrameworkLogWith
// and its kin (framework_log_internal.h).
const framework_match::Matchers& RegexMatchers();

bool LooksLikeFrameworkLog(std::string_view head);
bool IsFrameworkLogHead(std::string_view head, bool complete);
Result<FrameworkLog> ParseFrameworkLog(std::string_view text, const std::string& display, bool lenient = false);

}  // namespace vw::trace::regex_oracle
