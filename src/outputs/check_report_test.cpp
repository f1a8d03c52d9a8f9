#include "outputs/check_report.h"

#include <gtest/gtest.h>

namespace vw::outputs {
namespace {

CheckReport Sample() {
  CheckReport r;
  r.snapshot.hostname = "node1";
  r.snapshot.driver_version = "550.54.15";
  r.snapshot.cuda_driver_version = 12040;
  GpuSnapshot g;
  g.index = 0;
  g.uuid = "GPU-1";
  g.name = "NVIDIA H100 80GB HBM3";
  g.minor = 0;
  g.memory_total_bytes = 1000;
  g.memory_used_bytes = 700;
  g.memory_reserved_bytes = 10;
  ProcessSnapshot p;
  p.pid = 42;
  p.compute = true;
  p.graphics = true;
  p.used_bytes = 500;
  p.info.alive = true;
  p.info.state = ProcState::kZombie;
  p.info.container_pid = 7;
  p.info.user = "alice";
  p.info.command = "python3 x.py";
  ProcessSnapshot fd_only;
  fd_only.pid = 43;
  fd_only.listed_by_nvml = false;
  fd_only.info.alive = true;
  fd_only.info.state = ProcState::kSleeping;
  fd_only.info.unreadable = {"cmdline: permission denied"};
  g.processes = {p, fd_only};
  r.snapshot.gpus = {g};
  Finding f;
  f.kind = "zombie_holder";
  f.severity = Severity::kCritical;
  f.gpu = "0";
  f.pid = 42;
  f.bytes = 500;
  f.message = "m";
  f.action = "a";
  r.result.findings = {f};
  r.result.worst = Severity::kCritical;
  r.result.notes = {"n"};
  r.exit_code = 2;
  return r;
}

TEST(CheckReportJson, HasTheContractFieldsAndNullsForMissingValues) {
  auto j = CheckReportJson(Sample());
  EXPECT_EQ(j["schema"], "vramwatch.check/1");
  EXPECT_EQ(j["status"], "critical");
  EXPECT_EQ(j["exit_code"], 2);
  const auto& g = j["gpus"][0];
  EXPECT_EQ(g["gpu"], "0");
  EXPECT_EQ(g["memory_used_bytes"], 700);
  EXPECT_TRUE(g["memory_free_bytes"].is_null());
  EXPECT_TRUE(g["bar1_total_bytes"].is_null());
  EXPECT_EQ(g["memory_unattributed_bytes"], 200);
  const auto& p = g["processes"][0];
  EXPECT_EQ(p["pid"], 42);
  EXPECT_EQ(p["container_pid"], 7);
  EXPECT_EQ(p["state"], "Z");
  EXPECT_EQ(p["type"], "C+G");
  EXPECT_TRUE(p["sm_util_ratio"].is_null());
  const auto& q = g["processes"][1];
  EXPECT_EQ(q["listed_by_nvml"], false);
  EXPECT_TRUE(q["used_bytes"].is_null());
  EXPECT_TRUE(q["type"].is_null());
  EXPECT_EQ(q["unreadable"][0], "cmdline: permission denied");
  const auto& f = j["findings"][0];
  EXPECT_EQ(f["kind"], "zombie_holder");
  EXPECT_EQ(f["severity"], "critical");
  EXPECT_EQ(f["pid"], 42);
  EXPECT_EQ(f["bytes"], 500);
  EXPECT_EQ(j["notes"][0], "n");
  EXPECT_EQ(j["host"]["cuda_driver_version"], 12040);
}

// Scripts get the holder scan's blind spot as fields, not only as the note's words: how many fd
// directories could not be read, the first PIDs, and hidepid. No scan made (a replay) is null.
TEST(CheckReportJson, TheFdScansBlindSpotIsAFieldAndNullWithoutAScan) {
  CheckReport r = Sample();
  auto none = CheckReportJson(r);
  EXPECT_TRUE(none["host"]["fd_scan"].is_null()) << none["host"].dump();
  EXPECT_TRUE(none["host"]["pids_hidden"].is_null());
  r.snapshot.holder_scan.pids_scanned = 240;
  r.snapshot.holder_scan.dirs_unreadable = 12;
  r.snapshot.holder_scan.unreadable_pids = {812, 1001};
  r.snapshot.holder_scan.pids_hidden = "/proc is mounted with hidepid=2";
  auto j = CheckReportJson(r);
  const auto& scan = j["host"]["fd_scan"];
  EXPECT_EQ(scan["processes_scanned"], 240);
  EXPECT_EQ(scan["unreadable"], 12);
  EXPECT_EQ(scan["unreadable_pids"], nlohmann::ordered_json::array({812, 1001}));
  EXPECT_EQ(j["host"]["pids_hidden"], "/proc is mounted with hidepid=2");
  r.snapshot.holder_scan.dirs_unreadable = 0;
  r.snapshot.holder_scan.unreadable_pids.clear();
  auto clear = CheckReportJson(r);
  EXPECT_EQ(clear["host"]["fd_scan"]["unreadable"], 0) << "a scan that read everything is 0, not null";
}

TEST(CheckReportText, ShowsEveryHolderFindingsAndStatus) {
  std::string t = CheckReportText(Sample(), false);
  EXPECT_NE(t.find("CUDA 12.4"), std::string::npos) << t;
  EXPECT_NE(t.find("python3 x.py"), std::string::npos) << t;
  EXPECT_NE(t.find("(fd only)"), std::string::npos) << t;
  EXPECT_NE(t.find("(cmdline: permission denied)"), std::string::npos) << t;
  EXPECT_NE(t.find("CRITICAL"), std::string::npos) << t;
  EXPECT_NE(t.find("next: a"), std::string::npos) << t;
  EXPECT_NE(t.find("Status: CRITICAL (exit 2)"), std::string::npos) << t;
  EXPECT_EQ(t.find("\033["), std::string::npos);
}

// A MIG GPU: a table of its MIG devices like nvidia-smi's (GI, CI, profile, used / total, what no
// process on the instance owns, MIG UUID; "-" where unknown) and each process's GI/CI; a GPU
// without MIG shows neither.
TEST(CheckReportText, AMigGpuShowsItsInstancesAndEachProcesssInstance) {
  CheckReport r = Sample();
  EXPECT_EQ(CheckReportText(r, false).find("GI/CI"), std::string::npos);
  GpuSnapshot& g = r.snapshot.gpus[0];
  g.mig_enabled = true;
  g.processes[0].gpu_instance_id = 1;
  g.processes[0].compute_instance_id = 0;
  g.processes.pop_back();  // the fd-only holder
  MigDeviceSnapshot a;
  a.gpu_instance_id = 1;
  a.compute_instance_id = 0;
  a.uuid = "MIG-aaaa";
  a.name = "NVIDIA H100 80GB HBM3 MIG 3g.40gb";
  a.memory_total_bytes = 40ull << 30;
  a.memory_used_bytes = 500 + (2ull << 30);
  MigDeviceSnapshot b;  // NVML gave neither id nor memory
  b.uuid = "MIG-bbbb";
  b.name = "NVIDIA H100 80GB HBM3 MIG 1g.10gb";
  g.mig_devices = {a, b};
  const std::string t = CheckReportText(r, false);
  EXPECT_NE(t.find("  GI   CI PROFILE          USED      TOTAL UNATTRIBUTED  MIG UUID\n"), std::string::npos) << t;
  EXPECT_NE(t.find("     1    0 3g.40gb       2.0 GiB   40.0 GiB      2.0 GiB  MIG-aaaa\n"), std::string::npos) << t;
  EXPECT_NE(t.find("     -    - 1g.10gb             -          -            -  MIG-bbbb\n"), std::string::npos) << t;
  EXPECT_NE(t.find("       PID   GI/CI     CPID"), std::string::npos) << t;
  EXPECT_NE(t.find("        42     1/0        7"), std::string::npos) << t;
}

// A command line, a pod's name and a finding's message hold what a terminal would obey (a title
// change, colours, a carriage return, a newline that fakes a row): the text writes them out, the
// JSON keeps them as they are (JSON escapes them by its own rules).
TEST(CheckReportText, WritesOutControlCharactersFromOutside) {
  CheckReport r = Sample();
  ProcessInfo& i = r.snapshot.gpus[0].processes[0].info;
  i.command = "python3 \x1b]0;pwned\x07\x1b[31mRED\x1b[0m\rOVERWRITE\n  99999 fake row";
  i.pod_name = "llm\x1b[2J";
  i.pod_namespace = "ml";
  r.result.findings[0].message = "holder `python3 \x1b[31m` is a zombie";
  r.result.notes = {"note\rhidden"};
  const std::string t = CheckReportText(r, true);
  EXPECT_NE(t.find(R"(python3 \x1b]0;pwned\x07\x1b[31mRED\x1b[0m\rOVERWRITE\n  ...)"), std::string::npos) << t;
  EXPECT_NE(t.find(R"(pod ml/llm\x1b[2J)"), std::string::npos) << t;
  EXPECT_NE(t.find(R"(holder `python3 \x1b[31m` is a zombie)"), std::string::npos) << t;
  EXPECT_NE(t.find(R"(note\rhidden)"), std::string::npos) << t;
  EXPECT_EQ(t.find('\r'), std::string::npos) << t;
  EXPECT_EQ(t.find('\a'), std::string::npos) << t;
  // The only escape sequences left are the report's own severity colours.
  for (size_t at = t.find('\x1b'); at != std::string::npos; at = t.find('\x1b', at + 1)) {
    EXPECT_TRUE(t.compare(at, 7, "\x1b[1;31m") == 0 || t.compare(at, 7, "\x1b[1;33m") == 0 ||
                t.compare(at, 5, "\x1b[32m") == 0 || t.compare(at, 4, "\x1b[0m") == 0)
        << t.substr(at, 10);
  }
  const auto j = CheckReportJson(r);
  EXPECT_EQ(j["gpus"][0]["processes"][0]["command"], i.command);
}

// A holder in a container of a pod, with a long user name: the columns widen so that every
// row's command starts where the header's COMMAND does.
TEST(CheckReportText, TheCommandColumnStaysInLineWithAContainerAndAPod) {
  CheckReport r = Sample();
  ProcessInfo& i = r.snapshot.gpus[0].processes[0].info;
  i.container_id = std::string(64, 'e');
  i.pod_uid = "0a1b2c3d-0000-1111-2222-333344445555";
  i.slurm_job = "5512";
  i.user = "svc-inference-prod";
  const std::string t = CheckReportText(r, false);
  size_t header = t.find("PID");
  ASSERT_NE(header, std::string::npos) << t;
  header = t.rfind('\n', header) + 1;
  const size_t column = t.find("COMMAND", header) - header;
  for (const std::string cmd : {"python3 x.py", "(cmdline: permission denied)"}) {
    const size_t at = t.find(cmd);
    ASSERT_NE(at, std::string::npos) << t;
    EXPECT_EQ(at - (t.rfind('\n', at) + 1), column) << t;
  }
  EXPECT_NE(t.find("ctr eeeeeeeeeeee pod 0a1b2c3d job 5512"), std::string::npos) << t;
}

// A holder whose state is unknown (hidepid) widens the STATE column: the MEMORY and COMMAND columns
// stay under their headers.
TEST(CheckReportText, AnUnknownStateKeepsTheColumnsInLine) {
  CheckReport r = Sample();
  r.snapshot.gpus[0].processes[0].info.state = ProcState::kUnknown;
  const std::string t = CheckReportText(r, false);
  size_t header = t.find("PID");
  ASSERT_NE(header, std::string::npos) << t;
  header = t.rfind('\n', header) + 1;
  const size_t command = t.find("COMMAND", header) - header;
  const size_t memory_end = t.find("MEMORY", header) - header + 6;
  for (const std::string cmd : {"python3 x.py", "(cmdline: permission denied)"}) {
    const size_t at = t.find(cmd);
    ASSERT_NE(at, std::string::npos) << t;
    const size_t line = t.rfind('\n', at) + 1;
    EXPECT_EQ(at - line, command) << t;
    EXPECT_EQ(t[line + memory_end - 1] != ' ' && t[line + memory_end] == ' ', true) << "MEMORY right-aligned:\n" << t;
  }
  EXPECT_NE(t.find(" unknown "), std::string::npos) << t;
}

// With the kubelet's names read (--kube-logs), the table names the container and the pod by them
// and the JSON carries them beside the IDs; without them the names are null, not "".
TEST(CheckReport, NamesAKubernetesHolderByItsPodAndContainerNames) {
  CheckReport r = Sample();
  ProcessInfo& i = r.snapshot.gpus[0].processes[0].info;
  i.container_id = std::string(64, 'e');
  i.pod_uid = "0a1b2c3d-0000-1111-2222-333344445555";
  i.pod_namespace = "ml";
  i.pod_name = "llm-serve-0";
  i.container_name = "vllm";
  const std::string t = CheckReportText(r, false);
  EXPECT_NE(t.find("ctr vllm pod ml/llm-serve-0 "), std::string::npos) << t;
  EXPECT_EQ(t.find("eeeeeeeeeeee"), std::string::npos) << t;
  auto j = CheckReportJson(r);
  const auto& p = j["gpus"][0]["processes"][0];
  EXPECT_EQ(p["container_id"], std::string(64, 'e'));
  EXPECT_EQ(p["pod_uid"], "0a1b2c3d-0000-1111-2222-333344445555");
  EXPECT_EQ(p["pod_namespace"], "ml");
  EXPECT_EQ(p["pod_name"], "llm-serve-0");
  EXPECT_EQ(p["container_name"], "vllm");
  const auto& q = j["gpus"][0]["processes"][1];
  EXPECT_TRUE(q["pod_namespace"].is_null() && q["pod_name"].is_null() && q["container_name"].is_null());
}

TEST(UnattributedBytes, MissingWhenAListedProcessHasNoFigure) {
  GpuSnapshot g;
  g.memory_used_bytes = 100;
  ProcessSnapshot p;
  g.processes = {p};
  EXPECT_FALSE(UnattributedBytes(g).has_value());
  g.processes[0].used_bytes = 150;
  EXPECT_EQ(UnattributedBytes(g), 0u);
}

// Missing, as check's findings judge it, whenever the process list is not complete: a list call
// failed, or on a MIG GPU the MIG devices (whose lists make the GPU's) could not be listed.
TEST(UnattributedBytes, MissingWhenTheProcessListIsIncomplete) {
  for (const char* call : {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetProcessDetailList",
                           "nvmlDeviceGetMigDeviceHandleByIndex"}) {
    GpuSnapshot g;
    g.mig_enabled = true;
    g.memory_used_bytes = 100;
    EXPECT_EQ(UnattributedBytes(g), 100u) << call;
    g.nvml_errors = {{call, 999, "x"}};
    EXPECT_FALSE(UnattributedBytes(g).has_value()) << call;
  }
}

}  // namespace
}  // namespace vw::outputs
