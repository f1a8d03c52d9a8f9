// Writing generated traces as nvidia-smi CSV files and their labels (declared in trace_generator.h).
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>

#include "core/units.h"
#include "trace_generator.h"

namespace vw::evaluate {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

Result<File> OpenForWrite(const std::string& path) {
  File f(std::fopen(path.c_str(), "w"));
  if (!f) return FromErrno(errno, "open " + path + " for writing");
  return f;
}

Status Flush(File f, const std::string& path) {
  if (std::ferror(f.get()) != 0) return Status::IoError("write " + path + " failed");
  if (std::fclose(f.release()) != 0) return FromErrno(errno, "close " + path);
  return Status::Ok();
}

}  // namespace

std::string FormatNvidiaSmiTimestamp(double epoch_s) {
  const long long ms_total = std::llround(epoch_s * 1000.0);
  const std::time_t secs = static_cast<std::time_t>(ms_total / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}/{:02}/{:02} {:02}:{:02}:{:02}.{:03}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, ms_total % 1000);
}

Status WriteNvidiaSmiCsv(const Trace& trace, const std::string& path) {
  auto file = OpenForWrite(path);
  if (!file.ok()) return file.status();
  std::FILE* f = file->get();
  const long long total_mib = std::llround(trace.label.total_bytes / kMiB);
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "timestamp, index, memory.used [MiB], memory.total [MiB]\n");
  // The date and time of day change once a second at most: format them once per second.
  long long cached_second = -1;
  std::string second_text;
  for (size_t i = 0; i < trace.used_mib.size(); ++i) {
    const long long ms = std::llround((trace.label.start_epoch_s + trace.TimeOf(i)) * 1000.0);
    if (ms / 1000 != cached_second) {
      cached_second = ms / 1000;
      second_text = FormatNvidiaSmiTimestamp(static_cast<double>(cached_second));
      second_text.resize(second_text.size() - 4);  // drop ".000"
    }
    fmt::format_to(std::back_inserter(out), "{}.{:03}, 0, {} MiB, {} MiB\n", second_text, ms % 1000, trace.used_mib[i],
                   total_mib);
    if (out.size() > (1 << 20)) {
      std::fwrite(out.data(), 1, out.size(), f);
      out.clear();
    }
  }
  std::fwrite(out.data(), 1, out.size(), f);
  return Flush(std::move(*file), path);
}

std::string LoadCsvFields(const TraceLabel& l) {
  if (!l.HasServingLoad()) return ",,";
  return fmt::format("{:.0f},{:.1f},{:.0f}", l.load_cycle_mib, l.load_cycle_period_s, l.load_swing_mib);
}

Status WriteLabelsCsv(std::span<const TraceLabel> labels, std::span<const std::string> files, const std::string& path) {
  if (labels.size() != files.size()) return Status::Internal("labels and file names differ in count");
  auto file = OpenForWrite(path);
  if (!file.ok()) return file.status();
  std::FILE* f = file->get();
  fmt::print(f,
             "file,id,kind,shape,memory_total_mib,interval_s,duration_s,noise_mib,warmup_end_offset_s,"
             "leak_rate_bytes_per_second,"
             "leak_rate_mib_per_hour,leak_start,leak_start_offset_s,leak_chunk_mib,capped,load_cycle_mib,"
             "load_cycle_period_s,load_swing_mib\n");
  for (size_t i = 0; i < labels.size(); ++i) {
    const TraceLabel& l = labels[i];
    std::string start, offset;
    if (l.leak_start_s) {
      start = FormatNvidiaSmiTimestamp(l.start_epoch_s + *l.leak_start_s);
      offset = fmt::format("{:.3f}", *l.leak_start_s);
    }
    fmt::print(f, "{},{},{},{},{},{:.3f},{:.3f},{:.2f},{:.3f},{},{},{},{},{},{},{}\n", files[i], l.id,
               l.leak ? "leak" : "healthy", ShapeName(l.shape), std::llround(l.total_bytes / kMiB), l.interval_s,
               l.duration_s, l.noise_mib, l.warmup_end_s, l.leak ? fmt::format("{:.3f}", l.leak_rate_bps) : "",
               l.leak ? fmt::format("{:.3f}", l.leak_rate_bps * 3600.0 / kMiB) : "", start, offset,
               l.leak_chunk_mib > 0 ? fmt::format("{:g}", l.leak_chunk_mib) : "", l.capped, LoadCsvFields(l));
  }
  return Flush(std::move(*file), path);
}

}  // namespace vw::evaluate
