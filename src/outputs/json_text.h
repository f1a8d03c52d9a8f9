// JsonText: the text of a JSON document for output (standard output, HTTP bodies, alert payloads).
//
// Strings from outside the program (process command lines from /proc, capture lines quoted in
// --lenient reports, container and GPU names read from files) may hold bytes that are not UTF-8;
// nlohmann::json::dump() throws on those by default, which would end the program. Here each
// invalid byte is written as U+FFFD instead, so the output is always valid JSON.
//
// indent: -1 for one line, else spaces per nesting level. Pure function, thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace vw::outputs {

inline std::string JsonText(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace vw::outputs
