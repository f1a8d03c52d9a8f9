// The header line of a `vramwatch record` file ({"schema":"vramwatch.record/1","host":...}), read on
// its own: `watch --replay` takes the recorded host name from it for its alert keys and labels.
// Threading: free function, no shared state.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "sources/trace/recording_writer.h"

namespace vw::trace {

// The header of the recording at `path`; nullopt when the file's first line is not a recording
// header (another format); an error when the file cannot be read.
Result<std::optional<RecordingHeader>> ReadRecordingHeader(const std::string& path);

}  // namespace vw::trace
