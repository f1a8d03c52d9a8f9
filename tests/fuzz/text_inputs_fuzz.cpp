// Fuzz target: any bytes as the text of the other inputs vramwatch parses: kernel log lines (Xid
// events), /proc files (stat, status, cmdline, cgroup, sched, uptime), /etc/passwd and a Prometheus
// query answer. The first byte picks the parser (its value modulo 10); the rest is the text. An
// error Result is an answer; a crash, a sanitizer report or a hang is a bug.
#include <cstdint>
#include <string_view>

#include "sources/kernel/xid_parser.h"
#include "sources/procfs/proc_parsers.h"
#include "sources/prometheus/prometheus_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 10) {
    case 0:  // a kernel log, line by line
      for (size_t start = 0; start <= text.size();) {
        const size_t end = std::min(text.find('\n', start), text.size());
        (void)vw::kernel::ParseXidLine(text.substr(start, end - start));
        start = end + 1;
      }
      break;
    case 1: (void)vw::procfs::ParseStat(text, "/proc/1/stat"); break;
    case 2: (void)vw::procfs::ParseStatus(text, "/proc/1/status"); break;
    case 3: (void)vw::procfs::ParseCmdline(text); break;
    case 4: (void)vw::procfs::ParseCgroup(text); break;
    case 5: (void)vw::procfs::UserFromPasswd(text, data[0]); break;
    case 6: (void)vw::procfs::PidFromSched(text); break;
    case 7: (void)vw::procfs::ParseUptime(text); break;
    case 8:
      (void)vw::prometheus::ParseQueryResponse(text, "vramwatch_gpu_memory_used_bytes",
                                               vw::prometheus::ValueUnit::kAuto);
      break;
    default: (void)vw::kernel::NormalizePciBusId(text); break;
  }
  return 0;
}
