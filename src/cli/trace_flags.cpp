#include "cli/trace_flags.h"

#include <fmt/format.h>

#include "core/time.h"

namespace vw::cli {

Result<std::vector<std::string>> SplitColumnsFlag(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string field = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t b = field.find_first_not_of(" \t"), e = field.find_last_not_of(" \t");
    if (b == std::string::npos) {
      return Status::InvalidArgument(
          fmt::format("--columns '{}': column {} is empty (expected comma-separated --query-gpu field names)", text,
                      out.size() + 1));
    }
    out.push_back(field.substr(b, e - b + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Result<double> ParseTimeFlag(std::string_view flag, const std::string& text) {
  auto ts = ParseTimestamp(text);
  if (ts.ok()) return ts->seconds;
  std::string message = ts.status().message();
  if (message.find(kTimestampForms) == std::string::npos) message += fmt::format("; expected {}", kTimestampForms);
  return Status(ts.status().code(), message).WithContext(flag);
}

}  // namespace vw::cli
