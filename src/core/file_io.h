// Reading a whole (small) file into memory, with errno turned into a Status that names the file.
// For procfs entries, kernel logs and fixtures; trace files are streamed instead (sources/trace).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace vw {

// Reads `path` to its end (retrying EINTR). Errors say "open <what><path>: <reason>" or
// "read <what><path>: ..."; a file longer than `max_bytes` is an io_error, never a silent cut.
Result<std::string> ReadWholeFile(const std::string& path, size_t max_bytes, std::string_view what = "");

}  // namespace vw
