// `vramwatch check` end to end: one scenario per finding kind.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "e2e_harness.h"

namespace vw::e2e {
namespace {

using nlohmann::json;
using procfs::FakeProcess;

constexpr uint64_t kMiB = 1ull << 20;

// One H100 at PCI 3B, minor 0, with the given YAML process list and extra keys.
std::string OneGpu(const std::string& processes, const std::string& extra = "") {
  return R"(driver_version: "550.54.15"
gpus:
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f60"
    pci_bus_id: "00000000:3B:00.0"
    minor: 0
    memory_total_mib: 81559
    memory_reserved_mib: 479
    utilization_gpu: 50
)" + extra +
         (processes.empty() ? std::string() : "    processes:\n" + processes);
}

// An H100 in MIG mode (minor 0) with four GPU instances, as `nvidia-smi mig -lgi` could list them:
// GI 1 3g.40gb, GI 5 2g.20gb, GI 13 and GI 14 1g.10gb, each with one compute instance; `instance[i]`
// adds keys (processes, unattributed_mib) to the i-th, `extra` to the GPU.
std::string MigGpu(const std::vector<std::string>& instance, const std::string& extra = "") {
  struct Gi {
    int id;
    const char* profile;
    int mib;
  };
  static constexpr Gi kInstances[] = {
      {1, "3g.40gb", 40448}, {5, "2g.20gb", 20096}, {13, "1g.10gb", 9984}, {14, "1g.10gb", 9984}};
  std::string out = R"(driver_version: "590.48.01"
gpus:
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f60"
    pci_bus_id: "00000000:3B:00.0"
    minor: 0
    memory_total_mib: 81559
    memory_reserved_mib: 479
)" + extra + "    mig_devices:\n";
  for (size_t i = 0; i < 4; ++i) {
    const Gi& gi = kInstances[i];
    out += "      - gpu_instance_id: " + std::to_string(gi.id) + "\n        compute_instance_id: 0\n" +
           "        uuid: MIG-" + std::to_string(gi.id) + "0000000-0000-0000-0000-000000000000\n" +
           "        name: \"NVIDIA H100 80GB HBM3 MIG " + gi.profile +
           "\"\n        memory_total_mib: " + std::to_string(gi.mib) + "\n" +
           (i < instance.size() ? instance[i] : std::string());
  }
  return out;
}

// The four instances of MigGpu with one process each: 6100 (10 GiB), 6200, 6300, 6400.
std::vector<std::string> MigProcesses() {
  return {"        processes: [{pid: 6100, used_mib: 10240}]\n", "        processes: [{pid: 6200, used_mib: 4096}]\n",
          "        processes: [{pid: 6300, used_mib: 2048}]\n", "        processes: [{pid: 6400, used_mib: 1024}]\n"};
}

FakeProcess Holder(int64_t pid, char state = 'S', std::vector<std::string> argv = {"python3", "train.py"}) {
  FakeProcess p;
  p.pid = pid;
  p.state = state;
  p.argv = std::move(argv);
  p.fd_targets = {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"};
  return p;
}

TEST(CheckE2E, HealthyHostIsOkAndListsTheHolderWithItsProcFacts) {
  Scratch s;
  FakeProcess p = Holder(5100, 'R');
  p.nspid = {5100, 7};
  p.cgroup = "0::/kubepods.slice/kubepods-pod0a1b2c3d_0000_1111_2222_333344445555.slice/cri-containerd-" +
             std::string(64, 'e') + ".scope\n";
  std::string proc = s.Proc({p});
  std::string sc = s.Write("s.yaml", OneGpu("      - {pid: \"${PID_TRAINER}\", type: compute, used_mib: 10240, "
                                            "sm_util: 80}\n"));
  RunResult r = Check(sc, proc, "", {}, {{"PID_TRAINER", "5100"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json& j = r.json;
  EXPECT_EQ(j["schema"], "vramwatch.check/1");
  EXPECT_EQ(j["status"], "ok");
  ASSERT_EQ(j["gpus"].size(), 1u);
  const json& g = j["gpus"][0];
  EXPECT_EQ(g["uuid"], "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f60");
  EXPECT_EQ(g["memory_total_bytes"], 81559 * kMiB);
  EXPECT_EQ(g["memory_reserved_bytes"], 479 * kMiB);
  EXPECT_EQ(g["memory_used_bytes"], 10240 * kMiB);
  ASSERT_EQ(g["processes"].size(), 1u);
  const json& pr = g["processes"][0];
  EXPECT_EQ(pr["pid"], 5100);
  EXPECT_EQ(pr["container_pid"], 7);
  EXPECT_EQ(pr["state"], "R");
  EXPECT_EQ(pr["user"], "alice");
  EXPECT_EQ(pr["command"], "python3 train.py");
  EXPECT_EQ(pr["used_bytes"], 10240 * kMiB);
  EXPECT_EQ(pr["container_id"], std::string(64, 'e'));
  EXPECT_EQ(pr["pod_uid"], "0a1b2c3d-0000-1111-2222-333344445555");
  for (const auto& f : j["findings"]) EXPECT_EQ(f["severity"], "ok") << f.dump();
  bool idle_note = false;
  for (const auto& n : j["notes"])
    idle_note |= n.get<std::string>().find("idle_holder not judged") != std::string::npos;
  EXPECT_TRUE(idle_note) << j["notes"].dump();
  // The holder scan looked at the fixture's processes (the holder, init, kthreadd) and read them all.
  ASSERT_TRUE(j["host"]["fd_scan"].is_object()) << j["host"].dump();
  EXPECT_GE(j["host"]["fd_scan"]["processes_scanned"], 1);
  EXPECT_EQ(j["host"]["fd_scan"]["unreadable"], 0);
  EXPECT_TRUE(j["host"]["pids_hidden"].is_null());
}

// The cgroup gives the pod's UID and the container's ID; the kubelet's log directory (--kube-logs)
// names them: the JSON carries the names, the table and the findings show them, and a stuck
// holder's next step kills its container PID through kubectl. A --kube-logs that does not exist is
// a usage error, and --kube-logs none reads no names.
TEST(CheckE2E, AKubernetesHolderIsNamedByItsPodNamespaceAndContainer) {
  Scratch s;
  const std::string id(64, 'e');
  const std::string uid = "0a1b2c3d-0000-1111-2222-333344445555";
  FakeProcess p = Holder(5100, 'D');
  p.nspid = {5100, 7};
  p.cgroup =
      "0::/kubepods.slice/kubepods-pod0a1b2c3d_0000_1111_2222_333344445555.slice/cri-containerd-" + id + ".scope\n";
  std::string proc = s.Proc({p});
  const std::string logs = s.dir() + "/var-log";
  std::filesystem::create_directories(logs + "/pods/ml_llm-serve-0_" + uid + "/vllm");
  std::filesystem::create_directories(logs + "/containers");
  std::filesystem::create_symlink("../pods/ml_llm-serve-0_" + uid + "/vllm/0.log",
                                  logs + "/containers/llm-serve-0_ml_vllm-" + id + ".log");
  std::string sc = s.Write("s.yaml", OneGpu("      - {pid: \"${PID}\", type: compute, used_mib: 10240, sm_util: 0}\n"));
  RunResult r = Check(sc, proc, "", {"--kube-logs", logs}, {{"PID", "5100"}});
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  const json& pr = r.json["gpus"][0]["processes"][0];
  EXPECT_EQ(pr["pod_uid"], uid);
  EXPECT_EQ(pr["pod_namespace"], "ml");
  EXPECT_EQ(pr["pod_name"], "llm-serve-0");
  EXPECT_EQ(pr["container_name"], "vllm");
  auto stuck = FindingsOf(r.json, "stuck_holder");
  ASSERT_EQ(stuck.size(), 1u) << r.out;
  const std::string message = stuck[0]["message"], action = stuck[0]["action"];
  EXPECT_NE(message.find("container vllm, pod ml/llm-serve-0"), std::string::npos) << message;
  EXPECT_NE(action.find("kubectl exec -n ml llm-serve-0 -c vllm -- kill -TERM 7"), std::string::npos) << action;

  std::map<std::string, std::string> env = {{"VRAMWATCH_EMULATOR_SCENARIO", sc}, {"PID", "5100"}};
  RunResult text = RunVramwatch(
      {"check", "--nvml-lib", EmulatorLib(), "--proc-root", proc, "--kernel-log", "none", "--kube-logs", logs}, env);
  EXPECT_EQ(text.exit_code, 2) << text.err;
  EXPECT_NE(text.out.find("ctr vllm pod ml/llm-serve-0"), std::string::npos) << text.out;

  RunResult none = Check(sc, proc, "", {"--kube-logs", "none"}, {{"PID", "5100"}});
  EXPECT_TRUE(none.json["gpus"][0]["processes"][0]["pod_name"].is_null()) << none.out;
  EXPECT_EQ(none.json["gpus"][0]["processes"][0]["pod_uid"], uid);

  // A directory that is not the node's log directory (or not mounted): the holder stays a UID, and
  // a note says why and what to pass.
  const std::string empty = s.dir() + "/empty-log";
  std::filesystem::create_directories(empty);
  RunResult unnamed = Check(sc, proc, "", {"--kube-logs", empty}, {{"PID", "5100"}});
  bool said = false;
  for (const auto& n : unnamed.json["notes"]) {
    said |= n.get<std::string>().find("1 holder(s) run in Kubernetes pods, but " + empty +
                                      " has no pod log directories") != std::string::npos;
  }
  EXPECT_TRUE(said) << unnamed.json["notes"].dump();
  for (const auto& n : r.json["notes"]) {
    EXPECT_EQ(n.get<std::string>().find("has no pod log directories"), std::string::npos) << n;
  }

  RunResult missing = Check(sc, proc, "", {"--kube-logs", s.dir() + "/no-such-dir"}, {{"PID", "5100"}});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("--kube-logs " + s.dir() + "/no-such-dir: does not exist"), std::string::npos)
      << missing.err;
}

TEST(CheckE2E, CommandLineBytesThatAreNotUtf8AreWrittenAsReplacementCharacters) {
  // /proc/PID/cmdline holds whatever bytes the process was started with; the JSON stays valid.
  Scratch s;
  const std::string arg = std::string("tr") + '\xff' + "ain.py";  // 0xff is never UTF-8
  std::string proc = s.Proc({Holder(5100, 'R', {"python3", arg})});
  std::string sc = s.Write("s.yaml", OneGpu("      - {pid: \"${PID_TRAINER}\", type: compute, used_mib: 10240, "
                                            "sm_util: 80}\n"));
  RunResult r = Check(sc, proc, "", {}, {{"PID_TRAINER", "5100"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_EQ(r.json["gpus"][0]["processes"].size(), 1u) << r.out;
  EXPECT_EQ(r.json["gpus"][0]["processes"][0]["command"], std::string("python3 tr") + "\xef\xbf\xbd" + "ain.py");
}

// A holder whose /proc/PID/cmdline cannot be read is named by NVML (nvmlSystemGetProcessName), as
// `record` names it, in the JSON and the table; a readable command line still wins over NVML's name.
TEST(CheckE2E, HolderWithoutAReadableCommandLineIsNamedByNvml) {
  Scratch s;
  std::string proc = s.Proc({Holder(5150, 'R'), Holder(5160, 'R', {"python3", "serve.py"})});
  ASSERT_TRUE(std::filesystem::remove(proc + "/5150/cmdline"));
  std::string sc = s.Write("s.yaml", OneGpu("      - {pid: 5150, type: compute, name: \"trainer-7\", used_mib: 4096, "
                                            "sm_util: 80}\n"
                                            "      - {pid: 5160, type: compute, name: \"nvml-says-other\", "
                                            "used_mib: 2048, sm_util: 40}\n"));
  RunResult r = Check(sc, proc, "");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::map<int64_t, json> command;
  for (const auto& p : r.json["gpus"][0]["processes"]) command[p["pid"].get<int64_t>()] = p["command"];
  ASSERT_EQ(command.size(), 2u) << r.out;
  EXPECT_EQ(command[5150], "trainer-7") << r.out;
  EXPECT_EQ(command[5160], "python3 serve.py") << r.out;

  RunResult text = RunVramwatch({"check", "--nvml-lib", EmulatorLib(), "--proc-root", proc, "--kernel-log", "none"},
                                {{"VRAMWATCH_EMULATOR_SCENARIO", sc}});
  ASSERT_EQ(text.exit_code, 0) << text.out << text.err;
  std::string row_5150;
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" 5150 ") != std::string::npos) row_5150 = line;
  }
  EXPECT_NE(row_5150.find("trainer-7"), std::string::npos) << text.out;
  EXPECT_EQ(row_5150.find("(cmdline"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("python3 serve.py"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("nvml-says-other"), std::string::npos) << text.out;
}

// One name per PID across the whole check: a trainer listed by NVML on GPU 0 (named by NVML, its
// /proc command line missing) also has /dev/nvidia1 open, where memory is orphaned. Its fd-only
// row on GPU 1, its unlisted_holder finding there and the orphaned-memory message all name it as
// GPU 0's row does; the missing file is "missing", not "vanished" (the process is there).
TEST(CheckE2E, APidIsNamedTheSameOnEveryGpuAndInItsFindings) {
  Scratch s;
  FakeProcess trainer = Holder(5150, 'R');
  trainer.fd_targets = {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia-uvm"};
  std::string proc = s.Proc({trainer});
  ASSERT_TRUE(std::filesystem::remove(proc + "/5150/cmdline"));
  // GPU 0 as OneGpu() writes it, then a second H100 (minor 1) with 2 GiB nobody owns.
  std::string sc = s.Write(
      "s.yaml", OneGpu("      - {pid: 5150, type: compute, name: \"trainer-7\", used_mib: 4096, sm_util: 80}\n") +
                    R"(  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f61"
    pci_bus_id: "00000000:3C:00.0"
    minor: 1
    memory_total_mib: 81559
    memory_reserved_mib: 479
    utilization_gpu: 0
    unattributed_mib: 2048
)");
  RunResult r = Check(sc, proc, "");
  ASSERT_GE(r.exit_code, 1) << r.out << r.err;
  ASSERT_EQ(r.json["gpus"].size(), 2u) << r.out;
  for (int g = 0; g < 2; ++g) {
    const json& rows = r.json["gpus"][g]["processes"];
    ASSERT_EQ(rows.size(), 1u) << r.out;
    EXPECT_EQ(rows[0]["pid"], 5150);
    EXPECT_EQ(rows[0]["listed_by_nvml"], g == 0);
    EXPECT_EQ(rows[0]["command"], "trainer-7") << "GPU " << g << ": " << rows[0].dump();
    EXPECT_EQ(rows[0]["state"], "R");
    EXPECT_EQ(rows[0]["unreadable"], json::array({"cmdline: missing"})) << rows[0].dump();
  }
  auto unlisted = FindingsOf(r.json, "unlisted_holder");
  ASSERT_EQ(unlisted.size(), 1u) << r.out;
  EXPECT_EQ(unlisted[0]["gpu"], "1");
  EXPECT_NE(unlisted[0]["message"].get<std::string>().find("`trainer-7` has /dev/nvidia1 open"), std::string::npos)
      << unlisted[0].dump();
  auto orphaned = FindingsOf(r.json, "orphaned_memory");
  ASSERT_EQ(orphaned.size(), 1u) << r.out;
  EXPECT_NE(orphaned[0]["message"].get<std::string>().find("(5150 `trainer-7`)"), std::string::npos)
      << orphaned[0].dump();
  EXPECT_EQ(r.out.find("vanished"), std::string::npos) << r.out;

  // The table names it on both GPUs.
  RunResult text = RunVramwatch({"check", "--nvml-lib", EmulatorLib(), "--proc-root", proc, "--kernel-log", "none"},
                                {{"VRAMWATCH_EMULATOR_SCENARIO", sc}});
  std::vector<std::string> rows;
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find_first_not_of(' ');
    if (at != std::string::npos && line.compare(at, 5, "5150 ") == 0) rows.push_back(line);  // a table row
  }
  ASSERT_EQ(rows.size(), 2u) << text.out;
  for (const std::string& row : rows) EXPECT_NE(row.find("trainer-7"), std::string::npos) << text.out;
}

// A /proc/PID file that is missing while the PID's stat and status were read says "missing": the
// process is there (state S, its user known). With no other name for it, the table shows why.
TEST(CheckE2E, AMissingProcFileOfALiveProcessIsMissingNotVanished) {
  Scratch s;
  FakeProcess worker = Holder(5500, 'S', {"python3", "-c", "worker"});
  std::string proc = s.Proc({worker});
  ASSERT_TRUE(std::filesystem::remove(proc + "/5500/cmdline"));
  std::string sc = s.Write("s.yaml", OneGpu(""));
  RunResult r = Check(sc, proc, "");
  ASSERT_EQ(r.json["gpus"][0]["processes"].size(), 1u) << r.out << r.err;
  const json& p = r.json["gpus"][0]["processes"][0];
  EXPECT_EQ(p["alive"], true);
  EXPECT_EQ(p["state"], "S");
  EXPECT_EQ(p["user"], "alice");
  EXPECT_TRUE(p["command"].is_null()) << p.dump();
  EXPECT_EQ(p["unreadable"], json::array({"cmdline: missing"})) << p.dump();

  RunResult text = RunVramwatch({"check", "--nvml-lib", EmulatorLib(), "--proc-root", proc, "--kernel-log", "none"},
                                {{"VRAMWATCH_EMULATOR_SCENARIO", sc}});
  EXPECT_NE(text.out.find("(cmdline: missing)"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("vanished"), std::string::npos) << text.out;
}

TEST(CheckE2E, UnheldOrphanedMemoryIsCriticalAndSaysOnlyAResetFreesIt) {
  Scratch s;
  std::string proc = s.Proc({});
  std::string sc = s.Write("s.yaml", OneGpu("", "    unattributed_mib: 12288\n"));
  RunResult r = Check(sc, proc, "");
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  auto f = FindingsOf(r.json, "orphaned_memory");
  ASSERT_EQ(f.size(), 1u) << r.out;
  EXPECT_EQ(f[0]["severity"], "critical");
  EXPECT_EQ(f[0]["gpu"], "0");
  EXPECT_EQ(f[0]["bytes"], 12288 * kMiB);
  EXPECT_NE(f[0]["action"].get<std::string>().find("GPU reset"), std::string::npos);
  EXPECT_EQ(r.json["gpus"][0]["memory_unattributed_bytes"], 12288 * kMiB);
}

// NVML answers nvmlDeviceGetGpuInstanceId with an error (or NOT_SUPPORTED) on a MIG GPU: the
// instances' ids are missing (null), not all instance 0; each process keeps the instance its
// process list gives it; and the report says so, even for NOT_SUPPORTED.
TEST(CheckE2E, MigInstanceIdsNvmlDoesNotGiveAreMissingNotInstanceZero) {
  for (int code : {999, 4, 3}) {
    Scratch s;
    std::string proc = s.Proc({Holder(6100), Holder(6200), Holder(6300), Holder(6400)});
    std::string sc = s.Write(
        "s.yaml", MigGpu(MigProcesses(),
                         "    errors: [{function: nvmlDeviceGetGpuInstanceId, code: " + std::to_string(code) + "}]\n"));
    RunResult r = Check(sc, proc, "");
    ASSERT_TRUE(r.json.is_object()) << r.out << r.err;
    const json& g = r.json["gpus"][0];
    ASSERT_EQ(g["mig_devices"].size(), 4u) << code << g.dump();
    for (const json& m : g["mig_devices"]) {
      EXPECT_TRUE(m["gpu_instance_id"].is_null()) << code << m.dump();
      EXPECT_EQ(m["compute_instance_id"], 0) << code << m.dump();
    }
    std::map<int64_t, json> gi;
    for (const json& p : g["processes"]) gi[p["pid"].get<int64_t>()] = p["gpu_instance_id"];
    EXPECT_EQ(gi[6100], 1) << code;
    EXPECT_EQ(gi[6200], 5) << code;
    EXPECT_EQ(gi[6300], 13) << code;
    EXPECT_EQ(gi[6400], 14) << code;
    bool said = false;
    for (const json& n : r.json["notes"]) {
      said |= n.get<std::string>().find("did not give the GPU instance id of MIG device 0") != std::string::npos;
    }
    EXPECT_TRUE(said) << code << r.json["notes"].dump();
    if (code != 3) {
      EXPECT_FALSE(FindingsOf(r.json, "nvml_error").empty()) << code << r.out;
    }
  }
}

// On a MIG GPU, one process whose memory NVML does not report (N/A) on GPU instance 1 leaves the
// card's "used minus listed" unknown, but not instance 14's: its 3 GiB that no process listed on it
// owns is reported, in its mig_devices entry and as orphaned memory on that instance.
TEST(CheckE2E, MigOrphanOnOneInstanceIsFoundDespiteAnNaProcessOnAnother) {
  Scratch s;
  std::string proc = s.Proc({Holder(6100), Holder(6200), Holder(6300), Holder(6400)});
  std::vector<std::string> instance = MigProcesses();
  instance[0] = "        processes: [{pid: 6100, used_mib: \"N/A\"}]\n        unattributed_mib: 10240\n";
  instance[3] += "        unattributed_mib: 3072\n";
  RunResult r = Check(s.Write("s.yaml", MigGpu(instance)), proc, "");
  ASSERT_TRUE(r.json.is_object()) << r.out << r.err;
  const json& g = r.json["gpus"][0];
  EXPECT_TRUE(g["memory_unattributed_bytes"].is_null()) << "the card's figure needs every process's memory";
  ASSERT_EQ(g["mig_devices"].size(), 4u);
  EXPECT_TRUE(g["mig_devices"][0]["memory_unattributed_bytes"].is_null()) << g["mig_devices"][0].dump();
  EXPECT_EQ(g["mig_devices"][1]["memory_unattributed_bytes"], 0);
  EXPECT_EQ(g["mig_devices"][3]["memory_unattributed_bytes"], 3072 * kMiB);
  auto f = FindingsOf(r.json, "orphaned_memory");
  ASSERT_EQ(f.size(), 1u) << r.out;
  EXPECT_EQ(f[0]["bytes"], 3072 * kMiB);
  EXPECT_NE(f[0]["message"].get<std::string>().find("MIG GPU instance 14 (1g.10gb, MIG-"), std::string::npos)
      << f[0]["message"];
}

TEST(CheckE2E, OrphanedMemoryThatPersistsOverTheWindowIsCritical) {
  Scratch s;
  std::string proc = s.Proc({Holder(5200)});
  std::string sc =
      s.Write("s.yaml", OneGpu("      - {pid: 5200, used_mib: 1024, sm_util: 50}\n", "    unattributed_mib: 512\n"));
  RunResult r = Check(sc, proc, "", {"--window", "1.5s", "--interval", "0.5s", "--grace", "1s"});
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_GE(r.json["samples"].get<int>(), 3);
  auto f = FindingsOf(r.json, "orphaned_memory");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]["severity"], "critical");
}

TEST(CheckE2E, MemoryReclaimedDuringTheWindowIsNotOrphaned) {
  Scratch s;
  std::string proc = s.Proc({});
  // 4 GiB left behind by a kill at t=0, reclaimed by t=0.5.
  std::string sc = s.Write("s.yaml", OneGpu("", "    unattributed_mib: [[0, 4096], [0.4, 4096], [0.5, 0]]\n"));
  RunResult r = Check(sc, proc, "", {"--window", "1.5s", "--interval", "0.5s", "--grace", "1s"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(FindingsOf(r.json, "orphaned_memory").empty());
}

TEST(CheckE2E, OrphanThresholdFlagChangesTheVerdict) {
  Scratch s;
  std::string proc = s.Proc({});
  std::string sc = s.Write("s.yaml", OneGpu("", "    unattributed_mib: 600\n"));
  RunResult low = Check(sc, proc, "");
  EXPECT_EQ(low.exit_code, 1) << low.out;
  EXPECT_EQ(FindingsOf(low.json, "orphaned_memory").size(), 1u);
  RunResult high = Check(sc, proc, "", {"--orphan-threshold", "1GiB"});
  EXPECT_EQ(high.exit_code, 0) << high.out;
}

TEST(CheckE2E, ListedPidThatDoesNotExistIsADeadHolder) {
  Scratch s;
  std::string proc = s.Proc({});
  std::string sc = s.Write("s.yaml", OneGpu("      - {pid: 31337, used_mib: 2048}\n"));
  RunResult r = Check(sc, proc, "");
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  auto f = FindingsOf(r.json, "dead_holder");
  ASSERT_EQ(f.size(), 1u) << r.out;
  EXPECT_EQ(f[0]["pid"], 31337);
  EXPECT_EQ(f[0]["bytes"], 2048 * kMiB);
  EXPECT_EQ(r.json["gpus"][0]["processes"][0]["state"], "gone");
  EXPECT_EQ(r.json["gpus"][0]["processes"][0]["alive"], false);
}

// One look at a process that exited as it was read: NVML lists it for a moment more while the
// driver frees its context. Looked for again, it has left the list: no dead holder.
TEST(CheckE2E, AListedPidThatLeavesTheListAMomentLaterWasAnExitNotADeadHolder) {
  Scratch s;
  std::string proc = s.Proc({});
  std::string sc = s.Write("s.yaml", OneGpu("      - {pid: 31338, used_mib: 2048, end_s: 0.3}\n"));
  RunResult r = Check(sc, proc, "");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(FindingsOf(r.json, "dead_holder").empty()) << r.out;
  EXPECT_TRUE(r.json["gpus"][0]["processes"].empty()) << r.out;
  bool noted = false;
  for (const auto& n : r.json["notes"]) noted |= n.get<std::string>().find("PID 31338 was listed") != std::string::npos;
  EXPECT_TRUE(noted) << r.out;
}

TEST(CheckE2E, ZombieAndStuckHoldersAreCriticalAndNameBothPids) {
  Scratch s;
  FakeProcess zombie = Holder(5301, 'Z');
  FakeProcess stuck = Holder(5302, 'D');
  stuck.nspid = {5302, 41};
  stuck.cgroup = "0::/system.slice/docker-" + std::string(64, 'd') + ".scope\n";
  std::string proc = s.Proc({zombie, stuck});
  std::string sc = s.Write("s.yaml", OneGpu("      - {pid: 5301, used_mib: 1024}\n"
                                            "      - {pid: 5302, used_mib: 2048}\n"));
  RunResult r = Check(sc, proc, "");
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  auto z = FindingsOf(r.json, "zombie_holder");
  ASSERT_EQ(z.size(), 1u) << r.out;
  EXPECT_EQ(z[0]["pid"], 5301);
  auto d = FindingsOf(r.json, "stuck_holder");
  ASSERT_EQ(d.size(), 1u) << r.out;
  EXPECT_EQ(d[0]["pid"], 5302);
  std::string action = d[0]["action"];
  EXPECT_NE(action.find("kill -TERM 5302"), std::string::npos) << action;
  EXPECT_NE(action.find("PID 41"), std::string::npos) << action;
}

// `ps` shows it <defunct>: its main thread exited, one thread is still in the driver (D). It is
// stuck, not a zombie for its parent to reap, and the step does not say to end the parent.
TEST(CheckE2E, ADefunctProcessWithAThreadStuckInTheDriverIsStuckNotAZombie) {
  Scratch s;
  FakeProcess parent = Holder(5350, 'S', {"python3", "launcher.py"});
  parent.fd_targets.clear();
  FakeProcess defunct = Holder(5351, 'Z');
  defunct.ppid = 5350;
  defunct.thread_states = "D";
  std::string proc = s.Proc({parent, defunct});
  std::string sc = s.Write("s.yaml", OneGpu("      - {pid: 5351, used_mib: 2048}\n"));
  RunResult r = Check(sc, proc, "");
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(FindingsOf(r.json, "zombie_holder").empty()) << r.out;
  auto d = FindingsOf(r.json, "stuck_holder");
  ASSERT_EQ(d.size(), 1u) << r.out;
  EXPECT_EQ(d[0]["pid"], 5351);
  EXPECT_NE(d[0]["message"].get<std::string>().find("thread 5352 is in uninterruptible sleep"), std::string::npos)
      << d[0].dump();
  EXPECT_EQ(d[0]["action"].get<std::string>().find("kill -TERM 5350"), std::string::npos) << d[0].dump();
  EXPECT_EQ(r.json["gpus"][0]["processes"][0]["state"], "D") << r.out;
}

TEST(CheckE2E, HolderWithZeroSmForTheWholeWindowIsIdle) {
  Scratch s;
  std::string proc = s.Proc({Holder(5400)});
  std::string sc = s.Write("s.yaml", OneGpu("      - {pid: 5400, used_mib: 8192, sm_util: 0}\n"));
  RunResult r = Check(sc, proc, "", {"--window", "1s", "--interval", "0.5s"});
  auto f = FindingsOf(r.json, "idle_holder");
  ASSERT_EQ(f.size(), 1u) << r.out;
  EXPECT_EQ(f[0]["severity"], "warning");
  EXPECT_EQ(f[0]["pid"], 5400);
  EXPECT_EQ(r.exit_code, 1) << r.out;
}

TEST(CheckE2E, FdHolderThatNvmlDoesNotListIsReportedWithTheOrphanedMemory) {
  Scratch s;
  FakeProcess worker = Holder(5500, 'S', {"python3", "-c", "worker"});
  std::string proc = s.Proc({worker});
  std::string sc = s.Write("s.yaml", OneGpu("", "    unattributed_mib: 2048\n"));
  RunResult r = Check(sc, proc, "");
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  auto u = FindingsOf(r.json, "unlisted_holder");
  ASSERT_EQ(u.size(), 1u) << r.out;
  EXPECT_EQ(u[0]["pid"], 5500);
  EXPECT_EQ(u[0]["severity"], "warning");
  auto o = FindingsOf(r.json, "orphaned_memory");
  ASSERT_EQ(o.size(), 1u);
  EXPECT_NE(o[0]["message"].get<std::string>().find("5500"), std::string::npos);
  const json& p = r.json["gpus"][0]["processes"][0];
  EXPECT_EQ(p["listed_by_nvml"], false);
  EXPECT_TRUE(p["used_bytes"].is_null());
}

TEST(CheckE2E, ContainerWithoutHostPidNamespaceSaysItIsBlindInsteadOfCallingPidsDead) {
  Scratch s;
  procfs::FixtureOptions o;
  o.pid1_sched = "sleep (812345, #threads: 1)\n";
  o.kthreadd = false;
  std::string proc = s.Proc({}, o);
  std::string sc = s.Write("s.yaml", OneGpu("      - {pid: 812399, used_mib: 4096}\n"));
  RunResult r = Check(sc, proc, "");
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(FindingsOf(r.json, "dead_holder").empty()) << r.out;
  auto f = FindingsOf(r.json, "pid_namespace_blind");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0]["message"].get<std::string>().find("812345"), std::string::npos);
  EXPECT_EQ(r.json["host"]["host_pids_visible"], false);
  EXPECT_EQ(r.json["gpus"][0]["processes"][0]["state"], "unknown") << r.out;  // invisible, not gone
}

// A container with its own PID namespace and procfs (`unshare --pid --fork --mount-proc`, docker
// without --pid=host) on a current kernel: PID 1 says it is PID 1, its cgroup is "/", and there is
// no kthreadd. The PID NVML lists is a host PID: a process here with that number is a stranger,
// not the holder, and not finding one is no death.
TEST(CheckE2E, AContainersOwnProcWithoutKthreaddIsBlindThoughPid1LooksLikeInit) {
  Scratch s;
  procfs::FixtureOptions o;
  o.pid1_sched = "sh (1, #threads: 1)\n";
  o.pid1_cgroup = "0::/\n";
  o.kthreadd = false;
  FakeProcess stranger = Holder(4001, 'S', {"bash"});
  stranger.fd_targets.clear();
  std::string proc = s.Proc({stranger}, o);
  std::string sc =
      s.Write("s.yaml", OneGpu("      - {pid: 4001, used_mib: 4096}\n      - {pid: 812399, used_mib: 4096}\n"));
  RunResult r = Check(sc, proc, "");
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(FindingsOf(r.json, "dead_holder").empty()) << r.out;
  auto f = FindingsOf(r.json, "pid_namespace_blind");
  ASSERT_EQ(f.size(), 1u) << r.out;
  EXPECT_NE(f[0]["message"].get<std::string>().find("no PID 2"), std::string::npos) << f[0].dump();
  for (const auto& p : r.json["gpus"][0]["processes"]) {
    EXPECT_EQ(p["state"], "unknown") << p.dump();
    EXPECT_TRUE(p["command"].is_null()) << p.dump();  // not the stranger's `bash`
  }
}

// `--proc-root /host/proc` inside a container: that procfs shows the host's PIDs (kthreadd is its
// PID 2), though vramwatch's own NSpid there has two levels; a listed PID missing from it is dead,
// and vramwatch's own /dev/nvidia0 (its "self" in that procfs, not getpid()) is no holder.
TEST(CheckE2E, TheHostsProcMountedIntoAContainerIsNotBlindAndSkipsVramwatchItself) {
  Scratch s;
  FakeProcess self = Holder(90210, 'S', {"vramwatch", "check"});
  self.nspid = {90210, 7};
  procfs::FixtureOptions o;
  o.self_pid = 90210;
  std::string proc = s.Proc({self}, o);
  std::string sc = s.Write("s.yaml", OneGpu("      - {pid: 812399, used_mib: 4096}\n"));
  RunResult r = Check(sc, proc, "");
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(FindingsOf(r.json, "pid_namespace_blind").empty()) << r.out;
  EXPECT_EQ(r.json["host"]["host_pids_visible"], true);
  auto d = FindingsOf(r.json, "dead_holder");
  ASSERT_EQ(d.size(), 1u) << r.out;
  EXPECT_EQ(d[0]["pid"], 812399);
  EXPECT_TRUE(FindingsOf(r.json, "unlisted_holder").empty()) << r.out;
  ASSERT_EQ(r.json["gpus"][0]["processes"].size(), 1u) << r.out;
}

TEST(CheckE2E, XidLinesAreMatchedToTheGpuAndHardwareOnesAreCritical) {
  Scratch s;
  std::string proc = s.Proc({});
  std::string klog = s.Write("kern.log",
                             "Nov 29 10:00:00 node kernel: [ 100.1] NVRM: GPU at PCI:0000:3b:00: "
                             "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f60\n"
                             "Nov 29 10:00:01 node kernel: [ 100.2] NVRM: Xid (PCI:0000:3b:00): 13, pid=777, "
                             "name=python3, Graphics Exception\n"
                             "Nov 29 10:00:02 node kernel: [ 100.3] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen "
                             "off the bus.\n"
                             "Nov 29 10:00:03 node kernel: [ 100.4] NVRM: Xid (PCI:0000:99:00): 45, Ch 00000001\n");
  std::string sc = s.Write("s.yaml", OneGpu(""));
  RunResult r = Check(sc, proc, klog);
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  auto x = FindingsOf(r.json, "xid");
  ASSERT_EQ(x.size(), 3u) << r.out;
  EXPECT_EQ(x[0]["severity"], "critical");
  EXPECT_EQ(x[0]["gpu"], "0");
  EXPECT_NE(x[0]["message"].get<std::string>().find("Xid 79"), std::string::npos);
  EXPECT_NE(x[0]["action"].get<std::string>().find("Rule out hardware"), std::string::npos);
  EXPECT_EQ(x[1]["severity"], "warning");
  EXPECT_EQ(x[1]["pid"], 777);
  EXPECT_EQ(x[2]["gpu"], "00000000:99:00.0");  // no such GPU here: keyed by its PCI address
  EXPECT_EQ(r.json["host"]["kernel_log"], klog);
  EXPECT_EQ(r.json["host"]["xid_events"], 3);
}

// On a MIG GPU the driver names the GPU instance an Xid hit; the finding names it too, so the
// operator knows which tenant it concerns.
TEST(CheckE2E, AnXidOnAMigInstanceNamesTheInstance) {
  Scratch s;
  std::string proc = s.Proc({});
  std::string klog = s.Write("kern.log",
                             "[ 100.2] NVRM: Xid (PCI:0000:3b:00 GPU-I:09 GPU-CI:00): 95, pid=777, name=python3, "
                             "Uncontained: FBHUB. RST: Yes, D-RST: No\n"
                             "[ 100.3] NVRM: Xid (PCI:0000:3b:00 GPU-I:03 GPU-CI:00): 95, pid=778, name=python3, "
                             "Uncontained: FBHUB. RST: Yes, D-RST: No\n"
                             "[ 100.4] NVRM: Xid (PCI:0000:3b:00): 13, pid=779, name=python3, Graphics Exception\n");
  std::string sc = s.Write("s.yaml", OneGpu(""));
  RunResult r = Check(sc, proc, klog);
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  auto x = FindingsOf(r.json, "xid");
  ASSERT_EQ(x.size(), 2u) << r.out;
  EXPECT_NE(x[0]["message"].get<std::string>().find("Xid 95 (uncontained memory error (several applications "
                                                    "affected), ROBUST_CHANNEL_UNCONTAINED_ERROR) on GPU 0, MIG GPU "
                                                    "instances 9, 3: 2 times"),
            std::string::npos)
      << x[0]["message"];
  EXPECT_NE(x[1]["message"].get<std::string>().find(") on GPU 0: 1 time"), std::string::npos) << x[1]["message"];
}

// An Xid line cut short is said in a note naming the file, its line and what was expected, not
// dropped in silence; the readable lines around it are still judged.
TEST(CheckE2E, AnXidLineThatCannotBeReadIsNamedInANote) {
  Scratch s;
  std::string proc = s.Proc({});
  std::string klog = s.Write("kern.log",
                             "Nov 29 10:00:01 node kernel: [ 100.2] NVRM: Xid (PCI:0000:3b:00): 13, pid=777, "
                             "name=python3, Graphics Exception\n"
                             "Nov 29 10:00:02 node kernel: [ 100.3] NVRM: Xid (PCI:0000:3b:0\n");
  std::string sc = s.Write("s.yaml", OneGpu(""));
  RunResult r = Check(sc, proc, klog);
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(FindingsOf(r.json, "xid").size(), 1u) << r.out;
  std::string note;
  for (const auto& n : r.json["notes"]) {
    if (n.get<std::string>().find("could not be read") != std::string::npos) note = n.get<std::string>();
  }
  EXPECT_EQ(note, "kernel log " + klog +
                      ": 1 Xid line could not be read and was left out (line 2: \"Nov 29 10:00:02 node kernel: [ "
                      "100.3] NVRM: Xid (PCI:0000:3b:0\"); expected \"NVRM: Xid (PCI:<bus id>): <code>, ...\"")
      << r.json["notes"].dump();
}

TEST(CheckE2E, OlderDriverWithoutMemoryV2StillReportsAndRaisesTheOrphanThreshold) {
  Scratch s;
  std::string proc = s.Proc({Holder(5600)});
  std::string sc = s.Write("s.yaml", R"(driver_version: "470.256.02"
hide_symbols: [nvmlDeviceGetComputeRunningProcesses_v3, nvmlDeviceGetGraphicsRunningProcesses_v3,
               nvmlDeviceGetMPSComputeRunningProcesses_v3, nvmlDeviceGetMemoryInfo_v2,
               nvmlDeviceGetRunningProcessDetailList, nvmlDeviceGetConfComputeMemSizeInfo]
gpus:
  - name: "Tesla V100-PCIE-32GB"
    uuid: "GPU-00000000-1111-2222-3333-444444444444"
    pci_bus_id: "00000000:86:00.0"
    minor: 0
    memory_total_mib: 32768
    memory_reserved_mib: 400
    processes:
      - {pid: 5600, used_mib: 4096, sm_util: 70}
)");
  RunResult r = Check(sc, proc, "", {}, {}, "old-driver");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json& g = r.json["gpus"][0];
  EXPECT_TRUE(g["memory_reserved_bytes"].is_null()) << g.dump();
  EXPECT_EQ(g["processes"][0]["used_bytes"], 4096 * kMiB);
  bool note = false;
  for (const auto& n : r.json["notes"]) note |= n.get<std::string>().find("reserved") != std::string::npos;
  EXPECT_TRUE(note) << r.json["notes"].dump();
  EXPECT_TRUE(FindingsOf(r.json, "orphaned_memory").empty());
}

TEST(CheckE2E, HumanOutputShowsTheTableFindingsAndStatus) {
  Scratch s;
  std::string proc = s.Proc({Holder(5700, 'Z')});
  std::string sc = s.Write("s.yaml", OneGpu("      - {pid: 5700, used_mib: 1024}\n"));
  RunResult r = RunVramwatch({"check", "--nvml-lib", EmulatorLib(), "--proc-root", proc, "--kernel-log", "none"},
                             {{"VRAMWATCH_EMULATOR_SCENARIO", sc}});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("GPU 0  NVIDIA H100 80GB HBM3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("5700"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("zombie_holder"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Status: CRITICAL (exit 2)"), std::string::npos) << r.out;
}

TEST(CheckE2E, TextHeaderShowsASubSecondWindowAsGivenLikeTheJson) {
  Scratch s;
  std::string proc = s.Proc({Holder(5710)});
  std::string sc = s.Write("s.yaml", OneGpu("      - {pid: 5710, used_mib: 1024, sm_util: 50}\n"));
  const std::map<std::string, std::string> env = {{"VRAMWATCH_EMULATOR_SCENARIO", sc}};
  struct Case {
    std::string window, interval, header;
    double seconds;
  };
  for (const Case& c : {Case{"500ms", "100ms", "window 500ms (", 0.5}, Case{"1500ms", "500ms", "window 1500ms (", 1.5},
                        Case{"2s", "1s", "window 2s (", 2.0}}) {
    std::vector<std::string> args = {"check", "--nvml-lib", EmulatorLib(), "--proc-root", proc,      "--kernel-log",
                                     "none",  "--window",   c.window,      "--interval",  c.interval};
    RunResult text = RunVramwatch(args, env);
    EXPECT_EQ(text.exit_code, 0) << c.window << "\n" << text.out << text.err;
    EXPECT_NE(text.out.find(c.header), std::string::npos) << c.window << "\n" << text.out;
    args.push_back("--json");
    RunResult js = RunVramwatch(args, env);
    ASSERT_EQ(js.exit_code, 0) << c.window << "\n" << js.out << js.err;
    // JSON has the span actually sampled: the window, plus the time the last sample took.
    const double sampled = json::parse(js.out)["window_seconds"].get<double>();
    EXPECT_GE(sampled, c.seconds - 0.001) << c.window;
    EXPECT_LT(sampled, c.seconds + 0.5) << c.window;
  }
}

TEST(DemoE2E, ShowsAnOrphanedContextAZombieAndAHealthyProcess) {
  RunResult demo = RunVramwatch({"demo", "--json"}, {});
  ASSERT_EQ(demo.exit_code, 0) << demo.out << demo.err;
  ASSERT_TRUE(demo.json.is_object()) << demo.out;
  ASSERT_EQ(demo.json["schema"], "vramwatch.demo/1");
  // The demo's steps: analyze (leak), analyze (healthy), check.
  const auto& steps = demo.json["steps"];
  ASSERT_EQ(steps.size(), 3u) << demo.out;
  EXPECT_EQ(steps[0]["report"]["gpus"][0]["verdict"], "leak");
  EXPECT_EQ(steps[0]["exit_code"], 1);
  EXPECT_NE(steps[1]["report"]["gpus"][0]["verdict"], "leak");
  EXPECT_EQ(steps[1]["exit_code"], 0);
  ASSERT_EQ(steps[2]["step"], "check");
  EXPECT_EQ(steps[2]["exit_code"], 2);
  RunResult r = demo;
  r.json = steps[2]["report"];
  EXPECT_EQ(FindingsOf(r.json, "orphaned_memory").size(), 1u) << r.out;
  EXPECT_EQ(FindingsOf(r.json, "orphaned_memory")[0]["severity"], "critical");
  EXPECT_EQ(FindingsOf(r.json, "zombie_holder").size(), 1u);
  bool healthy = false;
  for (const auto& p : r.json["gpus"][0]["processes"]) healthy |= p["pid"] == 41877 && p["state"] == "R";
  EXPECT_TRUE(healthy);
  for (const auto& f : r.json["findings"]) {
    if (f["pid"] == 41877) {
      EXPECT_EQ(f["severity"], "ok") << f.dump();  // healthy: nothing to act on
    }
  }
}

// The zombie's parent is a launcher that has not reaped it, so the demo shows the usual step (end
// the parent), not the rare one of a zombie whose parent is PID 1.
TEST(DemoE2E, TheZombiesStepEndsItsLauncherParent) {
  RunResult demo = RunVramwatch({"demo", "--json"}, {});
  ASSERT_EQ(demo.exit_code, 0) << demo.out << demo.err;
  const auto zombies = FindingsOf(demo.json["steps"][2]["report"], "zombie_holder");
  ASSERT_EQ(zombies.size(), 1u) << demo.out;
  EXPECT_NE(zombies[0]["action"].get<std::string>().find(
                "end its parent, PID 41980 `python3 launcher.py --workers 4`, with SIGTERM (`kill -TERM 41980`)"),
            std::string::npos)
      << zombies[0].dump();
}

// The healthy run is 5h 59m long: its advice does not ask for a recording of "an hour or more".
TEST(DemoE2E, TheHealthyRunsAdviceFitsItsLength) {
  RunResult demo = RunVramwatch({"demo", "--json"}, {});
  ASSERT_EQ(demo.exit_code, 0) << demo.out << demo.err;
  const auto& healthy = demo.json["steps"][1]["report"]["gpus"][0];
  for (const auto& step : healthy["next_steps"]) {
    EXPECT_EQ(step.get<std::string>().find("an hour or more"), std::string::npos) << healthy.dump();
  }
}

// The check step's command, as printed, runs again on the files --keep keeps (with the emulator's
// variables); without --keep the demo says the files go and how to keep them.
TEST(DemoE2E, ThePrintedCheckCommandRunsOnTheKeptFiles) {
  RunResult plain = RunVramwatch({"demo"}, {});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("is deleted when the demo ends: `vramwatch demo --keep` keeps it"), std::string::npos)
      << plain.out;
  RunResult kept = RunVramwatch({"demo", "--keep"}, {});
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  const size_t at = kept.out.find("$ VRAMWATCH_NVML_LIB=");
  ASSERT_NE(at, std::string::npos) << kept.out;
  const std::string command = kept.out.substr(at + 2, kept.out.find('\n', at) - at - 2);
  EXPECT_NE(command.find("VRAMWATCH_EMULATOR_SCENARIO="), std::string::npos) << command;
  EXPECT_EQ(kept.out.find("is deleted when the demo ends"), std::string::npos) << kept.out;
  const int status = std::system(("cd / && " + command + " > /dev/null 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  EXPECT_EQ(WEXITSTATUS(status), 2) << "CRITICAL, as in the demo: " << command;
  const std::string marker = "demo: scenario and fixtures kept in ";
  const size_t dir_at = kept.out.find(marker);
  ASSERT_NE(dir_at, std::string::npos) << kept.out;
  std::filesystem::remove_all(
      kept.out.substr(dir_at + marker.size(), kept.out.find('\n', dir_at) - dir_at - marker.size()));
}

TEST(DemoE2E, KeepSaysWhereItKeptTheFilesInJsonAndText) {
  RunResult demo = RunVramwatch({"demo", "--json", "--keep"}, {});
  ASSERT_EQ(demo.exit_code, 0) << demo.out << demo.err;
  ASSERT_TRUE(demo.json.contains("kept_in")) << demo.out;
  const std::string dir = demo.json["kept_in"];
  EXPECT_TRUE(std::filesystem::is_directory(dir)) << dir;
  EXPECT_NE(demo.err.find("kept in " + dir), std::string::npos) << demo.err;
  std::filesystem::remove_all(dir);
  RunResult text = RunVramwatch({"demo", "--keep"}, {});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::string marker = "demo: scenario and fixtures kept in ";
  const size_t at = text.out.find(marker);
  ASSERT_NE(at, std::string::npos) << text.out;
  const std::string text_dir = text.out.substr(at + marker.size(), text.out.find('\n', at) - at - marker.size());
  EXPECT_TRUE(std::filesystem::is_directory(text_dir)) << text_dir;
  std::filesystem::remove_all(text_dir);
  RunResult plain = RunVramwatch({"demo", "--json"}, {});
  EXPECT_FALSE(plain.json.contains("kept_in")) << "only with --keep";
}

}  // namespace
}  // namespace vw::e2e
