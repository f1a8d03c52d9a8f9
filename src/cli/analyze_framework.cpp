#include "cli/analyze_framework.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "core/file_io.h"
#include "detection/framework_split.h"
#include "sources/trace/framework_log.h"

namespace vw::cli {
namespace {

constexpr size_t kHeadBytes = 64 * 1024;
constexpr size_t kMaxLogBytes = size_t{1} << 30;  // 1 GiB of log text

Result<std::string> ReadAll(const std::string& path) {
  if (path != "-") return ReadWholeFile(path, kMaxLogBytes);
  std::string text;
  char buf[65536];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) {
    text.append(buf, n);
    if (text.size() > kMaxLogBytes) return Status::InvalidArgument("-: standard input is larger than 1 GiB");
  }
  return text;
}

}  // namespace

bool IsFrameworkLogFile(const std::string& path, const std::string& format) {
  if (format == "torch") return true;
  if (format != "auto" || path == "-") return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;  // the trace reader names the file and why it cannot be read
  std::string head(kHeadBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const bool complete = in.eof();
  return trace::IsFrameworkLogHead(head, complete);
}

Result<outputs::FrameworkReport> AnalyzeFrameworkLog(const std::string& path, const AnalyzeFlags& flags) {
  if (!flags.since.empty() || !flags.until.empty()) {
    return Status::InvalidArgument(fmt::format(
        "{}: --since and --until select times; a PyTorch memory log has steps, not times (cut the log instead)", path));
  }
  auto text = ReadAll(path);
  if (!text.ok()) return text.status();
  auto log = trace::ParseFrameworkLog(*text, path, flags.lenient);
  if (!log.ok()) return log.status();
  outputs::FrameworkReport r;
  r.source = path;
  r.lines = log->lines;
  r.not_read = log->skipped;
  r.not_read_examples = log->skipped_examples;
  std::vector<detection::FrameworkSplit> devices = detection::SplitFrameworkLog(log->steps);
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
    return Status::InvalidArgument(fmt::format("{}: no device matches --gpu {}; the log has device(s) {}", path,
                                               fmt::join(flags.gpus, ", "), fmt::join(seen, ", ")));
  }
  return r;
}

}  // namespace vw::cli
