// `vramwatch check` end to end: NVML errors, hangs, lost GPUs and bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "e2e_harness.h"

namespace vw::e2e {
namespace {

using nlohmann::json;

std::string TwoGpus(const std::string& gpu0_extra, const std::string& top_extra = "") {
  return R"(driver_version: "550.54.15"
)" + top_extra +
         R"(gpus:
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-aaaaaaaa-0000-0000-0000-000000000000"
    pci_bus_id: "00000000:3B:00.0"
    minor: 0
    memory_total_mib: 81559
    memory_reserved_mib: 479
    processes:
      - {pid: 6100, used_mib: 1024, sm_util: 50}
)" + gpu0_extra +
         R"(  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-bbbbbbbb-0000-0000-0000-000000000000"
    pci_bus_id: "00000000:5E:00.0"
    minor: 1
    memory_total_mib: 81559
    memory_reserved_mib: 479
    processes:
      - {pid: 6200, used_mib: 2048, sm_util: 50}
)";
}

std::vector<procfs::FakeProcess> Holders() {
  procfs::FakeProcess a;
  a.pid = 6100;
  a.fd_targets = {"/dev/nvidia0"};
  procfs::FakeProcess b;
  b.pid = 6200;
  b.fd_targets = {"/dev/nvidia1"};
  return {a, b};
}

TEST(CheckErrorsE2E, FailingMemoryCallIsAnNvmlErrorAndLeavesValuesMissing) {
  Scratch s;
  std::string proc = s.Proc(Holders());
  std::string sc = s.Write("s.yaml", TwoGpus("    errors: [{function: nvmlDeviceGetMemoryInfo, code: 999}]\n"));
  RunResult r = Check(sc, proc, "");
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  auto f = FindingsOf(r.json, "nvml_error");
  ASSERT_EQ(f.size(), 1u) << r.out;
  EXPECT_EQ(f[0]["gpu"], "0");
  EXPECT_EQ(f[0]["severity"], "warning");
  EXPECT_NE(f[0]["message"].get<std::string>().find("nvmlDeviceGetMemoryInfo"), std::string::npos);
  EXPECT_TRUE(r.json["gpus"][0]["memory_used_bytes"].is_null());
  EXPECT_FALSE(r.json["gpus"][1]["memory_used_bytes"].is_null());
  EXPECT_TRUE(FindingsOf(r.json, "orphaned_memory").empty());
}

TEST(CheckErrorsE2E, LostGpuIsCriticalAndTheOtherGpuIsStillReported) {
  Scratch s;
  std::string proc = s.Proc(Holders());
  std::string sc = s.Write("s.yaml", TwoGpus("    errors: [{function: \"*\", code: 15}]\n"));
  RunResult r = Check(sc, proc, "");
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  auto f = FindingsOf(r.json, "gpu_lost");
  ASSERT_EQ(f.size(), 1u) << r.out;
  EXPECT_EQ(f[0]["gpu"], "0");
  EXPECT_EQ(r.json["gpus"][0]["lost"], true);
  EXPECT_EQ(r.json["gpus"][1]["memory_used_bytes"], 2048ull << 20);
}

TEST(CheckErrorsE2E, HungCallMarksThatGpuUnresponsiveAndCheckFinishesInSeconds) {
  Scratch s;
  std::string proc = s.Proc(Holders());
  std::string sc = s.Write(
      "s.yaml", TwoGpus("    hangs: [{function: nvmlDeviceGetComputeRunningProcesses, at_s: 0, seconds: 60}]\n"));
  RunResult r = Check(sc, proc, "", {"--timeout", "300ms"});
  EXPECT_LT(r.seconds, 10.0) << r.out << r.err;
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.json["gpus"][0]["responsive"], false);
  EXPECT_EQ(r.json["gpus"][1]["responsive"], true);
  EXPECT_EQ(r.json["gpus"][1]["processes"][0]["pid"], 6200);
  auto f = FindingsOf(r.json, "nvml_error");
  ASSERT_FALSE(f.empty()) << r.out;
  EXPECT_EQ(f[0]["gpu"], "0");
  EXPECT_EQ(f[0]["severity"], "critical");
  // The hung process list says nothing about who holds the memory: no orphan verdict from it.
  EXPECT_TRUE(FindingsOf(r.json, "orphaned_memory").empty()) << r.out;
  EXPECT_TRUE(r.json["gpus"][0]["memory_unattributed_bytes"].is_null());
}

TEST(CheckErrorsE2E, MalformedScenarioIsUnknownWithAClearMessage) {
  Scratch s;
  std::string proc = s.Proc({});
  std::string sc = s.Write("s.yaml", "gpus:\n  - name: x\n    memory_total_mib: lots\n");
  RunResult r = Check(sc, proc, "");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("UNKNOWN"), std::string::npos) << r.err;
  EXPECT_EQ(r.json["status"], "unknown");
  EXPECT_TRUE(r.json["error"].is_string());
}

TEST(CheckErrorsE2E, NoGpuMissingLibraryAndBadFlagsAreUnknown) {
  Scratch s;
  std::string proc = s.Proc({});
  std::string none = s.Write("none.yaml", "gpus: []\n");
  RunResult r = Check(none, proc, "");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("no GPU"), std::string::npos) << r.err;

  r = RunVramwatch({"check", "--nvml-lib", s.dir() + "/missing/libnvidia-ml.so.1", "--kernel-log", "none"}, {});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("missing/libnvidia-ml.so.1"), std::string::npos) << r.err;

  r = RunVramwatch({"check", "--window", "soon"}, {});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("--window"), std::string::npos) << r.err;

  r = RunVramwatch({"check", "--orphan-threshold", "big"}, {});
  EXPECT_EQ(r.exit_code, 3);

  r = RunVramwatch({"check", "--no-such-flag"}, {});
  EXPECT_EQ(r.exit_code, 3);

  r = Check(none, proc, s.dir() + "/no-such-kern.log");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no-such-kern.log"), std::string::npos) << r.err;
}

// NVML refusing to start (NVML_ERROR_NO_PERMISSION: the device files not open to this user) gets
// a hint about access, not "is the driver installed?".
TEST(CheckErrorsE2E, NvmlRefusingThisUserGetsAHintAboutDeviceAccess) {
  Scratch s;
  std::string proc = s.Proc({});
  std::string sc = s.Write("s.yaml", TwoGpus("", "errors:\n  - {function: nvmlInit, code: 4}\n"));
  RunResult r = Check(sc, proc, "");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(r.json["status"], "unknown");
  EXPECT_NE(r.err.find("may not open the NVIDIA device files"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("is the NVIDIA driver installed"), std::string::npos) << r.err;
}

// Without persistence mode nvmlInit brings every GPU up, which takes seconds: it has its own
// deadline (--init-timeout, 60 s), not the per-call --timeout. Before, an init of 1.5 s against
// the 1-2 s call deadline was "cannot use NVML" on such a host.
TEST(CheckErrorsE2E, ASlowNvmlInitWaitsForItsOwnDeadlineNotTheCallTimeout) {
  Scratch s;
  std::string proc = s.Proc({});
  std::string sc = s.Write("s.yaml", TwoGpus("", "hangs:\n  - {function: nvmlInit, at_s: 0, seconds: 2}\n"));
  RunResult slow = Check(sc, proc, "", {"--timeout", "500ms"});
  EXPECT_NE(slow.exit_code, 3) << slow.out << slow.err;  // the scenario's dead holders make it CRITICAL
  EXPECT_EQ(slow.json["gpus"].size(), 2u) << slow.out;
  RunResult cut = Check(sc, proc, "", {"--timeout", "500ms", "--init-timeout", "500ms"});
  EXPECT_EQ(cut.exit_code, 3) << cut.out << cut.err;
  EXPECT_NE(cut.err.find("nvmlInit_v2: no answer within the 500 ms deadline"), std::string::npos) << cut.err;
  EXPECT_NE(cut.err.find("persistence mode"), std::string::npos) << cut.err;
  EXPECT_NE(cut.err.find("--init-timeout"), std::string::npos) << cut.err;
  RunResult bad = Check(sc, proc, "", {"--init-timeout", "0s"});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find("--init-timeout must be at least 1ms"), std::string::npos) << bad.err;
}

// A --proc-root that is missing, a file, or an empty mount point is a usage error naming the path:
// never a host where every PID NVML lists is a CRITICAL dead_holder.
TEST(CheckErrorsE2E, MissingFileOrEmptyProcRootIsUnknownNamingItNotDeadHolders) {
  Scratch s;
  std::string sc = s.Write("s.yaml", TwoGpus(""));
  const std::string empty = s.dir() + "/emptyproc";
  std::filesystem::create_directories(empty);
  const std::string file = s.Write("notadir", "1\n");
  for (const std::string& root : {s.dir() + "/host/proc", empty, file}) {
    RunResult r = Check(sc, root, "");
    EXPECT_EQ(r.exit_code, 3) << root << "\n" << r.out << r.err;
    ASSERT_TRUE(r.json.is_object()) << r.out;
    EXPECT_EQ(r.json["status"], "unknown");
    const std::string error = r.json["error"];
    EXPECT_NE(error.find("--proc-root " + root), std::string::npos) << error;
    EXPECT_NE(error.find("mounted"), std::string::npos) << error;
    EXPECT_TRUE(FindingsOf(r.json, "dead_holder").empty()) << r.out;
    EXPECT_NE(r.err.find(root), std::string::npos) << r.err;
  }
}

// --passwd: a relative path is relative to the working directory; the default for a fixture root
// (given as a relative path too) is <proc-root>/passwd; a --passwd that cannot be read is exit 3.
TEST(CheckErrorsE2E, RelativeProcRootAndPasswdNameTheFixtureUsersAndAMissingPasswdIsUnknown) {
  Scratch s;
  std::string proc = s.Proc(Holders());
  const std::string rel = std::filesystem::relative(proc).string();
  ASSERT_NE(rel.front(), '/');
  std::string sc = s.Write("s.yaml", TwoGpus(""));
  RunResult def = Check(sc, rel, "");
  ASSERT_NE(def.exit_code, 3) << def.out << def.err;
  EXPECT_EQ(def.json["gpus"][0]["processes"][0]["user"], "alice") << def.out;
  EXPECT_TRUE(def.json["gpus"][0]["processes"][0]["unreadable"].empty()) << def.out;

  const std::string users = s.Write("users", "carol:x:1000:1000::/home/carol:/bin/sh\n");
  RunResult given = Check(sc, rel, "", {"--passwd", std::filesystem::relative(users).string()});
  ASSERT_NE(given.exit_code, 3) << given.out << given.err;
  EXPECT_EQ(given.json["gpus"][0]["processes"][0]["user"], "carol") << given.out;

  RunResult missing = Check(sc, rel, "", {"--passwd", s.dir() + "/nonexist"});
  EXPECT_EQ(missing.exit_code, 3) << missing.out << missing.err;
  EXPECT_EQ(missing.json["status"], "unknown");
  EXPECT_NE(missing.json["error"].get<std::string>().find("--passwd"), std::string::npos) << missing.out;
  EXPECT_NE(missing.json["error"].get<std::string>().find("nonexist"), std::string::npos) << missing.out;
}

// check.md: exit 3 for a bad flag, and with --json stdout still gets {"status":"unknown",...}.
TEST(CheckErrorsE2E, FlagParseErrorsStillPrintTheUnknownJsonObject) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"check", "--json", "--bogus"}, std::vector<std::string>{"check", "--json", "--window"},
        std::vector<std::string>{"check", "--bogus", "--json"}}) {
    RunResult r = RunVramwatch(args, {});
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    ASSERT_TRUE(r.json.is_object()) << "stdout: " << r.out << "\nstderr: " << r.err;
    EXPECT_EQ(r.json["status"], "unknown");
    EXPECT_EQ(r.json["exit_code"], 3);
    EXPECT_NE(r.json["error"].get<std::string>().find(args.back() == "--json" ? "--bogus" : args.back()),
              std::string::npos)
        << r.out;
  }
  // Without --json, stdout stays empty.
  RunResult plain = RunVramwatch({"check", "--bogus"}, {});
  EXPECT_EQ(plain.exit_code, 3);
  EXPECT_EQ(plain.out, "");
}

TEST(CheckErrorsE2E, MalformedProcEntriesAreReportedNotFatal) {
  Scratch s;
  std::string proc = s.Proc(Holders());
  { std::ofstream(proc + "/6100/stat") << "6100 (broken\n"; }
  { std::ofstream(proc + "/6200/status") << "Name:\tx\nUid:\tnope\n"; }
  std::string sc = s.Write("s.yaml", TwoGpus(""));
  RunResult r = Check(sc, proc, "");
  ASSERT_TRUE(r.json.is_object()) << r.out << r.err;
  EXPECT_NE(r.exit_code, 3);
  const json& p0 = r.json["gpus"][0]["processes"][0];
  ASSERT_FALSE(p0["unreadable"].empty()) << p0.dump();
  EXPECT_NE(p0["unreadable"][0].get<std::string>().find("6100/stat"), std::string::npos) << p0.dump();
  EXPECT_EQ(p0["state"], "unknown");
  const json& p1 = r.json["gpus"][1]["processes"][0];
  ASSERT_FALSE(p1["unreadable"].empty()) << p1.dump();
  EXPECT_TRUE(p1["uid"].is_null());
}

}  // namespace
}  // namespace vw::e2e
