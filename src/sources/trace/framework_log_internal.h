// The framework log parser of framework_log.h with its matchers given (framework_log_match.h):
// framework_log.h's functions are these run with the hand-written matchers; the tests run them with
// the std::regex expressions the matchers stand for too (framework_log_regex_oracle.h) and compare.
// Same contracts as framework_log.h's functions of the same names, less `With`. Pure functions,
// thread-safe when the matchers are.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "sources/trace/framework_log.h"
#include "sources/trace/framework_log_match.h"

namespace vw::trace {

bool LooksLikeFrameworkLogWith(std::string_view head, const framework_match::Matchers& match);
bool IsFrameworkLogHeadWith(std::string_view head, bool complete, const framework_match::Matchers& match);
Result<FrameworkLog> ParseFrameworkLogWith(std::string_view text, const std::string& display, bool lenient,
                                           const framework_match::Matchers& match);

}  // namespace vw::trace
