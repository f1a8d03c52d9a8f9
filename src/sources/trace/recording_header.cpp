#include "sources/trace/recording_header.h"

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/time.h"

namespace vw::trace {

Result<std::optional<RecordingHeader>> ReadRecordingHeader(const std::string& path) {
  std::ifstream in(path);
  if (!in) return FromErrno(errno, "open " + path);
  std::string line;
  std::getline(in, line);
  if (in.bad()) return FromErrno(errno, "read " + path);
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::optional<RecordingHeader>();
  auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_string() || *schema != kRecordingSchema) {
    return std::optional<RecordingHeader>();
  }
  RecordingHeader h;
  if (auto host = j.find("host"); host != j.end() && host->is_string()) h.host = host->get<std::string>();
  if (auto src = j.find("source"); src != j.end() && src->is_string()) h.source = src->get<std::string>();
  if (auto started = j.find("started"); started != j.end() && started->is_string()) {
    auto t = ParseTimestamp(started->get<std::string>());
    if (t.ok()) h.started = t->seconds;
  }
  if (auto iv = j.find("interval_s"); iv != j.end() && iv->is_number()) h.interval_s = iv->get<double>();
  return std::optional<RecordingHeader>(std::move(h));
}

}  // namespace vw::trace
