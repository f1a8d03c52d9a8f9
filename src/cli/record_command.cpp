// `vramwatch record`: samples every GPU through NVML and writes a vramwatch recording (JSON lines,
// sources/trace/recording_writer.h) that `analyze` and `watch --replay` read. Each line is flushed,
// so a killed recorder leaves a readable file. Runs until --duration passes or SIGINT/SIGTERM; a
// write that fails (disk full, `ulimit -f` reached: SIGXFSZ is ignored) ends it with exit 3.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>

#include "cli/commands.h"
#include "cli/host_name.h"
#include "cli/sample_schedule.h"
#include "core/exit_codes.h"
#include "core/time.h"
#include "core/units.h"
#include "detection/findings.h"
#include "sources/nvml/nvml_source.h"
#include "sources/trace/recording_writer.h"

namespace vw::cli {
namespace {

std::atomic<bool> g_record_stop{false};
void OnRecordSignal(int) {
  g_record_stop = true;
}

double WallNow() {
  return SteadyWallNow();  // the sample clock: a step of the system clock does not move it
}

TraceRecord RecordOf(const GpuSnapshot& g, double t, bool with_processes) {
  TraceRecord r;
  r.gpu.index = static_cast<int>(g.index);
  r.gpu.key = std::to_string(g.index);
  r.gpu.uuid = g.uuid;
  r.gpu.name = g.name;
  r.gpu.pci_bus_id = g.pci_bus_id;
  r.sample.t = t;
  r.sample.used_bytes = g.memory_used_bytes;
  r.sample.total_bytes = g.memory_total_bytes;
  r.sample.free_bytes = g.memory_free_bytes;
  r.sample.reserved_bytes = g.memory_reserved_bytes;
  r.sample.gpu_util_ratio = g.gpu_util_ratio;
  // A list that could not be read completely is left out (missing), never written as empty.
  if (with_processes && detection::ProcessListComplete(g)) {
    std::vector<ProcessMemory> ps;
    for (const ProcessSnapshot& p : g.processes) {
      ProcessMemory m;
      m.pid = p.pid;
      m.used_bytes = p.used_bytes;
      m.sm_util_ratio = p.sm_util_ratio;
      // As `check` reports it: the command line when one was read, else NVML's process name; an
      // empty command is written as null (missing), never as "".
      m.command = CommandOf(p);
      m.type = ProcessTypeText(p);  // as `check` spells it ("C+M"); empty (written null) when unknown
      m.gpu_instance_id = p.gpu_instance_id;
      if (const MigDeviceSnapshot* mig = MigInstanceOf(g.mig_devices, p)) {
        m.instance_used_bytes = mig->memory_used_bytes;
        m.instance_total_bytes = mig->memory_total_bytes;
      }
      ps.push_back(std::move(m));
    }
    r.sample.processes = std::move(ps);
  }
  return r;
}

}  // namespace

CommandRunner AddRecordCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("record",
                                 "Write GPU memory samples (and process lists) to a recording that `analyze` and "
                                 "`watch --replay` read.");
  struct Flags {
    std::string output = "-", interval = "1s", process_interval = "5s", duration, timeout = "1s", init_timeout = "60s",
                nvml_lib;
    std::optional<std::string> hostname;  // --hostname, when given (cli/host_name.h)
  };
  auto f = std::make_shared<Flags>();
  cmd->add_option("-o,--output", f->output, "File to write ('-' for standard output)")->capture_default_str();
  cmd->add_option("--interval", f->interval, "Sampling interval (at least 100ms)")->capture_default_str();
  cmd->add_option("--process-interval", f->process_interval, "How often process lists are written")
      ->capture_default_str();
  cmd->add_option("--duration", f->duration, "Stop after this long (default: until SIGINT/SIGTERM)");
  cmd->add_option("--timeout", f->timeout, "Deadline of each NVML call")->capture_default_str();
  cmd->add_option("--init-timeout", f->init_timeout,
                  "Deadline of nvmlInit, which takes seconds (tens on large hosts) when persistence mode is off")
      ->capture_default_str();
  cmd->add_option("--nvml-lib", f->nvml_lib,
                  "NVML library to load (default: $VRAMWATCH_NVML_LIB, else libnvidia-ml.so.1)");
  cmd->add_option("--hostname", f->hostname,
                  "Host name written in the header (default: $NODE_NAME when set, else the system host name)");
  return [f]() -> int {
    std::signal(SIGINT, OnRecordSignal);
    std::signal(SIGTERM, OnRecordSignal);
    // A file size limit (ulimit -f) reached by the recording: the write fails (EFBIG) and record
    // exits 3 saying so, as for a full disk, instead of the signal killing it without a word.
    std::signal(SIGXFSZ, SIG_IGN);
    double interval = 0, process_interval = 0, timeout = 0, init_timeout = 0;
    std::optional<double> duration;
    for (auto [flag, text, out] :
         {std::tuple<const char*, std::string*, double*>{"--interval", &f->interval, &interval},
          {"--process-interval", &f->process_interval, &process_interval},
          {"--timeout", &f->timeout, &timeout},
          {"--init-timeout", &f->init_timeout, &init_timeout}}) {
      auto v = ParseDuration(*text);
      if (!v.ok()) {
        std::fprintf(stderr, "vramwatch record: %s: %s\n", flag, v.status().message().c_str());
        return kExitUnknown;
      }
      *out = *v;
    }
    if (!f->duration.empty()) {
      auto v = ParseDuration(f->duration);
      if (!v.ok()) {
        std::fprintf(stderr, "vramwatch record: --duration: %s\n", v.status().message().c_str());
        return kExitUnknown;
      }
      if (*v <= 0) {
        std::fprintf(stderr,
                     "vramwatch record: --duration: must be above 0 (leave it out to record until SIGINT/SIGTERM)\n");
        return kExitUnknown;
      }
      duration = *v;
    }
    if (interval < 0.1) {
      std::fprintf(stderr, "vramwatch record: --interval must be at least 100ms\n");
      return kExitUnknown;
    }
    if (timeout < 0.001) {  // the deadline is kept in whole milliseconds
      std::fprintf(stderr, "vramwatch record: --timeout must be greater than 0 (at least 1ms)\n");
      return kExitUnknown;
    }
    if (init_timeout < 0.001) {
      std::fprintf(stderr, "vramwatch record: --init-timeout must be at least 1ms\n");
      return kExitUnknown;
    }
    // Every flag is checked before NVML is opened: a bad value fails fast, whatever the library does.
    auto host = ResolveHostname(f->hostname);
    if (!host.ok()) {
      std::fprintf(stderr, "vramwatch record: %s\n", host.status().message().c_str());
      return kExitUnknown;
    }
    nvml::SourceOptions so;
    so.query_process_names = true;  // record reads no procfs: NVML's name is the process's command
    so.library_path = nvml::ResolveLibraryPath(f->nvml_lib);
    so.call_deadline = std::chrono::milliseconds(static_cast<int64_t>(timeout * 1000));
    so.init_deadline = std::chrono::milliseconds(static_cast<int64_t>(init_timeout * 1000));
    auto src = nvml::NvmlSource::Open(so);
    if (!src.ok()) {
      std::fprintf(stderr, "vramwatch record: %s\n", nvml::CannotUseNvmlMessage(src.status()).c_str());
      return kExitUnknown;
    }
    if ((*src)->gpu_count() == 0) {
      std::fprintf(stderr, "vramwatch record: %s\n", nvml::NoGpuMessage((*src)->library_path()).c_str());
      return kExitUnknown;
    }
    trace::RecordingHeader header;
    header.started = WallNow();
    header.host = *host;
    header.source = "nvml";
    header.interval_s = interval;
    auto writer = trace::RecordingWriter::Create(f->output, header);
    if (!writer.ok()) {
      std::fprintf(stderr, "vramwatch record: %s\n", writer.status().message().c_str());
      return kExitUnknown;
    }
    // Samples tick every --interval on the steady clock, and --duration ends the run at its
    // deadline, not at the first tick after it (cli/sample_schedule.h, as `watch` does).
    auto tick = std::chrono::steady_clock::now();
    const auto deadline = DeadlineOf(tick, duration);
    double last_proc = -1e300;
    std::map<unsigned, bool> answered;  // GPU index -> answering at its last sample
    double step_said = 0;               // the system clock's step last said (cli/sample_schedule.h)
    while (!g_record_stop && !(deadline && std::chrono::steady_clock::now() >= *deadline)) {
      const double now = WallNow();
      if (const std::string note = ClockStepNote(SystemClockStep(), &step_said, "the recording"); !note.empty()) {
        std::fprintf(stderr, "vramwatch record: %s\n", note.c_str());
      }
      HostSnapshot snap = (*src)->TakeSnapshot();
      const bool with_processes = ProcessListDue(now, last_proc, process_interval, interval);
      if (with_processes) last_proc = now;
      for (const GpuSnapshot& g : snap.gpus) {
        // A GPU that stops answering is said once on stderr; its lines carry what was read (the
        // rest null, missing), so the file shows the gap.
        const bool answering = g.responsive && !g.lost;
        auto was = answered.emplace(g.index, true).first;
        if (answering != was->second) {
          if (answering) {
            std::fprintf(stderr, "vramwatch record: GPU %u answers again\n", g.index);
          } else {
            std::fprintf(stderr, "vramwatch record: GPU %u %s (%s); its values are written as missing\n", g.index,
                         g.lost ? "is lost" : "does not answer", g.errors.empty() ? "" : g.errors.front().c_str());
          }
          was->second = answering;
        }
        Status s = (*writer)->Write(RecordOf(g, now, with_processes));
        if (!s.ok()) {
          std::fprintf(stderr, "vramwatch record: %s\n", s.message().c_str());
          return kExitUnknown;
        }
      }
      tick = NextTick(tick, interval, std::chrono::steady_clock::now());
      SleepUntilTick(tick, deadline, g_record_stop);
    }
    Status closed = (*writer)->Close();
    if (!closed.ok()) {
      std::fprintf(stderr, "vramwatch record: %s\n", closed.message().c_str());
      return kExitUnknown;
    }
    return 0;
  };
}

}  // namespace vw::cli
