// Format detection: looks at the first lines and decides from the first one that only one format
// writes. Lines every format may carry (blank, `date` output, `==== date ====`, `----`) are passed
// over; `#` comment lines that are not dmon/pmon headers too.
#include <fmt/format.h>

#include "sources/trace/csv_fields.h"
#include "sources/trace/framework_log.h"
#include "sources/trace/trace_formats.h"
#include "sources/trace/trace_values.h"

namespace vw::trace {
namespace {

constexpr size_t kMaxLinesLooked = 400;

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

// "# gpu ...", "#Date Time gpu ...", "#Time gpu ...": a dmon/pmon header; sets *pmon when it has a pid column.
bool IsMonitorHeader(std::string_view t, bool* pmon) {
  if (t.empty() || t.front() != '#') return false;
  std::string_view rest = Trim(t.substr(1));
  size_t i = 0;
  bool saw_gpu = false;
  int words = 0;
  while (i < rest.size() && words < 4) {
    while (i < rest.size() && rest[i] == ' ') ++i;
    size_t j = i;
    while (j < rest.size() && rest[j] != ' ') ++j;
    std::string_view w = rest.substr(i, j - i);
    i = j;
    if (w.empty()) break;
    ++words;
    if (w == "gpu") {
      saw_gpu = true;
      break;
    }
    if (w != "Date" && w != "Time") return false;
  }
  if (!saw_gpu) return false;
  *pmon = rest.find(" pid ") != std::string_view::npos || rest.find(" pid\t") != std::string_view::npos;
  return true;
}

bool IsBareValue(std::string_view t) {
  std::optional<uint64_t> v;
  return !t.empty() && t.front() >= '0' && t.front() <= '9' &&
         ParseMemoryValue(t, MemUnit::kMiB, &v) == ValueError::kOk;
}

// A compressed or archive format: its magic number, its name and the command that reads it.
struct Compression {
  std::string_view magic;
  const char* name;
  const char* how;  // FILE stands for the file
};

// The format whose magic number `head` starts with, or null.
const Compression* CompressionOf(std::string_view head) {
  static constexpr Compression kKnown[] = {
      {std::string_view("\x1f\x8b", 2), "gzip", "zcat FILE | vramwatch analyze -"},
      {std::string_view("BZh", 3), "bzip2", "bzcat FILE | vramwatch analyze -"},
      {std::string_view("\xfd"
                        "7zXZ\0",
                        6),
       "xz", "xzcat FILE | vramwatch analyze -"},
      {std::string_view("\x28\xb5\x2f\xfd", 4), "zstd", "zstdcat FILE | vramwatch analyze -"},
      {std::string_view("PK\x03\x04", 4), "zip", "unzip -p FILE | vramwatch analyze -"},
  };
  for (const Compression& c : kKnown) {
    // "BZh" is followed by the block size, 1 to 9: a CSV header may start "BZh," too.
    if (StartsWith(head, c.magic) && (c.magic != "BZh" || (head.size() > 3 && head[3] >= '1' && head[3] <= '9'))) {
      return &c;
    }
  }
  return nullptr;
}

// Binary data: a NUL byte, or more than one byte in 20 a control character no text holds (tab, the
// line ends, form feed and the escape of terminal colours are text), in the first 4 KiB.
bool LooksBinary(std::string_view head) {
  head = head.substr(0, 4096);
  size_t control = 0;
  for (const char ch : head) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == 0) return true;
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1b) ++control;
  }
  return control * 20 > head.size();
}

}  // namespace

Result<TraceFormat> DetectTraceFormat(std::string_view head, bool complete, const std::string& display) {
  if (const Compression* c = CompressionOf(head)) {
    std::string command = c->how;
    command.replace(command.find("FILE"), 4, display);
    // The same reader serves analyze and watch --replay: both read standard input.
    return Status::ParseError(
        fmt::format("{}: expected text, got a {}-compressed file: decompress it first ({}, or watch --replay -)",
                    display, c->name, command));
  }
  if (LooksBinary(head)) {
    return Status::ParseError(fmt::format(
        "{}: expected text (an nvidia-smi capture, a recording or a training log), got binary data", display));
  }
  const size_t head_bytes = head.size();
  size_t looked = 0;
  bool any_text = false;
  bool cut = false;  // the line judged last goes on past the head: it is judged by its start
  std::vector<std::string_view> fields;
  while (!head.empty() && looked < kMaxLinesLooked) {
    size_t nl = head.find('\n');
    if (nl == std::string_view::npos && !complete) {
      if (any_text) break;  // a later line cut: the lines before it were not enough
      cut = true;           // a first line longer than the head (a padded header, no line ends)
    }
    std::string_view line = head.substr(0, nl);
    head = nl == std::string_view::npos ? std::string_view() : head.substr(nl + 1);
    ++looked;
    std::string_view t = Trim(line);
    if (t.empty()) continue;
    any_text = true;
    if (t.find('\r') != std::string_view::npos) {
      return Status::ParseError(fmt::format(
          "{}:{}: expected lines ending in LF or CRLF, got lines ending in a bare CR (convert the file with "
          "`tr '\\r' '\\n'`)",
          display, looked));
    }
    bool pmon = false;
    if (t.front() == '{') return TraceFormat::kRecording;
    if (IsMonitorHeader(t, &pmon)) return pmon ? TraceFormat::kPmon : TraceFormat::kDmon;
    if (t.front() == '#') continue;  // a comment
    if (StartsWith(t, "+----") || StartsWith(t, "| NVIDIA-SMI") || StartsWith(t, "|=====")) {
      return TraceFormat::kSmiTable;
    }
    if (IsSeparatorLine(t)) continue;
    if (StartsWith(t, "Every ") && t.find("nvidia-smi") != std::string_view::npos) continue;  // `watch` header
    Timestamp ts;
    if (ParseDateLine(t, &ts)) continue;
    SplitCsv(t, &fields);
    if (IsCsvHeader(fields)) return TraceFormat::kQueryCsv;
    // A training log's memory line whose numbers have thousands separators ("allocated 1,000 MB")
    // splits on its commas like a --query-gpu CSV without a header: it is no trace.
    if (fields.size() >= 2 && !LooksLikeFrameworkLog(t)) return TraceFormat::kQueryCsv;  // noheader: needs --columns
    if (IsBareValue(t)) return TraceFormat::kValues;
    return Status::ParseError(fmt::format(
        "{}:{}: cannot tell the trace format from '{}'{}; expected an nvidia-smi --query-gpu CSV, one value per "
        "line, dmon/pmon output, nvidia-smi tables, a vramwatch recording or a training log that prints PyTorch's "
        "memory_allocated()/memory_reserved() (or pass --format; a training log on standard input needs --format "
        "torch)",
        display, looked, Shown(t),
        cut ? fmt::format(" (the start of a line longer than the {} bytes looked at)", head_bytes) : ""));
  }
  if (cut && !any_text) {
    return Status::ParseError(
        fmt::format("{}:{}: line {} is blank for the bytes looked at ({} from the start of the file), and goes on "
                    "past them; pass --format",
                    display, looked, looked, head_bytes));
  }
  if (!any_text) return Status::ParseError(fmt::format("{}: the trace is empty (no samples)", display));
  return Status::ParseError(fmt::format(
      "{}: cannot tell the trace format from its first {} lines (only dates, separators or comments); pass --format",
      display, looked));
}

}  // namespace vw::trace
