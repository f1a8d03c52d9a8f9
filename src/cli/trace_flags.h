// Parsing of the trace-reading flags that more than one command takes (--columns). Plain
// functions, no state.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace vw::cli {

// "timestamp, index,memory.used" -> {"timestamp", "index", "memory.used"}: split on commas,
// spaces around each name trimmed. An empty name ("a,,b", a trailing comma) is an error naming
// its position, never dropped.
Result<std::vector<std::string>> SplitColumnsFlag(const std::string& text);

}  // namespace vw::cli
