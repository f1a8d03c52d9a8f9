// `vramwatch watch` on a live host: the sampling loop. One thread owns NVML (a sample every
// --interval, process facts from /proc every --process-interval, Xid lines the kernel log gained
// since the previous process refresh) and feeds the pipeline (cli/watch_pipeline.h), which it
// publishes after each sample to the HTTP server (outputs/http_server.h); the server only renders
// the state last published. NVML that cannot be loaded is retried every 10 s, with an nvml_error
// finding meanwhile. What is fatal and what degrades: watch_command.cpp.
#pragma once

#include <atomic>
#include <string>

#include "cli/watch_flags.h"

namespace vw::cli {

// The host's boot id under `proc_root` (sys/kernel/random/boot_id), empty when it cannot be read.
std::string BootId(const std::string& proc_root);

// Runs until `stop` is set (SIGINT, SIGTERM) or for s.duration_s; `reopen` (SIGHUP) reopens the
// --alert-log file, and is cleared. Returns the exit code: 0, or 3 when the address, the kernel log
// file, --proc-root, --passwd, --db, --alert-log or --webhook cannot be used at start.
int RunLive(const WatchFlags& f, const WatchSettings& s, const std::atomic<bool>& stop, std::atomic<bool>& reopen);

}  // namespace vw::cli
