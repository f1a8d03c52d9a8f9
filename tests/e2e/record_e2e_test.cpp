// `vramwatch record` end to end on the NVML emulator: when it stops, how often it lists
// processes, what it writes for MPS clients and for a GPU whose identity is not known yet, how a
// write that fails ends it, and how `analyze` reads what it wrote (appended recordings included).
// The other record tests (names, MIG, a GPU that stops answering) are in watch_e2e_test.cpp.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "e2e_harness.h"

namespace vw::e2e {
namespace {

using nlohmann::json;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The record lines of a recording (the header left out), parsed.
std::vector<json> RecordLines(const std::string& path) {
  std::vector<json> out;
  std::istringstream lines(ReadAll(path));
  std::string line;
  while (std::getline(lines, line)) {
    json j = json::parse(line);
    if (!j.contains("schema")) out.push_back(std::move(j));
  }
  return out;
}

constexpr const char* kOneGpu = R"(driver_version: "550.54.15"
gpus:
  - name: "GPU A"
    uuid: "GPU-00000000-0000-0000-0000-00000000000a"
    pci_bus_id: "00000000:3B:00.0"
    memory_total_mib: 24576
    processes:
      - {pid: 5100, type: compute, name: "trainer", used_mib: 1000, sm_util: 20}
)";

// --duration ends the recording at its deadline, not at the first tick after it: with a 60 s
// interval a 1 s recording holds one sample and stops well before the next would be due.
TEST(RecordE2E, StopsAtItsDurationNotAtTheNextTick) {
  Scratch s;
  const std::string scenario = s.Write("scenario.yaml", kOneGpu);
  const std::string rec = s.dir() + "/rec.jsonl";
  RunResult r =
      RunVramwatch({"record", "--nvml-lib", EmulatorLib(), "--interval", "60s", "--duration", "1s", "--output", rec},
                   {{"VRAMWATCH_EMULATOR_SCENARIO", scenario}}, 20);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(r.seconds, 1 + 5.0) << "a 1 s recording ran until the next 60 s tick";
  EXPECT_EQ(RecordLines(rec).size(), 1u) << ReadAll(rec);
}

// A process list is due every --process-interval, within half a sampling interval: with samples
// every 330 ms and lists every 660 ms, every other sample has one (never two in a row without).
TEST(RecordE2E, ListsProcessesEveryProcessInterval) {
  Scratch s;
  const std::string scenario = s.Write("scenario.yaml", kOneGpu);
  const std::string rec = s.dir() + "/rec.jsonl";
  RunResult r = RunVramwatch({"record", "--nvml-lib", EmulatorLib(), "--interval", "330ms", "--process-interval",
                              "660ms", "--duration", "4s", "--output", rec},
                             {{"VRAMWATCH_EMULATOR_SCENARIO", scenario}}, 30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<json> lines = RecordLines(rec);
  ASSERT_GE(lines.size(), 6u) << ReadAll(rec);
  EXPECT_TRUE(lines[0].contains("processes")) << "the first sample lists the processes";
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_TRUE(lines[i].contains("processes") || lines[i - 1].contains("processes"))
        << "samples " << i - 1 << " and " << i << " both without a process list\n"
        << ReadAll(rec);
  }
}

// MPS clients keep their type, spelled as `check` shows it: "M", "C+M"; graphics stays "G".
TEST(RecordE2E, WritesMpsProcessTypesAsCheckShowsThem) {
  Scratch s;
  const std::string scenario = s.Write("scenario.yaml", R"(driver_version: "550.54.15"
gpus:
  - name: "GPU A"
    uuid: "GPU-00000000-0000-0000-0000-00000000000a"
    pci_bus_id: "00000000:3B:00.0"
    memory_total_mib: 24576
    processes:
      - {pid: 5100, type: mps, name: "mps-client", used_mib: 1000, sm_util: 20}
      - {pid: 5101, type: graphics, name: "Xorg", used_mib: 100}
      - {pid: 5102, type: [compute, mps], name: "both", used_mib: 100}
)");
  const std::string rec = s.dir() + "/rec.jsonl";
  RunResult r =
      RunVramwatch({"record", "--nvml-lib", EmulatorLib(), "--interval", "200ms", "--duration", "1s", "--output", rec},
                   {{"VRAMWATCH_EMULATOR_SCENARIO", scenario}}, 30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int lists = 0;
  for (const json& j : RecordLines(rec)) {
    if (!j.contains("processes")) continue;
    ++lists;
    std::map<int64_t, json> type;
    for (const json& p : j["processes"]) type[p["pid"].get<int64_t>()] = p["type"];
    EXPECT_EQ(type[5100], "M") << j.dump();
    EXPECT_EQ(type[5101], "G") << j.dump();
    EXPECT_EQ(type[5102], "C+M") << j.dump();
  }
  EXPECT_GT(lists, 0) << ReadAll(rec);
}

// A GPU whose handle cannot be had at first is written with a null uuid, name and bus id (never
// ""), and `analyze` takes its identity from the later lines that carry it.
TEST(RecordE2E, WritesNullForAnIdentityNotKnownYetAndAnalyzeTakesItFromLaterLines) {
  Scratch s;
  const std::string scenario = s.Write("scenario.yaml", R"(driver_version: "550.54.15"
gpus:
  - name: "GPU A"
    uuid: "GPU-00000000-0000-0000-0000-00000000000a"
    pci_bus_id: "00000000:3B:00.0"
    memory_total_mib: 24576
  - name: "GPU B"
    uuid: "GPU-00000000-0000-0000-0000-00000000000b"
    pci_bus_id: "00000000:3C:00.0"
    memory_total_mib: 24576
    errors:
      - {function: nvmlDeviceGetHandleByIndex, code: 15, from_s: 0, to_s: 1.0}
)");
  const std::string rec = s.dir() + "/rec.jsonl";
  RunResult r = RunVramwatch(
      {"record", "--nvml-lib", EmulatorLib(), "--interval", "200ms", "--duration", "2500ms", "--output", rec},
      {{"VRAMWATCH_EMULATOR_SCENARIO", scenario}}, 30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadAll(rec).find("\"\""), std::string::npos) << "no empty string in\n" << ReadAll(rec);
  bool unknown_first = false, known_later = false;
  for (const json& j : RecordLines(rec)) {
    if (j["gpu"] != "1") continue;
    if (j["uuid"].is_null()) {
      EXPECT_FALSE(known_later) << "identity lost again: " << j.dump();
      EXPECT_TRUE(j["name"].is_null()) << j.dump();
      EXPECT_TRUE(j["pci_bus_id"].is_null()) << j.dump();
      unknown_first = true;
    } else {
      EXPECT_EQ(j["uuid"], "GPU-00000000-0000-0000-0000-00000000000b") << j.dump();
      known_later = true;
    }
  }
  ASSERT_TRUE(unknown_first && known_later) << ReadAll(rec);
  RunResult a = RunVramwatch({"analyze", "--json", rec}, {}, 60);
  ASSERT_TRUE(a.json.is_object()) << a.out << a.err;
  bool found = false;
  for (const json& g : a.json["gpus"]) {
    if (g["gpu"] != "1" || !g["pid"].is_null()) continue;
    found = true;
    EXPECT_EQ(g["uuid"], "GPU-00000000-0000-0000-0000-00000000000b") << g.dump();
    EXPECT_EQ(g["name"], "GPU B") << g.dump();
    EXPECT_EQ(g["pci_bus_id"], "00000000:3C:00.0") << g.dump();
  }
  EXPECT_TRUE(found) << a.out;
}

// A file size limit (ulimit -f) reached while recording: the write fails (EFBIG) and record exits
// 3 saying so, as for a full disk, instead of SIGXFSZ killing it without a word.
TEST(RecordE2E, AFileSizeLimitEndsTheRecordingWithAMessage) {
  Scratch s;
  const std::string scenario = s.Write("scenario.yaml", kOneGpu);
  const std::string rec = s.dir() + "/rec.jsonl";
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  rlimit limited = before;
  limited.rlim_cur = 4096;                           // a dozen lines
  auto old_handler = std::signal(SIGXFSZ, SIG_DFL);  // as a shell leaves it for the recorder
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  RunResult r =
      RunVramwatch({"record", "--nvml-lib", EmulatorLib(), "--interval", "100ms", "--duration", "20s", "--output", rec},
                   {{"VRAMWATCH_EMULATOR_SCENARIO", scenario}}, 30);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &before), 0);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("vramwatch record: write recording to " + rec + ": "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("too large"), std::string::npos) << r.err;
}

// A full standard output is named as such, not as "-".
TEST(RecordE2E, AFullStandardOutputIsNamed) {
  Scratch s;
  const std::string scenario = s.Write("scenario.yaml", kOneGpu);
  const std::string err = s.dir() + "/err.txt";
  const std::string cmd = "VRAMWATCH_EMULATOR_SCENARIO='" + scenario + "' '" + std::string(VRAMWATCH_BINARY_DIR) +
                          "/vramwatch' record --nvml-lib '" + EmulatorLib() +
                          "' --interval 100ms --duration 2s > /dev/full 2> '" + err + "'";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 3) << ReadAll(err);
  EXPECT_NE(ReadAll(err).find("write recording to standard output: "), std::string::npos) << ReadAll(err);
}

// NVML that cannot be used gets check's hint about the driver and the library flags.
TEST(RecordE2E, NvmlThatCannotBeUsedGetsChecksHint) {
  Scratch s;
  RunResult r = RunVramwatch({"record", "--nvml-lib", s.dir() + "/no-such-libnvidia-ml.so.1", "--duration", "1s",
                              "--output", s.dir() + "/r.jsonl"},
                             {}, 30);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("cannot use NVML: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(is the NVIDIA driver installed and loaded? --nvml-lib or VRAMWATCH_NVML_LIB choose another "
                       "library)"),
            std::string::npos)
      << r.err;
}

// `record > a.jsonl; record >> a.jsonl`: analyze reads both recordings of the host as one.
TEST(RecordE2E, AnalyzeReadsTwoRecordingsAppendedToOneFile) {
  Scratch s;
  const std::string scenario = s.Write("scenario.yaml", kOneGpu);
  std::string both;
  size_t samples = 0;
  for (const char* name : {"a.jsonl", "b.jsonl"}) {
    const std::string rec = s.dir() + "/" + name;
    RunResult r = RunVramwatch({"record", "--nvml-lib", EmulatorLib(), "--interval", "200ms", "--duration", "1s",
                                "--hostname", "node1", "--output", rec},
                               {{"VRAMWATCH_EMULATOR_SCENARIO", scenario}}, 30);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    both += ReadAll(rec);
    samples += RecordLines(rec).size();
  }
  const std::string appended = s.Write("both.jsonl", both);
  // A few seconds of samples are too few to judge (exit 3, insufficient_data), but every one is read.
  RunResult a = RunVramwatch({"analyze", "--json", appended}, {}, 60);
  EXPECT_EQ(a.err.find("both.jsonl:"), std::string::npos) << a.err;
  ASSERT_TRUE(a.json.is_object()) << a.out << a.err;
  ASSERT_EQ(a.json["gpus"].size(), 1u) << a.out;
  EXPECT_EQ(a.json["gpus"][0]["samples"], samples) << a.out;
}

}  // namespace
}  // namespace vw::e2e
