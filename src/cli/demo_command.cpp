// `vramwatch demo`: shows what vramwatch finds, on a bundled emulated host, without a GPU.
//
// The demo is a list of steps (kSteps below); each prepares what it needs in a scratch directory
// and runs a real subcommand on it. The "check" step writes the bundled NVML emulator scenario and
// a procfs fixture tree (an orphaned context, a zombie holder whose launcher has not reaped it and
// a healthy training process),
// points the real NVML loader at the emulator library built next to the executable, and runs
// `check` over a short window. To add a step, append to kSteps.
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/analyze_command.h"
#include "cli/check_command.h"
#include "cli/commands.h"
#include "core/exit_codes.h"
#include "outputs/json_text.h"
#include "sources/nvml/nvml_source.h"
#include "sources/procfs/proc_fixture.h"

namespace vw::cli {
namespace {

namespace fs = std::filesystem;

// Two H100s. GPU 0: a healthy trainer (in a Docker container) and a zombie that NVML still
// charges 8 GiB to. GPU 1: 12 GiB that no process owns (the trainer there was SIGKILLed after an
// Xid 31 page fault; nothing has the device open any more).
constexpr const char* kScenario = R"(# vramwatch demo scenario (NVML emulator)
driver_version: "550.54.15"
cuda_driver_version: 12040
gpus:
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f60"
    pci_bus_id: "00000000:3B:00.0"
    minor: 0
    memory_total_mib: 81559
    memory_reserved_mib: 479
    utilization_gpu: 93
    processes:
      - {pid: 41877, type: compute, name: python3, used_mib: 30720, sm_util: 95}
      - {pid: 41990, type: compute, name: python3, used_mib: 8192, sm_util: 0}
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-9e0f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
    pci_bus_id: "00000000:5E:00.0"
    minor: 1
    memory_total_mib: 81559
    memory_reserved_mib: 479
    utilization_gpu: 0
    unattributed_mib: 12288
)";

constexpr const char* kKernelLog =
    "[ 8121.004211] NVRM: GPU at PCI:0000:5e:00: GPU-9e0f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b\n"
    "[ 8121.004220] NVRM: Xid (PCI:0000:5e:00): 31, pid=40112, name=python3, Ch 00000010, intr 00000000. MMU Fault: "
    "ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f3a_12000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ\n";

std::vector<procfs::FakeProcess> DemoProcesses() {
  procfs::FakeProcess trainer;
  trainer.pid = 41877;
  trainer.comm = "python3";
  trainer.state = 'R';
  trainer.uid = 1000;
  trainer.argv = {"python3", "train.py", "--config", "llama-7b.yaml"};
  trainer.cgroup = "0::/system.slice/docker-8d3f1a2b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7.scope\n";
  trainer.nspid = {41877, 12};
  trainer.fd_targets = {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidia1"};  // CUDA opens every GPU
  trainer.utime_ticks = 912345;
  trainer.starttime_ticks = 700000;
  // The zombie's parent, a launcher that has not reaped it: the usual case, whose step is "end
  // its parent" (a zombie of PID 1 is the rare one, reaped once its threads leave the driver).
  procfs::FakeProcess launcher;
  launcher.pid = 41980;
  launcher.comm = "python3";
  launcher.state = 'S';
  launcher.uid = 1001;
  launcher.argv = {"python3", "launcher.py", "--workers", "4"};
  launcher.cgroup = "0::/system.slice/slurmstepd.scope/job_5512/step_0/user/task_0\n";
  launcher.starttime_ticks = 705000;
  procfs::FakeProcess zombie;
  zombie.pid = 41990;
  zombie.comm = "python3";
  zombie.state = 'Z';
  zombie.uid = 1001;
  zombie.cgroup = launcher.cgroup;
  zombie.starttime_ticks = 710000;
  zombie.ppid = launcher.pid;
  procfs::FakeProcess shell;  // holds nothing on the GPU: must not appear
  shell.pid = 40001;
  shell.comm = "bash";
  shell.argv = {"-bash"};
  return {trainer, launcher, zombie, shell};
}

struct DemoContext {
  fs::path dir;          // scratch directory
  std::string nvml_lib;  // emulator library
  bool json = false;
  bool keep = false;        // --keep: `dir` is left in place
  std::FILE* out = stdout;  // where the current step prints (a capture file in --json mode)
  std::vector<std::string> summary;
};

struct DemoStep {
  const char* name;
  const char* what;
  std::function<int(DemoContext&)> run;  // returns a kExit* code; kExitUnknown stops the demo
};

Status WriteFile(const fs::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
  if (!out) return Status::IoError("cannot write " + p.string());
  return Status::Ok();
}

std::string ExecutableDir();

int CheckStep(DemoContext& ctx) {
  fs::path scenario = ctx.dir / "scenario.yaml";
  fs::path proc = ctx.dir / "proc";
  fs::path klog = ctx.dir / "kern.log";
  procfs::FixtureOptions fo;
  fo.users = {{0, "root"}, {1000, "alice"}, {1001, "bob"}};
  for (Status s : {WriteFile(scenario, kScenario), WriteFile(klog, kKernelLog),
                   procfs::WriteProcFixture(proc.string(), DemoProcesses(), fo)}) {
    if (!s.ok()) {
      std::fprintf(stderr, "vramwatch demo: %s\n", s.message().c_str());
      return kExitUnknown;
    }
  }
  ::setenv("VRAMWATCH_EMULATOR_SCENARIO", scenario.c_str(), 1);
  CheckOptions o;
  o.json = ctx.json;
  o.nvml_lib = ctx.nvml_lib;
  o.proc_root = proc.string();
  o.kernel_log = klog.string();
  o.config.window_s = 2;
  o.interval_s = 1;
  o.config.grace_s = 1;
  o.color = !ctx.json && ::isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
  if (!ctx.json) {
    // The command as it runs, with the emulator's variables: it works again on the files that
    // --keep keeps (without --keep they are deleted when the demo ends).
    std::printf("$ %s=%s %s=%s %s check --window 2s --grace 1s --proc-root %s --kernel-log %s\n", nvml::kLibraryEnvVar,
                ctx.nvml_lib.c_str(), "VRAMWATCH_EMULATOR_SCENARIO", scenario.c_str(),
                (fs::path(ExecutableDir()) / "vramwatch").c_str(), proc.c_str(), klog.c_str());
    if (!ctx.keep) {
      std::printf("  (%s is deleted when the demo ends: `vramwatch demo --keep` keeps it, to run this again)\n",
                  ctx.dir.c_str());
    }
  }
  int code = RunCheck(o, ctx.out);
  ctx.summary.push_back(
      fmt::format("check exited {} ({}): expected 2 for this scenario (orphaned memory, zombie holder)", code,
                  code == 0   ? "OK"
                  : code == 1 ? "WARNING"
                  : code == 2 ? "CRITICAL"
                              : "UNKNOWN"));
  return code;
}

std::string ExamplesDir();

// `analyze` on one bundled 6-hour trace; `expect` is the verdict the demo promises.
int AnalyzeStep(DemoContext& ctx, const char* file, const char* expect, int expect_code) {
  AnalyzeFlags f;
  std::string dir = ExamplesDir();
  if (dir.empty()) {
    std::fprintf(stderr, "vramwatch demo: the bundled example traces were not found\n");
    return kExitUnknown;
  }
  f.files = {dir + "/" + file};
  f.json = ctx.json;
  f.progress = false;
  if (!ctx.json) std::printf("$ vramwatch analyze %s\n", f.files[0].c_str());
  std::fflush(stdout);
  int code = RunAnalyze(f, ctx.out);
  ctx.summary.push_back(fmt::format("analyze {} exited {}: expected {} ({})", file, code, expect_code, expect));
  return code;
}

const std::vector<DemoStep>& Steps() {
  static const std::vector<DemoStep> kSteps = {
      {"analyze", "a recorded 6-hour training run whose memory floor creeps up 300 MiB/h under eval spikes",
       [](DemoContext& c) { return AnalyzeStep(c, "training-leak.csv", "leak", 1); }},
      {"analyze", "the same run without the leak: warm-up, allocator steps that thin out, eval spikes",
       [](DemoContext& c) { return AnalyzeStep(c, "training-healthy.csv", "no leak", 0); }},
      {"check", "one look at two emulated GPUs: a healthy trainer, a zombie holder, an orphaned context", CheckStep},
  };
  return kSteps;
}

std::string ExecutableDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

// The bundled example traces: <prefix>/share/vramwatch/examples once installed, else the source
// tree's examples/ (a build tree).
std::string ExamplesDir() {
  fs::path dir = ExecutableDir();
  for (fs::path candidate :
       {dir.parent_path() / "share" / "vramwatch" / "examples", fs::path(VRAMWATCH_EXAMPLES_DIR)}) {
    if (fs::exists(candidate / "training-leak.csv")) return candidate.string();
  }
  return "";
}

// The emulator library: built into <build>/emulator next to the executable, or installed into
// <prefix>/lib/vramwatch/emulator.
std::string FindEmulator() {
  fs::path dir = ExecutableDir();
  for (fs::path candidate : {dir / "emulator" / "libnvidia-ml.so.1",
                             dir.parent_path() / "lib" / "vramwatch" / "emulator" / "libnvidia-ml.so.1"}) {
    if (fs::exists(candidate)) return candidate.string();
  }
  return "";
}

}  // namespace

CommandRunner AddDemoCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("demo", "Run vramwatch on a bundled emulated GPU host (no GPU needed)");
  struct Flags {
    bool json = false;
    bool keep = false;
    std::string nvml_lib;
  };
  auto flags = std::make_shared<Flags>();
  cmd->add_flag("--json", flags->json, "Print each step's JSON instead of text");
  cmd->add_flag("--keep", flags->keep, "Keep the scratch directory with the scenario and fixtures");
  cmd->add_option("--nvml-lib", flags->nvml_lib, "Emulator library to use (default: found next to the executable)");
  return [flags] {
    DemoContext ctx;
    ctx.json = flags->json;
    ctx.keep = flags->keep;
    ctx.nvml_lib = flags->nvml_lib.empty() ? FindEmulator() : flags->nvml_lib;
    if (ctx.nvml_lib.empty()) {
      std::fprintf(stderr,
                   "vramwatch demo: the NVML emulator library was not found next to the executable (%s/emulator/"
                   "libnvidia-ml.so.1); build it (target vw_nvml_emulator) or pass --nvml-lib\n",
                   ExecutableDir().c_str());
      return kExitUnknown;
    }
    std::string tmpl = (fs::temp_directory_path() / "vramwatch-demo-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      std::fprintf(stderr, "vramwatch demo: cannot create a scratch directory under %s\n",
                   fs::temp_directory_path().c_str());
      return kExitUnknown;
    }
    ctx.dir = tmpl;
    int status = kExitOk;
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& step : Steps()) {
      if (!ctx.json) std::printf("== demo step: %s — %s\n\n", step.name, step.what);
      // In --json mode each step's own JSON is captured and the demo prints one object:
      // {"schema":"vramwatch.demo/1","steps":[{"step","what","exit_code","report"}...]}.
      std::FILE* capture = ctx.json ? std::tmpfile() : nullptr;
      if (ctx.json && capture == nullptr) {
        std::fprintf(stderr, "vramwatch demo: cannot create a temporary file\n");
        return kExitUnknown;
      }
      ctx.out = ctx.json ? capture : stdout;
      int code = step.run(ctx);
      if (!ctx.json) std::printf("\n");
      if (capture != nullptr) {
        std::string text;
        std::rewind(capture);
        char buf[4096];
        for (size_t n; (n = std::fread(buf, 1, sizeof buf, capture)) > 0;) text.append(buf, n);
        std::fclose(capture);
        nlohmann::json report = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
        steps.push_back({{"step", step.name},
                         {"what", step.what},
                         {"exit_code", code},
                         {"report", report.is_discarded() ? nlohmann::json(nullptr) : report}});
      }
      if (code == kExitUnknown) {
        status = kExitUnknown;
        break;
      }
    }
    if (ctx.json) {
      nlohmann::json doc = {{"schema", "vramwatch.demo/1"}, {"steps", steps}};
      if (flags->keep) doc["kept_in"] = ctx.dir;  // the scratch directory, left in place
      std::printf("%s\n", outputs::JsonText(doc, 2).c_str());
      if (flags->keep) std::fprintf(stderr, "vramwatch demo: scenario and fixtures kept in %s\n", ctx.dir.c_str());
    } else {
      for (const auto& s : ctx.summary) std::printf("demo: %s\n", s.c_str());
      if (flags->keep) {
        std::printf("demo: scenario and fixtures kept in %s\n", ctx.dir.c_str());
        std::printf("demo: the check step's command above runs again on them\n");
      }
    }
    if (!flags->keep) {
      std::error_code ec;
      fs::remove_all(ctx.dir, ec);
    }
    return status;
  };
}

}  // namespace vw::cli
