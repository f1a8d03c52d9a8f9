#include "cli/analyze_framework.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "detection/framework_split.h"
#include "sources/trace/framework_log.h"
#include "sources/trace/line_reader.h"

namespace vw::cli {
namespace {

constexpr size_t kHeadBytes = 64 * 1024;
constexpr size_t kMaxLogBytes = size_t{1} << 30;  // 1 GiB of log text

// The text of `path` ("-": standard input) as UTF-8 lines joined by "\n", read through LineReader
// so that a log PowerShell wrote (UTF-16) and "\r\n" line ends read as any other. Stops once
// `limit` bytes are read; `complete` says whether the end of the input was reached, and then
// `*tail_left_out` (when given) how many bytes of a last line without its end were left out.
Result<std::string> ReadText(const std::string& path, size_t limit, bool* complete, uint64_t* tail_left_out = nullptr) {
  auto reader = trace::LineReader::Open(path);
  if (!reader.ok()) return reader.status();
  std::string text;
  std::string_view line;
  *complete = false;
  while (text.size() < limit) {
    if (!(*reader)->Next(&line)) {
      if (!(*reader)->status().ok()) return (*reader)->status();
      *complete = true;
      if (tail_left_out != nullptr) *tail_left_out = (*reader)->unterminated_tail_bytes();
      break;
    }
    text.append(line);
    text += '\n';
  }
  return text;
}

}  // namespace

bool IsFrameworkLogFile(const std::string& path, const std::string& format) {
  if (format == "torch") return true;
  if (format != "auto" || path == "-") return false;
  // Only a regular file can be looked at and then read again from its start: what is read of a
  // pipe or FIFO (`<(cmd)`, /dev/stdin) to look would be lost to the trace reader.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  bool complete = false;
  auto head = ReadText(path, kHeadBytes, &complete);
  if (!head.ok()) return false;  // the trace reader names the file and why it cannot be read
  return trace::IsFrameworkLogHead(*head, complete);
}

Result<outputs::FrameworkReport> AnalyzeFrameworkLog(const std::string& path, const AnalyzeFlags& flags,
                                                     AnalyzeSettings& settings, bool* no_device_matched) {
  if (!flags.since.empty() || !flags.until.empty()) {
    return Status::InvalidArgument(fmt::format(
        "{}: --since and --until select times; a PyTorch memory log has steps, not times (cut the log instead)", path));
  }
  bool complete = false;
  uint64_t tail_left_out = 0;
  auto text = ReadText(path, kMaxLogBytes, &complete, &tail_left_out);
  if (!text.ok()) return text.status();
  if (const std::string note = trace::UnterminatedTailNote(path == "-" ? "<stdin>" : path, tail_left_out);
      !note.empty()) {
    AddNote(settings, note);
  }
  if (!complete) {
    return Status::InvalidArgument(
        fmt::format("{}: the log is larger than 1 GiB; cut it (e.g. keep its last lines with tail)", path));
  }
  auto log = trace::ParseFrameworkLog(*text, path, flags.lenient);
  if (!log.ok()) return log.status();
  outputs::FrameworkReport r;
  r.source = path;
  r.lines = log->lines;
  r.not_read = log->skipped;
  r.not_read_examples = log->skipped_examples;
  std::vector<detection::FrameworkSplit> devices = detection::SplitFrameworkLog(log->steps);
  for (const detection::FrameworkSplit& d : devices) {
    if (!d.mixed_sources) continue;
    AddNote(settings, fmt::format("{}: device {}'s values alternate between two levels step after step: two "
                                  "processes or devices print into the log without naming theirs; prefix each "
                                  "line with its device ('cuda:N', '[rankN]:') to judge each apart",
                                  path, d.device));
  }
  // Kept for the charts only: a long log's steps are most of its memory.
  if (!flags.plot_path.empty() || !flags.html_path.empty()) r.steps = std::move(log->steps);
  if (flags.gpus.empty()) {
    r.devices = std::move(devices);
    return r;
  }
  std::vector<std::string> seen;
  for (auto& d : devices) {
    const std::string key = std::to_string(d.device);
    seen.push_back(key);
    if (std::find(flags.gpus.begin(), flags.gpus.end(), key) != flags.gpus.end()) r.devices.push_back(std::move(d));
  }
  if (r.devices.empty()) {
    if (no_device_matched != nullptr) *no_device_matched = true;
    return Status::InvalidArgument(fmt::format("{}: no device matches --gpu {}; the log has device(s) {}", path,
                                               fmt::join(flags.gpus, ", "), fmt::join(seen, ", ")));
  }
  return r;
}

}  // namespace vw::cli
