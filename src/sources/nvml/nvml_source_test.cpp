#include "sources/nvml/nvml_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>

#include "sources/nvml/emulator_test_support.h"

namespace vw::nvml {
namespace {

using ::testing::Contains;
using testing::EmulatedNvml;
using ::testing::HasSubstr;

constexpr uint64_t kMiB = 1024ull * 1024ull;

std::unique_ptr<NvmlSource> OpenOrDie(const EmulatedNvml& emu,
                                      std::chrono::milliseconds deadline = std::chrono::seconds(5)) {
  SourceOptions o;
  o.library_path = emu.library();
  o.call_deadline = deadline;
  auto src = NvmlSource::Open(o);
  EXPECT_TRUE(src.ok()) << src.status().ToString();
  return src.ok() ? std::move(*src) : nullptr;
}

const ProcessSnapshot* FindPid(const GpuSnapshot& g, int64_t pid) {
  for (const auto& p : g.processes) {
    if (p.pid == pid) return &p;
  }
  return nullptr;
}

constexpr const char* kOneGpu = R"(
driver_version: "550.54.15"
cuda_driver_version: 12040
gpus:
  - name: "NVIDIA H100 80GB HBM3"
    uuid: "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f60"
    pci_bus_id: "00000000:3B:00.0"
    minor: 3
    memory_total_mib: 81559
    memory_reserved_mib: 479
    unattributed_mib: [[0, 0], [30, 12288]]
    utilization_gpu: [[0, 0], [10, 90]]
    bar1_total_mib: 131072
    bar1_used_mib: 5
    processes:
      - pid: 4242
        type: compute
        used_mib: [[0, 0], [20, 10240]]
        sm_util: [[0, 0], [20, 95]]
        end_s: 60
)";

TEST(NvmlSourceTest, ReadsIdentityMemoryAndProcessesFromScenario) {
  EmulatedNvml emu(kOneGpu);
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  ASSERT_EQ(src->gpu_count(), 1u);
  emu.SetTime(15);  // process 7680 MiB, unattributed 6144 MiB
  HostSnapshot h = src->TakeSnapshot();
  EXPECT_EQ(h.driver_version, "550.54.15");
  EXPECT_EQ(h.cuda_driver_version, 12040);
  ASSERT_EQ(h.gpus.size(), 1u);
  const GpuSnapshot& g = h.gpus[0];
  EXPECT_TRUE(g.errors.empty()) << g.errors[0];
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.uuid, "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f60");
  EXPECT_EQ(g.pci_bus_id, "00000000:3B:00.0");
  EXPECT_EQ(g.minor, 3u);
  EXPECT_EQ(g.memory_total_bytes, 81559 * kMiB);
  EXPECT_EQ(g.memory_reserved_bytes, 479 * kMiB);
  EXPECT_EQ(g.memory_used_bytes, (7680 + 6144) * kMiB);
  EXPECT_EQ(g.memory_free_bytes, (81559 - 479 - 7680 - 6144) * kMiB);
  EXPECT_EQ(g.bar1_total_bytes, 131072 * kMiB);
  EXPECT_EQ(g.bar1_used_bytes, 5 * kMiB);
  ASSERT_TRUE(g.gpu_util_ratio.has_value());
  EXPECT_DOUBLE_EQ(*g.gpu_util_ratio, 0.9);
  EXPECT_FALSE(g.mig_enabled);
  ASSERT_EQ(g.processes.size(), 1u);
  const ProcessSnapshot& p = g.processes[0];
  EXPECT_EQ(p.pid, 4242);
  EXPECT_TRUE(p.compute);
  EXPECT_FALSE(p.graphics);
  EXPECT_EQ(p.used_bytes, 7680 * kMiB);
  EXPECT_FALSE(p.gpu_instance_id.has_value());  // MIG off: 0xFFFFFFFF is "no instance"
  ASSERT_TRUE(p.sm_util_ratio.has_value());
  EXPECT_NEAR(*p.sm_util_ratio, 0.71, 0.011);  // 95 * 15/20 = 71.25 -> 71 %
  EXPECT_THAT(src->BoundFunctions(), Contains("nvmlDeviceGetMemoryInfo_v2"));
  EXPECT_THAT(src->BoundFunctions(), Contains("nvmlDeviceGetComputeRunningProcesses_v3"));

  emu.SetTime(70);  // the process has ended; unattributed memory stays
  GpuSnapshot later = src->TakeGpuSnapshot(0);
  EXPECT_TRUE(later.processes.empty());
  EXPECT_EQ(later.memory_used_bytes, 12288 * kMiB);
}

TEST(NvmlSourceTest, KeepsLastSampleTimestampSoStaleSamplesAreNotReused) {
  EmulatedNvml emu(kOneGpu);
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  emu.SetTime(25);
  GpuSnapshot a = src->TakeGpuSnapshot(0);
  ASSERT_EQ(a.processes.size(), 1u);
  EXPECT_DOUBLE_EQ(a.processes[0].sm_util_ratio.value_or(-1), 0.95);
  // Same instant again: the driver has no sample newer than the last one we saw.
  GpuSnapshot b = src->TakeGpuSnapshot(0);
  ASSERT_EQ(b.processes.size(), 1u);
  EXPECT_DOUBLE_EQ(b.processes[0].sm_util_ratio.value_or(-1), 0.0);
  emu.SetTime(26);
  GpuSnapshot c = src->TakeGpuSnapshot(0);
  EXPECT_DOUBLE_EQ(c.processes[0].sm_util_ratio.value_or(-1), 0.95);
}

// PID 4243 used the SMs while it started (until 5 s) and is idle since; PID 4244 computes all along.
constexpr const char* kIdleAfterStartUp = R"(
driver_version: "580.159.04"
gpus:
  - name: "NVIDIA H200"
    uuid: "GPU-0ae926fe-60b3-2a0b-bee4-b1c4c9651986"
    pci_bus_id: "00000000:00:06.0"
    memory_total_mib: 143771
    processes:
      - {pid: 4243, used_mib: 1030, sm_util: [[0, 90], [5, 90], [6, 0]]}
      - {pid: 4244, used_mib: 1030, sm_util: 80}
)";

TEST(NvmlSourceTest, FirstReadDoesNotTakeBufferedStartUpSamplesForCurrentUse) {
  EmulatedNvml emu(kIdleAfterStartUp);
  emu.SetTime(12);  // the first nvmlInit happens at scenario time 12 s: the busy start-up is 6 s old
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  // Two scenario seconds later: 4244's sample is stamped 2 s after the init (ahead of the wall
  // clock however slowly this test runs), 4243's last busy one 6 s before it.
  emu.SetTime(14);
  GpuSnapshot g = src->TakeGpuSnapshot(0);
  ASSERT_EQ(g.processes.size(), 2u);
  for (const ProcessSnapshot& p : g.processes) {
    ASSERT_TRUE(p.sm_util_ratio.has_value()) << p.pid;
    // The driver still holds 4243's samples from 0-6 s; asked for everything (lastSeenTimeStamp 0)
    // it returns them, and an idle holder would look busy (seen on an H200, driver 580).
    EXPECT_DOUBLE_EQ(*p.sm_util_ratio, p.pid == 4243 ? 0.0 : 0.8) << p.pid;
  }
  emu.SetTime(15);
  GpuSnapshot later = src->TakeGpuSnapshot(0);
  for (const ProcessSnapshot& p : later.processes) {
    EXPECT_DOUBLE_EQ(p.sm_util_ratio.value_or(-1), p.pid == 4243 ? 0.0 : 0.8) << p.pid;
  }
}

TEST(NvmlSourceTest, FallsBackToMemoryV1AndProcessV2OnOldDriver) {
  std::string scenario = std::string(kOneGpu) + R"(
hide_symbols: [nvmlDeviceGetComputeRunningProcesses_v3, nvmlDeviceGetGraphicsRunningProcesses_v3,
               nvmlDeviceGetMPSComputeRunningProcesses_v3, nvmlDeviceGetMemoryInfo_v2,
               nvmlDeviceGetRunningProcessDetailList, nvmlDeviceGetConfComputeMemSizeInfo]
)";
  EmulatedNvml emu(scenario, "old-driver");
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  emu.SetTime(15);
  GpuSnapshot g = src->TakeGpuSnapshot(0);
  EXPECT_TRUE(g.errors.empty());
  // v1 counts reserved memory as used and cannot report it apart.
  EXPECT_EQ(g.memory_used_bytes, (479 + 7680 + 6144) * kMiB);
  EXPECT_FALSE(g.memory_reserved_bytes.has_value());
  EXPECT_EQ(g.memory_free_bytes, (81559 - 479 - 7680 - 6144) * kMiB);
  ASSERT_EQ(g.processes.size(), 1u);
  EXPECT_EQ(g.processes[0].used_bytes, 7680 * kMiB);
  EXPECT_THAT(src->BoundFunctions(), Contains("nvmlDeviceGetMemoryInfo"));
  EXPECT_THAT(src->BoundFunctions(), Contains("nvmlDeviceGetComputeRunningProcesses_v2"));
  EXPECT_FALSE(src->uses_r535_process_layout());
}

TEST(NvmlSourceTest, ReadsR535WideProcessElements) {
  std::string scenario = R"(
hide_symbols: [nvmlDeviceGetRunningProcessDetailList]
gpus:
  - uuid: GPU-r535
    memory_total_mib: 24576
    processes:
      - {pid: 101, used_mib: 100}
      - {pid: 202, used_mib: 200}
      - {pid: 303, used_mib: 300, type: graphics}
)";
  EmulatedNvml emu(scenario, "r535");
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  EXPECT_TRUE(src->uses_r535_process_layout());
  GpuSnapshot g = src->TakeGpuSnapshot(0);
  ASSERT_EQ(g.processes.size(), 3u);
  for (int64_t pid : {101, 202, 303}) {
    const ProcessSnapshot* p = FindPid(g, pid);
    ASSERT_NE(p, nullptr) << pid;
    EXPECT_EQ(p->used_bytes, static_cast<uint64_t>(pid / 101) * 100 * kMiB);
  }
}

TEST(NvmlSourceTest, MergesComputeGraphicsAndMpsListsByPid) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-a
    memory_total_mib: 16384
    processes:
      - {pid: 10, type: [compute, graphics], used_mib: 1000}
      - {pid: 11, type: graphics, used_mib: 200}
      - {pid: 12, type: mps, used_mib: 300}
      - {pid: 13, type: [compute, mps], used_mib: 400}
)");
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  GpuSnapshot g = src->TakeGpuSnapshot(0);
  ASSERT_EQ(g.processes.size(), 4u);
  const ProcessSnapshot* both = FindPid(g, 10);
  ASSERT_NE(both, nullptr);
  EXPECT_TRUE(both->compute && both->graphics && !both->mps);
  EXPECT_EQ(both->used_bytes, 1000 * kMiB);  // one process, not counted twice
  EXPECT_TRUE(FindPid(g, 11)->graphics);
  EXPECT_TRUE(FindPid(g, 12)->mps && !FindPid(g, 12)->compute);
  EXPECT_TRUE(FindPid(g, 13)->mps && FindPid(g, 13)->compute);
}

TEST(NvmlSourceTest, RetriesWhileTheProcessListGrowsBetweenCalls) {
  std::string procs;
  int pid = 1000;
  // 1 process at the size query, then 20 more appear before each of the next three calls.
  procs += "      - {pid: " + std::to_string(pid++) + ", used_mib: 1}\n";
  for (int wave = 1; wave <= 3; ++wave) {
    for (int i = 0; i < 20; ++i) {
      procs += "      - {pid: " + std::to_string(pid++) +
               ", used_mib: 1, visible_after_calls: " + std::to_string(wave) + "}\n";
    }
  }
  EmulatedNvml emu("gpus:\n  - uuid: GPU-grow\n    memory_total_mib: 16384\n    processes:\n" + procs);
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  GpuSnapshot g = src->TakeGpuSnapshot(0);
  EXPECT_TRUE(g.errors.empty()) << g.errors[0];
  EXPECT_EQ(g.processes.size(), 61u);
  EXPECT_NE(FindPid(g, 1060), nullptr);
}

TEST(NvmlSourceTest, GivesUpWhenTheListKeepsGrowing) {
  // The list doubles before every call, faster than the binding's slack: after its bounded number
  // of attempts the call is reported as failed rather than retried forever.
  std::string procs;
  int pid = 2000;
  for (int wave = 0; wave <= 9; ++wave) {
    for (int i = 0; i < (10 << wave); ++i) {
      procs += "      - {pid: " + std::to_string(pid++) + ", visible_after_calls: " + std::to_string(wave) + "}\n";
    }
  }
  EmulatedNvml emu("gpus:\n  - uuid: GPU-grow\n    memory_total_mib: 16384\n    processes:\n" + procs);
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  GpuSnapshot g = src->TakeGpuSnapshot(0);
  EXPECT_THAT(g.errors, Contains("nvmlDeviceGetComputeRunningProcesses_v3: Insufficient Size (NVML error 7)"));
  EXPECT_TRUE(g.processes.empty());
  EXPECT_TRUE(g.memory_total_bytes.has_value());  // the rest of the GPU is still read
}

TEST(NvmlSourceTest, FallsBackToMemoryV1WhenV2AnswersFunctionNotFound) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-v2broken
    memory_total_mib: 1000
    memory_reserved_mib: 100
    unattributed_mib: 10
    errors: [{function: nvmlDeviceGetMemoryInfo_v2, code: 13}]
)");
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  GpuSnapshot g = src->TakeGpuSnapshot(0);
  EXPECT_TRUE(g.errors.empty());
  EXPECT_EQ(g.memory_used_bytes, 110 * kMiB);  // v1: reserved counted as used
  EXPECT_FALSE(g.memory_reserved_bytes.has_value());
}

TEST(NvmlSourceTest, NotAvailableProcessMemoryIsMissingNotZero) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-na
    memory_total_mib: 16384
    unattributed_mib: 50
    processes:
      - {pid: 77, used_mib: "N/A"}
      - {pid: 78, used_mib: 100}
)");
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  GpuSnapshot g = src->TakeGpuSnapshot(0);
  ASSERT_NE(FindPid(g, 77), nullptr);
  EXPECT_FALSE(FindPid(g, 77)->used_bytes.has_value());
  EXPECT_EQ(FindPid(g, 78)->used_bytes, 100 * kMiB);
  EXPECT_EQ(g.memory_used_bytes, 150 * kMiB);
}

TEST(NvmlSourceTest, FailedCallBecomesErrorNamingFunctionAndNvmlText) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-err
    memory_total_mib: 16384
    errors: [{function: nvmlDeviceGetMemoryInfo_v2, code: 999, from_s: 10, to_s: 20},
             {function: nvmlDeviceGetComputeRunningProcesses, code: 4}]
)");
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  emu.SetTime(5);
  GpuSnapshot ok = src->TakeGpuSnapshot(0);
  EXPECT_TRUE(ok.memory_total_bytes.has_value());
  EXPECT_THAT(ok.errors, Contains("nvmlDeviceGetComputeRunningProcesses_v3: Insufficient Permissions (NVML error 4)"));

  emu.SetTime(15);
  GpuSnapshot g = src->TakeGpuSnapshot(0);
  EXPECT_FALSE(g.memory_total_bytes.has_value());
  EXPECT_FALSE(g.memory_used_bytes.has_value());
  EXPECT_THAT(g.errors, Contains("nvmlDeviceGetMemoryInfo_v2: Unknown Error (NVML error 999)"));
  bool structured = false;
  for (const auto& e : g.nvml_errors)
    structured = structured || (e.function == "nvmlDeviceGetMemoryInfo_v2" && e.code == 999);
  EXPECT_TRUE(structured);
  EXPECT_FALSE(g.lost);
  EXPECT_TRUE(g.responsive);
}

TEST(NvmlSourceTest, NvmlStatusMapsCodes) {
  struct Case {
    int code;
    StatusCode want;
  } cases[] = {{4, StatusCode::kPermissionDenied}, {6, StatusCode::kNotFound},     {10, StatusCode::kTimeout},
               {3, StatusCode::kUnavailable},      {15, StatusCode::kUnavailable}, {999, StatusCode::kUnavailable}};
  for (const auto& c : cases) {
    Status s = NvmlStatus("nvmlDeviceGetUUID", c.code, "Some Text");
    EXPECT_EQ(s.code(), c.want) << c.code;
    EXPECT_EQ(s.message(), "nvmlDeviceGetUUID: Some Text (NVML error " + std::to_string(c.code) + ")");
  }
}

TEST(NvmlSourceTest, LostGpuIsMarkedAndOtherGpusAreStillRead) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-lost
    memory_total_mib: 16384
    errors: [{function: "*", code: 15, from_s: 10}]
  - uuid: GPU-fine
    memory_total_mib: 16384
    unattributed_mib: 10
)");
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  emu.SetTime(11);
  HostSnapshot h = src->TakeSnapshot();
  ASSERT_EQ(h.gpus.size(), 2u);
  EXPECT_TRUE(h.gpus[0].lost);
  EXPECT_THAT(h.gpus[0].errors, Contains(HasSubstr("GPU is lost (NVML error 15)")));
  ASSERT_FALSE(h.gpus[0].nvml_errors.empty());
  EXPECT_EQ(h.gpus[0].nvml_errors[0].code, 15);
  EXPECT_EQ(h.gpus[0].nvml_errors[0].code_name, "NVML_ERROR_GPU_IS_LOST");
  EXPECT_FALSE(h.gpus[1].lost);
  EXPECT_EQ(h.gpus[1].uuid, "GPU-fine");
  EXPECT_EQ(h.gpus[1].memory_used_bytes, 10 * kMiB);
}

// GPU 0's memory query hangs for 30 s from the start; GPU 1 answers.
constexpr char kHungMemoryInfoOnGpu0[] = R"(
gpus:
  - uuid: GPU-hung
    memory_total_mib: 16384
    hangs: [{function: nvmlDeviceGetMemoryInfo_v2, at_s: 0, seconds: 30}]
  - uuid: GPU-ok
    memory_total_mib: 16384
    unattributed_mib: 20
)";

TEST(NvmlSourceTest, HungCallMeetsDeadlineAndOtherGpusProceed) {
  EmulatedNvml emu(kHungMemoryInfoOnGpu0);
  auto start = std::chrono::steady_clock::now();
  {
    auto src = OpenOrDie(emu, std::chrono::milliseconds(300));
    ASSERT_TRUE(src);
    HostSnapshot h = src->TakeSnapshot();
    EXPECT_FALSE(h.gpus[0].responsive);
    EXPECT_THAT(h.gpus[0].errors, Contains(HasSubstr("nvmlDeviceGetMemoryInfo_v2: no answer within the 300 ms")));
    // The metric's code is a fixed token, not the message (which names the deadline).
    ASSERT_FALSE(h.gpus[0].nvml_errors.empty());
    EXPECT_EQ(h.gpus[0].nvml_errors[0].function, "nvmlDeviceGetMemoryInfo_v2");
    EXPECT_EQ(h.gpus[0].nvml_errors[0].code_name, "timeout");
    EXPECT_TRUE(h.gpus[1].responsive);
    EXPECT_EQ(h.gpus[1].memory_used_bytes, 20 * kMiB);

    // While the call is still blocked, the hung GPU fails fast instead of waiting again.
    auto again_start = std::chrono::steady_clock::now();
    GpuSnapshot again = src->TakeGpuSnapshot(0);
    EXPECT_LT(std::chrono::steady_clock::now() - again_start, std::chrono::milliseconds(250));
    EXPECT_FALSE(again.responsive);
    EXPECT_THAT(again.errors, Contains(HasSubstr("is still blocked")));
    ASSERT_FALSE(again.nvml_errors.empty());
    EXPECT_EQ(again.nvml_errors[0].code_name, "blocked");
  }  // destroying the source must not wait for the blocked call
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

// The hang shows in the histogram of the function that hung (about the deadline), not in those
// of the calls around it, which answer in well under the deadline.
TEST(NvmlSourceTest, HungCallShowsInItsOwnDurationHistogram) {
  EmulatedNvml emu(kHungMemoryInfoOnGpu0);
  auto src = OpenOrDie(emu, std::chrono::milliseconds(300));
  ASSERT_TRUE(src);
  HostSnapshot h = src->TakeSnapshot();
  ASSERT_FALSE(h.gpus[0].responsive);
  std::map<std::string, CallTiming> by_call;
  for (CallTiming& c : src->call_timings()) by_call[c.call] = std::move(c);
  const std::vector<double>& bounds = DefaultCallLatencyBounds();
  const size_t le_100ms = static_cast<size_t>(std::find(bounds.begin(), bounds.end(), 0.1) - bounds.begin());
  const size_t le_500ms = static_cast<size_t>(std::find(bounds.begin(), bounds.end(), 0.5) - bounds.begin());
  ASSERT_LT(le_500ms, bounds.size());

  ASSERT_TRUE(by_call.count("nvmlDeviceGetMemoryInfo_v2"));
  const CallTiming& mem = by_call["nvmlDeviceGetMemoryInfo_v2"];
  EXPECT_EQ(mem.count, 2u) << "one call per GPU";
  ASSERT_EQ(mem.bucket_counts.size(), bounds.size());
  EXPECT_EQ(mem.bucket_counts[le_100ms], 1u) << "the healthy GPU's call is fast";
  EXPECT_EQ(mem.bucket_counts[le_500ms], 2u) << "the hung one waited the 300 ms deadline";
  EXPECT_GE(mem.sum_seconds, 0.3);
  EXPECT_LT(mem.sum_seconds, 1.0);

  ASSERT_TRUE(by_call.count("nvmlInit_v2"));
  EXPECT_EQ(by_call["nvmlInit_v2"].count, 1u);
  double others = 0;
  for (const auto& [name, c] : by_call) {
    if (name == "nvmlDeviceGetMemoryInfo_v2") continue;
    EXPECT_EQ(c.bucket_counts[le_100ms], c.count) << name;
    others += c.sum_seconds;
  }
  EXPECT_LT(others, 0.3);
  // The GPU still blocked refuses further calls at once: they are not NVML calls and not counted.
  GpuSnapshot again = src->TakeGpuSnapshot(0);
  ASSERT_FALSE(again.responsive);
  for (const CallTiming& c : src->call_timings()) {
    if (c.call == "nvmlDeviceGetMemoryInfo_v2") {
      EXPECT_EQ(c.count, 2u);
    }
  }
}

TEST(NvmlSourceTest, HungGpuRecoversWhenTheCallReturns) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-hung
    memory_total_mib: 16384
    hangs: [{function: nvmlDeviceGetBAR1MemoryInfo, at_s: 0, seconds: 5}]
)");
  auto src = OpenOrDie(emu, std::chrono::milliseconds(200));
  ASSERT_TRUE(src);
  EXPECT_FALSE(src->TakeGpuSnapshot(0).responsive);
  emu.SetTime(6);  // the emulated hang ends; the blocked worker returns
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  GpuSnapshot g = src->TakeGpuSnapshot(0);
  EXPECT_TRUE(g.responsive);
  EXPECT_TRUE(g.memory_total_bytes.has_value());
}

TEST(NvmlSourceTest, ReadsMigDevicesAndTheirProcesses) {
  EmulatedNvml emu(R"(
gpus:
  - name: "NVIDIA H100 80GB HBM3"
    uuid: GPU-mig
    memory_total_mib: 81559
    memory_reserved_mib: 479
    utilization_gpu: 50
    mig_devices:
      - gpu_instance_id: 1
        compute_instance_id: 0
        uuid: MIG-aaaa
        name: "NVIDIA H100 80GB HBM3 MIG 3g.40gb"
        memory_total_mib: 40448
        unattributed_mib: 11
        processes: [{pid: 500, used_mib: 11080}]
      - gpu_instance_id: 2
        uuid: MIG-bbbb
        memory_total_mib: 20096
        processes: [{pid: 501, used_mib: 6}]
)");
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  GpuSnapshot g = src->TakeGpuSnapshot(0);
  EXPECT_TRUE(g.errors.empty()) << g.errors[0];
  EXPECT_TRUE(g.mig_enabled);
  EXPECT_FALSE(g.gpu_util_ratio.has_value());  // not supported with MIG on
  ASSERT_EQ(g.mig_devices.size(), 2u);
  EXPECT_EQ(g.mig_devices[0].uuid, "MIG-aaaa");
  EXPECT_EQ(g.mig_devices[0].name, "NVIDIA H100 80GB HBM3 MIG 3g.40gb");
  EXPECT_EQ(g.mig_devices[0].gpu_instance_id, 1u);
  EXPECT_EQ(g.mig_devices[0].memory_total_bytes, 40448 * kMiB);
  EXPECT_EQ(g.mig_devices[0].memory_used_bytes, 11091 * kMiB);
  EXPECT_EQ(g.mig_devices[1].gpu_instance_id, 2u);
  EXPECT_EQ(g.memory_used_bytes, (11091 + 6) * kMiB);
  const ProcessSnapshot* p = FindPid(g, 500);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->gpu_instance_id, 1u);
  EXPECT_EQ(p->compute_instance_id, 0u);
  EXPECT_EQ(p->used_bytes, 11080 * kMiB);
  EXPECT_EQ(FindPid(g, 501)->gpu_instance_id, 2u);
  EXPECT_FALSE(p->sm_util_ratio.has_value());  // no process samples with MIG on
}

// A PID on two GPU instances is one process whose memory is the sum; that sum is on neither
// instance, so it carries none (its runway is then against the card). On two compute instances of
// one GPU instance it keeps the GPU instance.
TEST(NvmlSourceTest, APidOnTwoMigInstancesIsOnNeither) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-mig
    memory_total_mib: 81559
    mig_devices:
      - {gpu_instance_id: 9, compute_instance_id: 0, uuid: MIG-a, memory_total_mib: 9984,
         processes: [{pid: 5100, used_mib: 1000}, {pid: 5200, used_mib: 10}]}
      - {gpu_instance_id: 9, compute_instance_id: 1, uuid: MIG-b, memory_total_mib: 9984,
         processes: [{pid: 5200, used_mib: 20}]}
      - {gpu_instance_id: 2, compute_instance_id: 0, uuid: MIG-c, memory_total_mib: 40448,
         processes: [{pid: 5100, used_mib: 30000}]}
)");
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  GpuSnapshot g = src->TakeGpuSnapshot(0);
  const ProcessSnapshot* two_gi = FindPid(g, 5100);
  ASSERT_NE(two_gi, nullptr);
  EXPECT_EQ(two_gi->used_bytes, 31000 * kMiB);
  EXPECT_FALSE(two_gi->gpu_instance_id.has_value());
  EXPECT_FALSE(two_gi->compute_instance_id.has_value());
  EXPECT_EQ(MigInstanceOf(g.mig_devices, *two_gi), nullptr);
  const ProcessSnapshot* two_ci = FindPid(g, 5200);
  ASSERT_NE(two_ci, nullptr);
  EXPECT_EQ(two_ci->used_bytes, 30 * kMiB);
  EXPECT_EQ(two_ci->gpu_instance_id, 9u);
  EXPECT_FALSE(two_ci->compute_instance_id.has_value());
}

// A PID on two GPU instances whose memory is N/A on one: its sum is not known (missing, not the
// other instance's part), whichever instance comes first.
TEST(NvmlSourceTest, APidOnTwoMigInstancesWithNaOnOneHasNoKnownSum) {
  for (const char* order : {"na_first", "na_second"}) {
    const bool na_first = std::string(order) == "na_first";
    const std::string a = na_first ? "\"N/A\"" : "15000", b = na_first ? "15000" : "\"N/A\"";
    EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-mig
    memory_total_mib: 81559
    mig_devices:
      - {gpu_instance_id: 1, compute_instance_id: 0, uuid: MIG-a, memory_total_mib: 40448,
         processes: [{pid: 1000, used_mib: )" +
                     a + R"(}]}
      - {gpu_instance_id: 2, compute_instance_id: 0, uuid: MIG-b, memory_total_mib: 40448,
         processes: [{pid: 1000, used_mib: )" +
                     b + R"(}]}
)");
    auto src = OpenOrDie(emu);
    ASSERT_TRUE(src);
    GpuSnapshot g = src->TakeGpuSnapshot(0);
    const ProcessSnapshot* p = FindPid(g, 1000);
    ASSERT_NE(p, nullptr) << order;
    EXPECT_FALSE(p->used_bytes.has_value()) << order << ": " << p->used_bytes.value_or(0);
  }
}

// When NVML does not give a MIG device's GPU instance id (the call fails), the device has none,
// not instance 0, and each process keeps the instance NVML's process list gives it.
TEST(NvmlSourceTest, AMigDeviceWithoutItsInstanceIdHasNoneAndItsProcessesKeepTheirs) {
  for (int code : {999, 3}) {
    EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-mig
    memory_total_mib: 81559
    errors: [{function: nvmlDeviceGetGpuInstanceId, code: )" +
                     std::to_string(code) + R"(}]
    mig_devices:
      - {gpu_instance_id: 1, compute_instance_id: 0, uuid: MIG-a, memory_total_mib: 40448,
         processes: [{pid: 6100, used_mib: 1000}]}
      - {gpu_instance_id: 5, compute_instance_id: 0, uuid: MIG-b, memory_total_mib: 20096,
         processes: [{pid: 6200, used_mib: 2000}]}
)");
    auto src = OpenOrDie(emu);
    ASSERT_TRUE(src);
    GpuSnapshot g = src->TakeGpuSnapshot(0);
    ASSERT_EQ(g.mig_devices.size(), 2u) << code;
    for (const MigDeviceSnapshot& m : g.mig_devices) {
      EXPECT_FALSE(m.gpu_instance_id.has_value()) << code << " " << m.uuid;
      EXPECT_EQ(m.compute_instance_id, 0u) << code << " " << m.uuid;
    }
    ASSERT_NE(FindPid(g, 6100), nullptr);
    EXPECT_EQ(FindPid(g, 6100)->gpu_instance_id, 1u) << code;
    EXPECT_EQ(FindPid(g, 6100)->compute_instance_id, 0u) << code;
    ASSERT_NE(FindPid(g, 6200), nullptr);
    EXPECT_EQ(FindPid(g, 6200)->gpu_instance_id, 5u) << code;
  }
}

TEST(NvmlSourceTest, OpenFailsWithPathAndReason) {
  SourceOptions o;
  o.library_path = "/nonexistent/libnvidia-ml.so.1";
  NvmlSource::OpenFailure failure{"x", "y"};
  auto r = NvmlSource::Open(o, &failure);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/libnvidia-ml.so.1"));
  EXPECT_EQ(failure.call, "unknown") << "no call was made";
  EXPECT_EQ(failure.code, "other");
}

TEST(NvmlSourceTest, InitFailureFromBadScenarioNamesTheCall) {
  EmulatedNvml emu("gpus:\n  - uuid: GPU-x\n    memory_total_mib: lots\n");
  SourceOptions o;
  o.library_path = emu.library();
  auto r = NvmlSource::Open(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("nvmlInit_v2: Unknown Error (NVML error 999)"));
}

TEST(NvmlSourceTest, OpenGivesUpOnAHungInit) {
  EmulatedNvml emu(R"(
hangs: [{function: nvmlInit_v2, seconds: 30}]
gpus: [{uuid: GPU-i, memory_total_mib: 100}]
)");
  SourceOptions o;
  o.library_path = emu.library();
  o.call_deadline = std::chrono::milliseconds(5000);
  o.init_deadline = std::chrono::milliseconds(200);  // nvmlInit's own deadline, not the calls'
  auto start = std::chrono::steady_clock::now();
  NvmlSource::OpenFailure failure;
  auto r = NvmlSource::Open(o, &failure);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(failure.call, "nvmlInit_v2");
  EXPECT_EQ(failure.code, "timeout");
  EXPECT_EQ(r.status().code(), StatusCode::kTimeout);
  EXPECT_THAT(r.status().message(), HasSubstr("nvmlInit_v2: no answer within the 200 ms deadline"));
}

TEST(NvmlSourceTest, InitErrorFromTheDriverIsReported) {
  EmulatedNvml emu(R"(
errors: [{function: nvmlInit, code: 9}]
gpus: [{uuid: GPU-i, memory_total_mib: 100}]
)");
  SourceOptions o;
  o.library_path = emu.library();
  NvmlSource::OpenFailure failure;
  auto r = NvmlSource::Open(o, &failure);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("nvmlInit_v2: Driver Not Loaded (NVML error 9)"));
  EXPECT_EQ(failure.call, "nvmlInit_v2");
  EXPECT_EQ(failure.code, "NVML_ERROR_DRIVER_NOT_LOADED");
}

// Xid events through NVML's event set: only those after a GPU registered, oldest first, each once,
// named by the GPU's index; none waited for.
TEST(NvmlSourceTest, XidEventsComeFromTheEventSetOncePerEventAfterRegistering) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-x0
    memory_total_mib: 1000
    xid: [{t: 5, code: 31}, {t: 30, code: 13}]
  - uuid: GPU-x1
    memory_total_mib: 1000
    xid: [{t: 40, code: 79}, {t: 20, code: 48}]
)");
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  EXPECT_FALSE(src->ReadXidEvents().status.ok());  // nothing registered yet
  emu.SetTime(10);
  (void)src->TakeSnapshot();  // the GPUs' handles
  NvmlSource::XidListening l = src->ListenForXids();
  EXPECT_EQ(l.gpus, (std::vector<unsigned>{0, 1}));
  EXPECT_TRUE(l.problems.empty()) << l.problems[0];
  NvmlSource::XidRead none = src->ReadXidEvents();
  ASSERT_TRUE(none.status.ok()) << none.status.ToString();
  EXPECT_TRUE(none.events.empty());  // GPU 0's Xid 31 came before it registered

  emu.SetTime(45);
  NvmlSource::XidRead first = src->ReadXidEvents(2);
  ASSERT_TRUE(first.status.ok()) << first.status.ToString();
  ASSERT_EQ(first.events.size(), 2u);  // the third stays queued
  EXPECT_EQ(first.events[0].gpu, 1u);
  EXPECT_EQ(first.events[0].xid, 48u);
  EXPECT_FALSE(first.events[0].gpu_instance.has_value());
  EXPECT_EQ(first.events[1].gpu, 0u);
  EXPECT_EQ(first.events[1].xid, 13u);
  NvmlSource::XidRead rest = src->ReadXidEvents();
  ASSERT_TRUE(rest.status.ok());
  ASSERT_EQ(rest.events.size(), 1u);
  EXPECT_EQ(rest.events[0].gpu, 1u);
  EXPECT_EQ(rest.events[0].xid, 79u);
  NvmlSource::XidRead again = src->ReadXidEvents();
  ASSERT_TRUE(again.status.ok());
  EXPECT_TRUE(again.events.empty());
  EXPECT_EQ(src->ListenForXids().gpus, (std::vector<unsigned>{0, 1}));  // registered once
}

// A GPU that cannot register is named with NVML's reason while the others deliver, and is tried
// again at each call: once the error passes it registers and delivers too.
TEST(NvmlSourceTest, AGpuThatCannotRegisterForXidsIsNamedAndTriedAgain) {
  EmulatedNvml emu(R"(
gpus:
  - uuid: GPU-x0
    memory_total_mib: 1000
    errors: [{function: nvmlDeviceRegisterEvents, code: 4, from_s: 0, to_s: 20}]
    xid: [{t: 30, code: 13}]
  - uuid: GPU-x1
    memory_total_mib: 1000
    xid: [{t: 15, code: 79}]
)");
  auto src = OpenOrDie(emu);
  ASSERT_TRUE(src);
  emu.SetTime(10);
  (void)src->TakeSnapshot();
  NvmlSource::XidListening l = src->ListenForXids();
  EXPECT_EQ(l.gpus, (std::vector<unsigned>{1}));
  ASSERT_EQ(l.problems.size(), 1u);
  EXPECT_THAT(l.problems[0], HasSubstr("GPU 0: nvmlDeviceRegisterEvents"));
  EXPECT_THAT(l.problems[0], HasSubstr("NVML error 4"));
  EXPECT_EQ(src->ListenForXids().problems.size(), 1u) << "one entry per GPU, not one per try";
  emu.SetTime(25);
  NvmlSource::XidRead got = src->ReadXidEvents();
  ASSERT_TRUE(got.status.ok()) << got.status.ToString();
  ASSERT_EQ(got.events.size(), 1u);
  EXPECT_EQ(got.events[0].gpu, 1u);
  EXPECT_EQ(got.events[0].xid, 79u);
  l = src->ListenForXids();  // the error has passed
  EXPECT_EQ(l.gpus, (std::vector<unsigned>{0, 1}));
  EXPECT_TRUE(l.problems.empty()) << l.problems[0];
  emu.SetTime(35);
  got = src->ReadXidEvents();
  ASSERT_EQ(got.events.size(), 1u);
  EXPECT_EQ(got.events[0].gpu, 0u);
  EXPECT_EQ(got.events[0].xid, 13u);
}

TEST(NvmlSourceTest, DeviceNodeFollowsTheMinorNumber) {
  EXPECT_EQ(DeviceNodePath(3), "/dev/nvidia3");
}

TEST(NvmlSourceTest, ResolvesLibraryFromFlagThenEnvironment) {
  unsetenv("VRAMWATCH_NVML_LIB");
  EXPECT_EQ(ResolveLibraryPath(""), "libnvidia-ml.so.1");
  setenv("VRAMWATCH_NVML_LIB", "/opt/env/libnvidia-ml.so.1", 1);
  EXPECT_EQ(ResolveLibraryPath(""), "/opt/env/libnvidia-ml.so.1");
  EXPECT_EQ(ResolveLibraryPath("/flag/lib.so"), "/flag/lib.so");
  unsetenv("VRAMWATCH_NVML_LIB");
}

}  // namespace
}  // namespace vw::nvml
