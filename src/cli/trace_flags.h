// Parsing of the trace-reading flags that more than one command takes (--columns) and of the time
// flags (--since, --until, --end). Plain functions, no state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace vw::cli {

// "timestamp, index,memory.used" -> {"timestamp", "index", "memory.used"}: split on commas,
// spaces around each name trimmed. An empty name ("a,,b", a trailing comma) is an error naming
// its position, never dropped.
Result<std::vector<std::string>> SplitColumnsFlag(const std::string& text);

// The value of a time flag, in seconds since the epoch (as ParseTimestamp reads it). Every error
// names the flag and lists the accepted spellings (kTimestampForms), whatever was wrong with it:
// "--since: bad timestamp 'garbage'; expected YYYY/MM/DD HH:MM:SS.mmm, ...".
Result<double> ParseTimeFlag(std::string_view flag, const std::string& text);

}  // namespace vw::cli
