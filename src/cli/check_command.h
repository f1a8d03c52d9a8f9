// `vramwatch check`: one look at every GPU (optionally sampled over --window), every memory holder
// joined with /proc, the kernel log's Xid events, findings with severity and next steps; exit code
// of a monitoring plugin (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN). `demo` runs the same code on a
// bundled emulated scenario, so the options and the runner are shared here.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "detection/findings.h"

namespace vw::cli {

struct CheckOptions {
  bool json = false;
  std::string nvml_lib;  // --nvml-lib; empty: $VRAMWATCH_NVML_LIB, else libnvidia-ml.so.1
  std::string proc_root = "/proc";
  std::string passwd;             // --passwd; empty: getpwuid(), or <proc-root>/passwd for a fixture root
  std::string kube_logs;          // --kube-logs DIR (pod and container names); "none" to skip; empty: /var/log
  std::string kernel_log;         // --kernel-log FILE; "none" to skip; empty: /dev/kmsg then dmesg
  double xid_max_age_s = 86400;   // --xid-max-age: older Xids of the system log are ignored (hardware ones kept)
  double interval_s = 1;          // --interval
  double timeout_s = 2;           // --timeout: per NVML call
  double init_timeout_s = 60;     // --init-timeout: nvmlInit's deadline
  detection::CheckConfig config;  // --window, --grace, --orphan-threshold
  bool color = false;             // ANSI colours in text output
};

// Runs a check and prints it to `out`; returns the exit code. Errors that make the check
// impossible (no NVML, no GPU, unreadable --kernel-log) print a clear message (to stderr, and a
// JSON object with status "unknown" when json is set) and return 3.
int RunCheck(const CheckOptions& options, std::FILE* out);

// For a command line that CLI11 could not parse (unknown flag, missing value): whether it is
// `vramwatch check ... --json ...`, and the {"status":"unknown","error":message} object that such
// a caller still gets on stdout (returns 3). The message itself goes to stderr from CLI11.
bool ArgsAskForCheckJson(int argc, const char* const* argv);
int PrintCheckParseError(const std::string& message, std::FILE* out);

}  // namespace vw::cli
