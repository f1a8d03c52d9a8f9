// The emulator speaks NVML: exports, two-call lists, version checks, sentinels, refcounted init,
// error and hang injection, scenario time, and clear errors for bad scenario files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "scenario.h"
#include "sources/nvml/emulator_test_support.h"
#include "sources/nvml/nvml_loader.h"

namespace vw::emulator {
namespace {

namespace api = vw::nvml::api;
using ::testing::HasSubstr;
using vw::nvml::testing::EmulatedNvml;

constexpr unsigned long long kMiB = 1024ull * 1024ull;

std::unique_ptr<vw::nvml::NvmlLibrary> Load(const EmulatedNvml& emu) {
  auto lib = vw::nvml::NvmlLibrary::Open(emu.library());
  EXPECT_TRUE(lib.ok()) << lib.status().ToString();
  return lib.ok() ? std::move(*lib) : nullptr;
}

constexpr const char* kTwoProcs = R"(
gpus:
  - uuid: GPU-1
    memory_total_mib: 1000
    memory_reserved_mib: 100
    unattributed_mib: 10
    processes:
      - {pid: 11, used_mib: 100}
      - {pid: 12, used_mib: 200, type: graphics}
)";

TEST(EmulatorTest, ExportsEveryEntryPointOfTheTable) {
  EmulatedNvml emu(kTwoProcs);
  auto lib = Load(emu);
  ASSERT_TRUE(lib);
  for (const auto& e : vw::nvml::AllEntryPoints()) EXPECT_TRUE(lib->Has(e.symbol)) << e.symbol;
}

TEST(EmulatorTest, OlderDriverBuildsHideExactlyTheirSymbols) {
  struct Case {
    const char* variant;
    std::vector<std::string> hidden;
  } cases[] = {
      {"old-driver",
       {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v3",
        "nvmlDeviceGetMPSComputeRunningProcesses_v3", "nvmlDeviceGetMemoryInfo_v2",
        "nvmlDeviceGetRunningProcessDetailList", "nvmlDeviceGetConfComputeMemSizeInfo"}},
      {"r535", {"nvmlDeviceGetRunningProcessDetailList"}},
  };
  for (const auto& c : cases) {
    EmulatedNvml emu(kTwoProcs, c.variant);
    auto lib = Load(emu);
    ASSERT_TRUE(lib);
    for (const auto& e : vw::nvml::AllEntryPoints()) {
      bool hidden = std::find(c.hidden.begin(), c.hidden.end(), e.symbol) != c.hidden.end();
      EXPECT_EQ(lib->Has(e.symbol), !hidden) << c.variant << " " << e.symbol;
    }
  }
}

TEST(EmulatorTest, HideSymbolsThatDoNotMatchTheBuildFailInit) {
  EmulatedNvml emu(std::string(kTwoProcs) + "hide_symbols: [nvmlDeviceGetMemoryInfo_v2]\n");
  auto lib = Load(emu);
  ASSERT_TRUE(lib);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(lib->fn().nvmlInit_v2(), api::NVML_ERROR_UNKNOWN);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("hide_symbols [nvmlDeviceGetMemoryInfo_v2] does not match this emulator build 'full'"));
}

TEST(EmulatorTest, ProcessListsFollowTheTwoCallProtocol) {
  EmulatedNvml emu(kTwoProcs);
  auto lib = Load(emu);
  ASSERT_TRUE(lib);
  const auto& f = lib->fn();
  ASSERT_EQ(f.nvmlInit_v2(), api::NVML_SUCCESS);
  api::nvmlDevice_t d = nullptr;
  ASSERT_EQ(f.nvmlDeviceGetHandleByIndex_v2(0, &d), api::NVML_SUCCESS);
  unsigned n = 0;
  EXPECT_EQ(f.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, nullptr), api::NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(n, 1u);
  api::nvmlProcessInfo_t infos[4];
  n = 4;
  ASSERT_EQ(f.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, infos), api::NVML_SUCCESS);
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(infos[0].pid, 11u);
  EXPECT_EQ(infos[0].usedGpuMemory, 100 * kMiB);
  EXPECT_EQ(infos[0].gpuInstanceId, 0xFFFFFFFFu);  // MIG off
  EXPECT_EQ(infos[0].computeInstanceId, 0xFFFFFFFFu);
  // v1 elements are 16 bytes: pid and memory only.
  api::nvmlProcessInfo_v1_t v1[2];
  n = 2;
  ASSERT_EQ(f.nvmlDeviceGetGraphicsRunningProcesses(d, &n, v1), api::NVML_SUCCESS);
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(v1[0].pid, 12u);
  EXPECT_EQ(v1[0].usedGpuMemory, 200 * kMiB);
  // Nothing running: SUCCESS with a count of 0.
  n = 0;
  EXPECT_EQ(f.nvmlDeviceGetMPSComputeRunningProcesses_v3(d, &n, nullptr), api::NVML_SUCCESS);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(f.nvmlShutdown(), api::NVML_SUCCESS);
}

TEST(EmulatorTest, MemoryV2NeedsTheStructVersionAndV1CountsReservedAsUsed) {
  EmulatedNvml emu(kTwoProcs);
  auto lib = Load(emu);
  ASSERT_TRUE(lib);
  const auto& f = lib->fn();
  ASSERT_EQ(f.nvmlInit_v2(), api::NVML_SUCCESS);
  api::nvmlDevice_t d = nullptr;
  ASSERT_EQ(f.nvmlDeviceGetHandleByIndex_v2(0, &d), api::NVML_SUCCESS);
  api::nvmlMemory_v2_t m2{};
  m2.version = 2;  // the documented pitfall
  EXPECT_EQ(f.nvmlDeviceGetMemoryInfo_v2(d, &m2), api::NVML_ERROR_FUNCTION_NOT_FOUND);
  m2.version = 0x02000028;
  ASSERT_EQ(f.nvmlDeviceGetMemoryInfo_v2(d, &m2), api::NVML_SUCCESS);
  EXPECT_EQ(m2.total, 1000 * kMiB);
  EXPECT_EQ(m2.reserved, 100 * kMiB);
  EXPECT_EQ(m2.used, 310 * kMiB);
  EXPECT_EQ(m2.free, 590 * kMiB);
  api::nvmlMemory_t m1{};
  ASSERT_EQ(f.nvmlDeviceGetMemoryInfo(d, &m1), api::NVML_SUCCESS);
  EXPECT_EQ(m1.used, 410 * kMiB);
  EXPECT_EQ(m1.total, m1.used + m1.free);
}

TEST(EmulatorTest, DeviceUsedIsCappedAtTotalMinusReserved) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-full
    memory_total_mib: 1000
    memory_reserved_mib: 100
    processes: [{pid: 5, used_mib: 5000}]
)");
  auto lib = Load(emu);
  const auto& f = lib->fn();
  ASSERT_EQ(f.nvmlInit_v2(), api::NVML_SUCCESS);
  api::nvmlDevice_t d = nullptr;
  ASSERT_EQ(f.nvmlDeviceGetHandleByIndex_v2(0, &d), api::NVML_SUCCESS);
  api::nvmlMemory_v2_t m{};
  m.version = api::kMemoryV2Version;
  ASSERT_EQ(f.nvmlDeviceGetMemoryInfo_v2(d, &m), api::NVML_SUCCESS);
  EXPECT_EQ(m.used, 900 * kMiB);
  EXPECT_EQ(m.free, 0u);
}

TEST(EmulatorTest, InitIsReferenceCounted) {
  EmulatedNvml emu(kTwoProcs);
  auto lib = Load(emu);
  const auto& f = lib->fn();
  unsigned n = 0;
  EXPECT_EQ(f.nvmlDeviceGetCount_v2(&n), api::NVML_ERROR_UNINITIALIZED);
  ASSERT_EQ(f.nvmlInit_v2(), api::NVML_SUCCESS);
  ASSERT_EQ(f.nvmlInitWithFlags(0), api::NVML_SUCCESS);
  EXPECT_EQ(f.nvmlShutdown(), api::NVML_SUCCESS);
  EXPECT_EQ(f.nvmlDeviceGetCount_v2(&n), api::NVML_SUCCESS);  // one init still open
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(f.nvmlShutdown(), api::NVML_SUCCESS);
  EXPECT_EQ(f.nvmlDeviceGetCount_v2(&n), api::NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(f.nvmlShutdown(), api::NVML_SUCCESS);  // extra shutdowns are harmless
}

TEST(EmulatorTest, ErrorStringsMatchNvidiaTexts) {
  EmulatedNvml emu(kTwoProcs);
  auto lib = Load(emu);
  const auto& f = lib->fn();
  EXPECT_STREQ(f.nvmlErrorString(api::NVML_ERROR_GPU_IS_LOST), "GPU is lost");
  EXPECT_STREQ(f.nvmlErrorString(api::NVML_ERROR_NO_PERMISSION), "Insufficient Permissions");
  EXPECT_STREQ(f.nvmlErrorString(api::NVML_ERROR_FUNCTION_NOT_FOUND), "Function Not Found");
  EXPECT_STREQ(f.nvmlErrorString(api::NVML_ERROR_UNKNOWN), "Unknown Error");
}

TEST(EmulatorTest, InjectedErrorsApplyInTheirTimeWindowOnly) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-e
    memory_total_mib: 1000
    errors: [{function: nvmlDeviceGetMemoryInfo, code: 15, from_s: 10, to_s: 20}]
)");
  auto lib = Load(emu);
  const auto& f = lib->fn();
  ASSERT_EQ(f.nvmlInit_v2(), api::NVML_SUCCESS);
  api::nvmlDevice_t d = nullptr;
  ASSERT_EQ(f.nvmlDeviceGetHandleByIndex_v2(0, &d), api::NVML_SUCCESS);
  api::nvmlMemory_v2_t m{};
  m.version = api::kMemoryV2Version;
  api::nvmlMemory_t m1{};
  EXPECT_EQ(f.nvmlDeviceGetMemoryInfo_v2(d, &m), api::NVML_SUCCESS);
  emu.SetTime(10);
  // A base name matches every version of the call.
  EXPECT_EQ(f.nvmlDeviceGetMemoryInfo_v2(d, &m), api::NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(f.nvmlDeviceGetMemoryInfo(d, &m1), api::NVML_ERROR_GPU_IS_LOST);
  emu.SetTime(20);
  EXPECT_EQ(f.nvmlDeviceGetMemoryInfo_v2(d, &m), api::NVML_SUCCESS);
}

TEST(EmulatorTest, TimeScaleRunsTheScenarioFaster) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-t
    memory_total_mib: 100000
    unattributed_mib: [[0, 0], [100, 1000]]
)");
  unsetenv("VRAMWATCH_EMULATOR_CLOCK_FILE");
  setenv("VRAMWATCH_EMULATOR_TIME_SCALE", "50", 1);
  auto lib = Load(emu);
  const auto& f = lib->fn();
  ASSERT_EQ(f.nvmlInit_v2(), api::NVML_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // 20 scenario seconds
  api::nvmlDevice_t d = nullptr;
  ASSERT_EQ(f.nvmlDeviceGetHandleByIndex_v2(0, &d), api::NVML_SUCCESS);
  api::nvmlMemory_t m{};
  ASSERT_EQ(f.nvmlDeviceGetMemoryInfo(d, &m), api::NVML_SUCCESS);
  EXPECT_GE(m.used, 200 * kMiB);  // t >= 20 s
  EXPECT_LT(m.used, 600 * kMiB);  // and well short of 60 s even on a slow machine
  unsetenv("VRAMWATCH_EMULATOR_TIME_SCALE");
}

TEST(EmulatorTest, HangMakesTheCallSleepUntilTheWindowEnds) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-h
    memory_total_mib: 1000
    hangs: [{function: nvmlDeviceGetUUID, at_s: 0, seconds: 5}]
)");
  unsetenv("VRAMWATCH_EMULATOR_CLOCK_FILE");
  setenv("VRAMWATCH_EMULATOR_TIME_SCALE", "10", 1);  // 5 scenario seconds = 0.5 s
  auto lib = Load(emu);
  const auto& f = lib->fn();
  ASSERT_EQ(f.nvmlInit_v2(), api::NVML_SUCCESS);
  api::nvmlDevice_t d = nullptr;
  ASSERT_EQ(f.nvmlDeviceGetHandleByIndex_v2(0, &d), api::NVML_SUCCESS);
  char uuid[96];
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(f.nvmlDeviceGetUUID(d, uuid, sizeof uuid), api::NVML_SUCCESS);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(350));
  EXPECT_LT(took, std::chrono::milliseconds(2000));
  start = std::chrono::steady_clock::now();
  EXPECT_EQ(f.nvmlDeviceGetUUID(d, uuid, sizeof uuid), api::NVML_SUCCESS);  // window over
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
  unsetenv("VRAMWATCH_EMULATOR_TIME_SCALE");
}

TEST(EmulatorTest, MigDevicesCarryInstanceIdsAndOwnMemory) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-m
    memory_total_mib: 81559
    memory_reserved_mib: 479
    mig_devices:
      - {gpu_instance_id: 3, compute_instance_id: 1, uuid: MIG-x, memory_total_mib: 40448, processes: [{pid: 9, used_mib: 7}]}
)");
  auto lib = Load(emu);
  const auto& f = lib->fn();
  ASSERT_EQ(f.nvmlInit_v2(), api::NVML_SUCCESS);
  api::nvmlDevice_t d = nullptr, m = nullptr;
  ASSERT_EQ(f.nvmlDeviceGetHandleByIndex_v2(0, &d), api::NVML_SUCCESS);
  unsigned cur = 9, pend = 9, max = 0;
  ASSERT_EQ(f.nvmlDeviceGetMigMode(d, &cur, &pend), api::NVML_SUCCESS);
  EXPECT_EQ(cur, 1u);
  ASSERT_EQ(f.nvmlDeviceGetMaxMigDeviceCount(d, &max), api::NVML_SUCCESS);
  EXPECT_EQ(max, 7u);
  ASSERT_EQ(f.nvmlDeviceGetMigDeviceHandleByIndex(d, 0, &m), api::NVML_SUCCESS);
  EXPECT_EQ(f.nvmlDeviceGetMigDeviceHandleByIndex(d, 1, &m), api::NVML_ERROR_NOT_FOUND);
  ASSERT_EQ(f.nvmlDeviceGetMigDeviceHandleByIndex(d, 0, &m), api::NVML_SUCCESS);
  unsigned gi = 0, is_mig = 0;
  ASSERT_EQ(f.nvmlDeviceGetGpuInstanceId(m, &gi), api::NVML_SUCCESS);
  EXPECT_EQ(gi, 3u);
  ASSERT_EQ(f.nvmlDeviceIsMigDeviceHandle(m, &is_mig), api::NVML_SUCCESS);
  EXPECT_EQ(is_mig, 1u);
  api::nvmlProcessInfo_t p[2];
  unsigned n = 2;
  ASSERT_EQ(f.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, p), api::NVML_SUCCESS);
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(p[0].gpuInstanceId, 3u);
  EXPECT_EQ(p[0].computeInstanceId, 1u);
  api::nvmlUtilization_t u{};
  EXPECT_EQ(f.nvmlDeviceGetUtilizationRates(d, &u), api::NVML_ERROR_NOT_SUPPORTED);
}

// The compute instances of one GPU instance share its memory: each reports the instance's whole
// use, as NVML does, and the GPU counts it once.
TEST(EmulatorTest, ComputeInstancesOfOneGpuInstanceReportItsWholeUse) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-m
    memory_total_mib: 81559
    memory_reserved_mib: 479
    mig_devices:
      - {gpu_instance_id: 3, compute_instance_id: 0, uuid: MIG-a, memory_total_mib: 40448, processes: [{pid: 9, used_mib: 7}]}
      - {gpu_instance_id: 3, compute_instance_id: 1, uuid: MIG-b, memory_total_mib: 40448, processes: [{pid: 10, used_mib: 5}]}
      - {gpu_instance_id: 5, compute_instance_id: 0, uuid: MIG-c, memory_total_mib: 20096, processes: [{pid: 11, used_mib: 2}]}
)");
  auto lib = Load(emu);
  const auto& f = lib->fn();
  ASSERT_EQ(f.nvmlInit_v2(), api::NVML_SUCCESS);
  api::nvmlDevice_t d = nullptr;
  ASSERT_EQ(f.nvmlDeviceGetHandleByIndex_v2(0, &d), api::NVML_SUCCESS);
  const unsigned long long expect[] = {12 * kMiB, 12 * kMiB, 2 * kMiB};
  for (unsigned i = 0; i < 3; ++i) {
    api::nvmlDevice_t m = nullptr;
    ASSERT_EQ(f.nvmlDeviceGetMigDeviceHandleByIndex(d, i, &m), api::NVML_SUCCESS);
    api::nvmlMemory_t mem{};
    ASSERT_EQ(f.nvmlDeviceGetMemoryInfo(m, &mem), api::NVML_SUCCESS);
    EXPECT_EQ(mem.used, expect[i]) << "MIG device " << i;
  }
  api::nvmlMemory_t whole{};
  ASSERT_EQ(f.nvmlDeviceGetMemoryInfo(d, &whole), api::NVML_SUCCESS);
  EXPECT_EQ(whole.used, (14 + 479) * kMiB) << "the v1 call counts the reserved memory as used";
}

TEST(EmulatorTest, DeliversScenarioXidsAsEventsOnceEach) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-x0
    memory_total_mib: 1000
    xid: [{t: 5, code: 31}]
  - uuid: GPU-x1
    memory_total_mib: 1000
    xid: [{t: 40, code: 79}, {t: 20, code: 48}]
)");
  auto lib = Load(emu);
  const auto& f = lib->fn();
  ASSERT_EQ(f.nvmlInit_v2(), api::NVML_SUCCESS);
  emu.SetTime(10);  // GPU 0's Xid 31 happened before anyone registered: not recorded
  api::nvmlDevice_t d0 = nullptr, d1 = nullptr;
  ASSERT_EQ(f.nvmlDeviceGetHandleByIndex_v2(0, &d0), api::NVML_SUCCESS);
  ASSERT_EQ(f.nvmlDeviceGetHandleByIndex_v2(1, &d1), api::NVML_SUCCESS);
  unsigned long long supported = 0;
  ASSERT_EQ(f.nvmlDeviceGetSupportedEventTypes(d1, &supported), api::NVML_SUCCESS);
  EXPECT_EQ(supported, api::kEventTypeXidCriticalError);
  api::nvmlEventSet_t set = nullptr;
  ASSERT_EQ(f.nvmlEventSetCreate(&set), api::NVML_SUCCESS);
  EXPECT_EQ(f.nvmlDeviceRegisterEvents(d0, 0x2, set), api::NVML_ERROR_NOT_SUPPORTED);  // DBE not emulated
  ASSERT_EQ(f.nvmlDeviceRegisterEvents(d0, api::kEventTypeXidCriticalError, set), api::NVML_SUCCESS);
  ASSERT_EQ(f.nvmlDeviceRegisterEvents(d1, api::kEventTypeXidCriticalError, set), api::NVML_SUCCESS);
  api::nvmlEventData_t e{};
  EXPECT_EQ(f.nvmlEventSetWait_v2(set, &e, 20), api::NVML_ERROR_TIMEOUT);
  emu.SetTime(45);
  ASSERT_EQ(f.nvmlEventSetWait_v2(set, &e, 0), api::NVML_SUCCESS);  // oldest first
  EXPECT_EQ(e.device, d1);
  EXPECT_EQ(e.eventType, api::kEventTypeXidCriticalError);
  EXPECT_EQ(e.eventData, 48u);
  EXPECT_EQ(e.gpuInstanceId, 0xFFFFFFFFu);
  ASSERT_EQ(f.nvmlEventSetWait_v2(set, &e, 0), api::NVML_SUCCESS);
  EXPECT_EQ(e.eventData, 79u);
  EXPECT_EQ(f.nvmlEventSetWait_v2(set, &e, 10), api::NVML_ERROR_TIMEOUT);
  EXPECT_EQ(f.nvmlEventSetFree(set), api::NVML_SUCCESS);
  EXPECT_EQ(f.nvmlEventSetWait_v2(set, &e, 0), api::NVML_ERROR_INVALID_ARGUMENT);
}

TEST(SeriesTest, InterpolatesAndHoldsTheEnds) {
  Series s({{10, 100}, {20, 300}, {30, 300}});
  struct Case {
    double t, want;
  } cases[] = {{0, 100}, {10, 100}, {15, 200}, {20, 300}, {25, 300}, {99, 300}};
  for (const auto& c : cases) EXPECT_DOUBLE_EQ(s.At(c.t), c.want) << c.t;
}

TEST(ScenarioTest, SubstitutesEnvironmentVariables) {
  setenv("VW_TEST_PID", "4321", 1);
  std::string out, err;
  ASSERT_TRUE(SubstituteEnv("pid ${VW_TEST_PID}!", &out, &err));
  EXPECT_EQ(out, "pid 4321!");
  unsetenv("VW_TEST_UNSET_VAR");
  EXPECT_FALSE(SubstituteEnv("${VW_TEST_UNSET_VAR}", &out, &err));
  EXPECT_THAT(err, HasSubstr("VW_TEST_UNSET_VAR is not set"));
}

TEST(ScenarioTest, BadFilesNameFileLineColumnAndExpectation) {
  unsetenv("VW_TEST_NOT_SET");
  struct Case {
    const char* text;
    const char* want;
  } cases[] = {
      {"gpus:\n  - uuid: G\n    memory_total_mib: lots\n", ":3:23: expected a number for memory_total_mib, got 'lots'"},
      {"gpus:\n  - uuid: G\n    memory_total_mib: 10\n    colour: red\n", ":4:5: unknown key 'colour' in gpus[0]"},
      {"gpus:\n  - uuid: G\n    memory_total_mib: 10\n    processes: [{pid: \"${VW_TEST_NOT_SET}\"}]\n",
       ":4:23: environment variable VW_TEST_NOT_SET is not set"},
      {"gpus:\n  - uuid: G\n    memory_total_mib: 10\n    errors: [{function: nvmlDoesNotExist, code: 3}]\n",
       ":4:25: unknown NVML function 'nvmlDoesNotExist'"},
      {"gpus:\n  - uuid: G\n    memory_total_mib: 10\n    unattributed_mib: [[0, 1], [0, 2]]\n",
       ":4:32: times in unattributed_mib must increase"},
      {"gpus:\n  - memory_total_mib: 10\n", ":2:5: gpus[0] needs 'uuid' and 'memory_total_mib'"},
      {"gpus: [\n", ":2:1: "},
      {"gpus:\n  - uuid: G\n    memory_total_mib: 10\n    processes: [{pid: 1}, {pid: 1}]\n",
       ":4:33: pid 1 listed twice"},
      {"gpus:\n  - uuid: G\n    memory_total_mib: 10\n    processes: [{pid: 1, type: cuda}]\n",
       ":4:32: expected process type compute, graphics or mps, got 'cuda'"},
      {"gpus:\n  - uuid: G\n    memory_total_mib: 100\n    mig_devices:\n"
       "      - {gpu_instance_id: 1, uuid: M1, memory_total_mib: 10}\n"
       "      - {gpu_instance_id: 1, uuid: M2, memory_total_mib: 10}\n",
       ":6:9: gpus[0].mig_devices[1]: gpu_instance_id 1 with compute_instance_id 0 listed twice"},
      {"gpus:\n  - uuid: G\n    memory_total_mib: 100\n    mig_devices:\n"
       "      - {gpu_instance_id: 1, uuid: M1, memory_total_mib: 10}\n"
       "      - {gpu_instance_id: 2, uuid: M1, memory_total_mib: 10}\n",
       ":6:36: gpus[0].mig_devices[1]: uuid M1 used twice"},
      {"gpus:\n  - uuid: G\n    memory_total_mib: 100\n    mig_devices:\n"
       "      - {gpu_instance_id: 1, uuid: M1, memory_total_mib: 10}\n"
       "      - {gpu_instance_id: 1, compute_instance_id: 1, uuid: M2, memory_total_mib: 20}\n",
       ":6:82: gpus[0].mig_devices[1]: the compute instances of GPU instance 1 share its memory, so they need the "
       "same memory_total_mib"},
      {"gpus:\n  - uuid: G\n    memory_total_mib: 100\n    mig_devices:\n"
       "      - {gpu_instance_id: 1, uuid: M1, memory_total_mib: 60}\n"
       "      - {gpu_instance_id: 2, uuid: M2, memory_total_mib: 60}\n",
       ":5:7: gpus[0]: the GPU instances' memory_total_mib add up to more than the GPU's"},
  };
  char dir[] = "/tmp/vw-scenario-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  for (const auto& c : cases) {
    std::string path = std::string(dir) + "/s.yaml";
    std::ofstream(path) << c.text;
    Scenario s;
    std::string err;
    std::vector<std::string> known = {"nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo_v2"};
    EXPECT_FALSE(LoadScenario(path, known, &s, &err)) << c.text;
    EXPECT_THAT(err, HasSubstr(path + c.want)) << c.text;
  }
  std::filesystem::remove_all(dir);
}

TEST(ScenarioTest, AcceptsJson) {
  char dir[] = "/tmp/vw-scenario-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/s.json";
  std::ofstream(path) << R"({"driver_version": "535.104.05", "gpus": [{"uuid": "GPU-j", "memory_total_mib": 2048,
    "processes": [{"pid": 3, "used_mib": [[0, 1], [10, 11]], "type": ["compute", "graphics"]}]}]})";
  Scenario s;
  std::string err;
  ASSERT_TRUE(LoadScenario(path, {}, &s, &err)) << err;
  EXPECT_EQ(s.driver_version, "535.104.05");
  ASSERT_EQ(s.gpus.size(), 1u);
  ASSERT_EQ(s.gpus[0].processes.size(), 1u);
  EXPECT_EQ(s.gpus[0].processes[0].types, unsigned{kCompute | kGraphics});
  EXPECT_DOUBLE_EQ(s.gpus[0].processes[0].used_mib.At(5), 6);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vw::emulator
