// Harness for end-to-end tests: a scratch directory with a scenario, a procfs fixture and a kernel
// log, and a way to run the built `vramwatch` binary against them with the NVML emulator.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sources/procfs/proc_fixture.h"

namespace vw::e2e {

struct RunResult {
  int exit_code = -1;
  std::string out, err;
  double seconds = 0;
  nlohmann::json json;  // parsed stdout when it is JSON, else null
};

class Scratch {
 public:
  Scratch();
  ~Scratch();
  const std::string& dir() const { return dir_; }
  std::string Write(const std::string& name, const std::string& text);  // returns the path
  std::string Proc(const std::vector<procfs::FakeProcess>& ps, const procfs::FixtureOptions& o = {});

 private:
  std::string dir_;
};

// "emulator/libnvidia-ml.so.1" or "emulator/old-driver/libnvidia-ml.so.1" under the build tree.
std::string EmulatorLib(const std::string& variant = "");

// Runs `vramwatch ARGS...` with extra environment variables; times out after `timeout_s`.
RunResult RunVramwatch(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                       double timeout_s = 60);

// Runs `vramwatch check --json --nvml-lib <emulator> --proc-root <proc> --kernel-log <klog>` + extra.
RunResult Check(const std::string& scenario, const std::string& proc, const std::string& klog,
                const std::vector<std::string>& extra = {}, const std::map<std::string, std::string>& env = {},
                const std::string& variant = "");

// Findings of one kind.
std::vector<nlohmann::json> FindingsOf(const nlohmann::json& report, const std::string& kind);

}  // namespace vw::e2e
