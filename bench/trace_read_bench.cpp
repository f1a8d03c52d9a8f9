// trace-read-bench: reads a trace file through OpenTrace() and reports throughput.
//
//   trace-read-bench FILE [--format NAME] [--interval SECONDS] [--columns a,b,c] [--lenient] [--summary]
//
// Prints records, seconds, records/s, MB/s (file bytes / wall time) and the peak resident set size.
// With --summary also prints, per GPU, the sample count, first/last time and first/last used MiB.
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/time.h"
#include "sources/trace/trace_reader.h"

namespace {

struct GpuSummary {
  size_t samples = 0;
  double first_t = 0, last_t = 0;
  std::optional<uint64_t> first_used, last_used, total;
};

std::string Mib(const std::optional<uint64_t>& v) {
  return v ? fmt::format("{}", *v / (1024 * 1024)) : std::string("-");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: trace-read-bench FILE [--format NAME] [--interval S] [--columns a,b] [--lenient] [--summary]\n");
    return 2;
  }
  vw::trace::TraceOptions opt;
  bool summary = false;
  std::string path = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--summary") {
      summary = true;
    } else if (a == "--lenient") {
      opt.lenient = true;
    } else if (a == "--format" && i + 1 < argc) {
      auto f = vw::trace::ParseTraceFormat(argv[++i]);
      if (!f.ok()) {
        std::fprintf(stderr, "%s\n", f.status().ToString().c_str());
        return 2;
      }
      opt.format = *f;
    } else if (a == "--interval" && i + 1 < argc) {
      opt.interval_s = std::atof(argv[++i]);
    } else if (a == "--columns" && i + 1 < argc) {
      std::string cols = argv[++i];
      size_t start = 0;
      while (start <= cols.size()) {
        size_t comma = cols.find(',', start);
        if (comma == std::string::npos) comma = cols.size();
        opt.columns.push_back(cols.substr(start, comma - start));
        start = comma + 1;
      }
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto reader = vw::trace::OpenTrace(path, opt);
  if (!reader.ok()) {
    std::fprintf(stderr, "%s\n", reader.status().ToString().c_str());
    return 1;
  }
  uint64_t records = 0;
  uint64_t checksum = 0;
  std::map<std::string, GpuSummary> gpus;
  vw::TraceRecord r;
  for (;;) {
    auto got = (*reader)->NextInto(&r);
    if (!got.ok()) {
      std::fprintf(stderr, "%s\n", got.status().ToString().c_str());
      return 1;
    }
    if (!*got) break;
    ++records;
    checksum += r.sample.used_bytes.value_or(0);
    if (summary) {
      GpuSummary& g = gpus[r.gpu.key];
      if (g.samples == 0) {
        g.first_t = r.sample.t;
        g.first_used = r.sample.used_bytes;
      }
      ++g.samples;
      g.last_t = r.sample.t;
      g.last_used = r.sample.used_bytes;
      if (r.sample.total_bytes) g.total = r.sample.total_bytes;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                     static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  const double mb = static_cast<double>((*reader)->bytes_read()) / 1e6;
  fmt::print(
      "format {}\nrecords {}\nseconds {:.3f}\ncpu_seconds {:.3f}\nrecords_per_s {:.0f}\nMB_per_s {:.1f}\n"
      "MB_per_cpu_s {:.1f}\npeak_rss_MiB {:.1f}\n",
      vw::trace::TraceFormatName((*reader)->format()), records, secs, cpu, records / secs, mb / secs, mb / cpu,
      ru.ru_maxrss / 1024.0);
  fmt::print("skipped {}\nchecksum {}\n", (*reader)->skipped_count(), checksum);
  for (const auto& s : (*reader)->skipped_examples()) fmt::print("skipped_line {} {}\n", s.line, s.reason);
  const bool zone = (*reader)->has_zone();
  for (const auto& [key, g] : gpus) {
    fmt::print("gpu {} samples {} first {} last {} first_used_MiB {} last_used_MiB {} total_MiB {}\n", key, g.samples,
               vw::FormatIso8601(g.first_t, zone), vw::FormatIso8601(g.last_t, zone), Mib(g.first_used),
               Mib(g.last_used), Mib(g.total));
  }
  return 0;
}
