#include "outputs/prometheus_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "outputs/daemon_state_testing.h"
#include "outputs/daemon_status_json.h"

namespace vw::outputs {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string MetricName(const std::string& line) {
  return line.substr(0, line.find_first_of("{ "));
}

struct CommandResult {
  int exit_code = -1;
  std::string output;
};

CommandResult RunShell(const std::string& cmd) {
  CommandResult r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int st = pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(PrometheusText, RendersGpuMemoryWithTheProductLabels) {
  DaemonState s = testing::MakeDaemonState(1, 0);
  std::string text = RenderPrometheus(s, s.t);
  EXPECT_THAT(text, HasSubstr("vramwatch_gpu_memory_total_bytes{gpu=\"0\",uuid=\"GPU-5b8c1c1e-0d1a-4f5e-9a43-"
                              "1b2c3d4e5f60\",pci_bus_id=\"00000000:3B:00.0\",model_name=\"NVIDIA H100 80GB HBM3\","
                              "hostname=\"node-7\"} 85520809984\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE vramwatch_gpu_memory_used_bytes gauge\n"));
  EXPECT_THAT(text, HasSubstr("vramwatch_gpu_leak_rate_bytes_per_second{gpu=\"0\""));
  EXPECT_THAT(text, HasSubstr("} 1048576\n"));
  EXPECT_THAT(text, HasSubstr("vramwatch_gpu_time_to_oom_seconds{gpu=\"0\""));
  EXPECT_THAT(text, HasSubstr(",verdict=\"leak\"} 1\n"));
  EXPECT_THAT(text, HasSubstr(",verdict=\"plateau\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("vramwatch_xid_events_total{gpu=\"0\""));
  EXPECT_THAT(text, HasSubstr(",xid=\"79\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("vramwatch_gpu_sample_age_seconds{gpu=\"0\""));
  EXPECT_THAT(text, HasSubstr("} 0.5\n"));
}

TEST(PrometheusText, MissingValuesProduceNoSampleRatherThanZero) {
  DaemonState s = testing::MakeDaemonState(2, 1);
  s.gpus[1].snapshot.memory_reserved_bytes.reset();
  s.gpus[1].analysis = SeriesVerdict{};
  s.gpus[1].snapshot.processes[0].used_bytes.reset();
  s.gpus[0].snapshot.memory_reserved_bytes.reset();
  std::string text = RenderPrometheus(s, s.t);
  EXPECT_THAT(text, Not(HasSubstr("vramwatch_gpu_memory_reserved_bytes")));
  EXPECT_THAT(text, Not(HasSubstr("vramwatch_gpu_load_rise_bytes_per_second")));
  // Only GPU 0 has a leak rate.
  size_t count = 0;
  for (const auto& l : Lines(text)) {
    if (l.rfind("vramwatch_gpu_leak_rate_bytes_per_second{", 0) == 0) ++count;
  }
  EXPECT_EQ(count, 1u);
  // GPU 1's process has no memory value: only GPU 0's process memory series is present.
  count = 0;
  for (const auto& l : Lines(text)) {
    if (l.rfind("vramwatch_process_memory_used_bytes{", 0) == 0) ++count;
  }
  EXPECT_EQ(count, 1u);
}

// A rule can alert on one process's leak only if the process's own verdict is served, with the
// labels that name the process; a process that does not leak has no such series (not a 0).
TEST(PrometheusText, LeakingProcessServesItsRateAndRunwayWithItsLabels) {
  DaemonState s = testing::MakeDaemonState(1, 2);
  SeriesVerdict leak;
  leak.verdict = "leak";
  leak.leak_rate_bps = 524288.0;
  leak.time_to_oom_s = 7200.0;
  leak.time_to_oom_lo_s = 5400.0;
  s.gpus[0].process_analysis["1000"] = leak;
  SeriesVerdict plateau;
  plateau.verdict = "plateau";
  plateau.time_to_oom_s = 99.0;  // never served for a process that does not leak
  s.gpus[0].process_analysis["1001"] = plateau;
  // Its pod's and container's Kubernetes names, as --kube-logs reads them.
  ProcessInfo& named = s.gpus[0].snapshot.processes[0].info;
  named.pod_namespace = "ml";
  named.pod_name = "llm-serve-0";
  named.container_name = "vllm";
  const std::string text = RenderPrometheus(s, s.t);
  const std::string labels =
      "{gpu=\"0\",uuid=\"GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f60\",pci_bus_id=\"00000000:3B:00.0\","
      "model_name=\"NVIDIA H100 80GB HBM3\",hostname=\"node-7\",pid=\"1000\",command=\"python train.py --config "
      "\\\"big\\\"\",user=\"alice\",container=\"3f4e5d6c7b8a\",pod=\"pod-uid-0\",namespace=\"ml\",pod_name=\"llm-"
      "serve-0\",container_name=\"vllm\",slurm_job=\"\"}";
  EXPECT_THAT(text, HasSubstr("# TYPE vramwatch_process_leak_rate_bytes_per_second gauge\n"));
  EXPECT_THAT(text, HasSubstr("\nvramwatch_process_leak_rate_bytes_per_second" + labels + " 524288\n"));
  EXPECT_THAT(text, HasSubstr("\nvramwatch_process_time_to_oom_seconds" + labels + " 7200\n"));
  EXPECT_THAT(text, HasSubstr("\nvramwatch_process_time_to_oom_lower_seconds" + labels + " 5400\n"));
  size_t runways = 0;
  for (const auto& l : Lines(text)) {
    if (l.rfind("vramwatch_process_", 0) == 0 && l.find("pid=\"1001\"") != std::string::npos) {
      EXPECT_EQ(l.rfind("vramwatch_process_time_to_oom", 0), std::string::npos) << l;
      EXPECT_EQ(l.rfind("vramwatch_process_leak_rate", 0), std::string::npos) << l;
    }
    if (l.rfind("vramwatch_process_time_to_oom_seconds{", 0) == 0) ++runways;
  }
  EXPECT_EQ(runways, 1u);
}

// A swinging load's rise worth watching (no leak verdict) is served per GPU while the engine
// reports it, and absent on a GPU without one; the status JSON carries the same value, null there.
TEST(PrometheusText, ARiseWorthWatchingIsServedOnlyWhereTheEngineReportsIt) {
  DaemonState s = testing::MakeDaemonState(2, 0);
  s.gpus[1].analysis = SeriesVerdict{};
  s.gpus[1].analysis.verdict = "settling";
  s.gpus[1].analysis.load_rise_bps = 349525.0;
  const std::string text = RenderPrometheus(s, s.t);
  EXPECT_THAT(text, HasSubstr("# TYPE vramwatch_gpu_load_rise_bytes_per_second gauge\n"));
  size_t count = 0;
  for (const auto& l : Lines(text)) {
    if (l.rfind("vramwatch_gpu_load_rise_bytes_per_second{", 0) != 0) continue;
    ++count;
    EXPECT_THAT(l, HasSubstr("gpu=\"1\""));
    EXPECT_THAT(l, ::testing::EndsWith("} 349525"));
  }
  EXPECT_EQ(count, 1u);
  const nlohmann::ordered_json j = StatusJson(s);
  EXPECT_TRUE(j["gpus"][0]["analysis"]["load_rise_bytes_per_second"].is_null());
  EXPECT_DOUBLE_EQ(j["gpus"][1]["analysis"]["load_rise_bytes_per_second"].get<double>(), 349525.0);
}

// Settling growth held back by the history rules: the status says from when a leak verdict is
// possible, in UTC as leak_start; null on a GPU without it.
TEST(PrometheusText, StatusSaysWhenHeldGrowthCanBeCalledALeak) {
  DaemonState s = testing::MakeDaemonState(2, 0);
  s.gpus[1].analysis = SeriesVerdict{};
  s.gpus[1].analysis.verdict = "settling";
  s.gpus[1].analysis.held_until_t = 1764189000 + 5 * 3600;  // 2025-11-26 20:30 UTC + 5 h
  const nlohmann::ordered_json j = StatusJson(s);
  EXPECT_TRUE(j["gpus"][0]["analysis"]["held_until"].is_null());
  EXPECT_EQ(j["gpus"][1]["analysis"]["held_until"], "2025-11-27T01:30:00Z");
}

TEST(PrometheusText, EveryFamilyHasHelpTypeAndContiguousSamples) {
  DaemonState s = testing::MakeDaemonState(3, 4);
  std::string text = RenderPrometheus(s, s.t);
  std::set<std::string> typed, helped, finished;
  std::string current;
  for (const auto& l : Lines(text)) {
    if (l.rfind("# HELP ", 0) == 0) {
      std::string name = MetricName(l.substr(7));
      EXPECT_TRUE(helped.insert(name).second) << "HELP twice for " << name;
      continue;
    }
    if (l.rfind("# TYPE ", 0) == 0) {
      std::string name = MetricName(l.substr(7));
      EXPECT_TRUE(typed.insert(name).second) << "TYPE twice for " << name;
      if (!current.empty()) finished.insert(current);
      current = name;
      continue;
    }
    std::string name = MetricName(l);
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      std::string sfx(suffix);
      if (name.size() > sfx.size() && name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0 &&
          typed.count(name.substr(0, name.size() - sfx.size()))) {
        name = name.substr(0, name.size() - sfx.size());
      }
    }
    EXPECT_EQ(name, current) << "sample outside its family: " << l;
    EXPECT_FALSE(finished.count(name)) << "family split: " << name;
  }
  EXPECT_TRUE(typed.count("vramwatch_process_state"));
  EXPECT_TRUE(typed.count("vramwatch_nvml_call_duration_seconds"));
  EXPECT_EQ(typed, helped);
}

TEST(PrometheusText, LabelValuesAreEscapedAndKeptValidUtf8) {
  std::string out;
  AppendEscapedLabelValue("a\\b\"c\nd", out);
  EXPECT_EQ(out, "a\\\\b\\\"c\\nd");
  out.clear();
  AppendEscapedLabelValue("caf\xc3\xa9 \xff\xfe ok", out);  // valid é, then two invalid bytes
  EXPECT_EQ(out, "caf\xc3\xa9 ?? ok");
  out.clear();
  AppendEscapedLabelValue("cut \xe2\x82", out);  // truncated 3-byte sequence
  EXPECT_EQ(out, "cut ??");
}

TEST(PrometheusText, LongCommandLabelIsCutAtACharacterBoundary) {
  DaemonState s = testing::MakeDaemonState(1, 1);
  std::string cmd(255, 'x');
  cmd += "\xc3\xa9tail";  // é straddles byte 256
  s.gpus[0].snapshot.processes[0].info.command = cmd;
  std::string text = RenderPrometheus(s, s.t);
  EXPECT_THAT(text, HasSubstr("command=\"" + std::string(255, 'x') + "\""));
}

TEST(PrometheusText, FindingsAreCountedPerGpuKindAndSeverity) {
  DaemonState s = testing::MakeDaemonState(1, 0);
  Finding f = s.findings[0];
  s.findings.push_back(f);
  Finding host;
  host.kind = "pid_namespace_blind";
  host.severity = Severity::kWarning;
  s.findings.push_back(host);
  std::string text = RenderPrometheus(s, s.t);
  EXPECT_THAT(text, HasSubstr("hostname=\"node-7\",kind=\"orphaned_memory\",severity=\"critical\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("vramwatch_finding{gpu=\"\",hostname=\"node-7\",kind=\"pid_namespace_blind\","
                              "severity=\"warning\"} 1\n"));
}

TEST(PrometheusText, StaleGpuIsDownAndItsSampleAgeGrows) {
  DaemonState s = testing::MakeDaemonState(2, 0);
  s.gpus[1].stale = true;
  s.gpus[1].last_sample_t = s.t - 90;
  std::string text = RenderPrometheus(s, s.t + 10);
  EXPECT_THAT(text, HasSubstr("vramwatch_gpu_up{gpu=\"1\""));
  EXPECT_THAT(text, HasSubstr("hostname=\"node-7\"} 100\n"));
  bool gpu1_down = false;
  for (const auto& l : Lines(text)) {
    if (l.rfind("vramwatch_gpu_up{gpu=\"1\"", 0) == 0) gpu1_down = l.back() == '0';
  }
  EXPECT_TRUE(gpu1_down);
}

// A GPU that is not up has no sample now: what a sample reads (used, free, reserved,
// unattributed, utilisation) and its processes are left out, so a dashboard shows a gap rather
// than the last values as a flat line; its size, up (0), sample age and Xid counts stay, and the
// GPU beside it is untouched.
TEST(PrometheusText, AGpuThatIsNotUpServesNoSampleFiguresAndNoProcesses) {
  for (int why = 0; why < 3; ++why) {
    DaemonState s = testing::MakeDaemonState(2, 2);
    GpuState& g = s.gpus[1];
    if (why == 0) g.stale = true;
    if (why == 1) g.snapshot.lost = true;
    if (why == 2) g.snapshot.responsive = false;
    g.last_sample_t = s.t - 90;
    g.snapshot.gpu_util_ratio = 0.5;
    s.gpus[0].snapshot.gpu_util_ratio = 0.5;
    const std::string text = RenderPrometheus(s, s.t);
    std::map<std::string, std::set<std::string>> gpus_of;  // metric -> gpu labels served
    for (const auto& l : Lines(text)) {
      if (l.empty() || l[0] == '#') continue;
      const size_t at = l.find("gpu=\"");
      if (at == std::string::npos) continue;
      gpus_of[MetricName(l)].insert(l.substr(at + 5, l.find('"', at + 5) - at - 5));
    }
    for (const char* name :
         {"vramwatch_gpu_memory_used_bytes", "vramwatch_gpu_memory_free_bytes", "vramwatch_gpu_memory_reserved_bytes",
          "vramwatch_gpu_memory_unattributed_bytes", "vramwatch_gpu_utilization_ratio",
          "vramwatch_process_memory_used_bytes", "vramwatch_process_state"}) {
      EXPECT_EQ(gpus_of[name], std::set<std::string>{"0"}) << name << " (case " << why << ")";
    }
    for (const char* name : {"vramwatch_gpu_memory_total_bytes", "vramwatch_gpu_up", "vramwatch_gpu_sample_age_seconds",
                             "vramwatch_xid_events_total", "vramwatch_gpu_verdict"}) {
      EXPECT_EQ(gpus_of[name], (std::set<std::string>{"0", "1"})) << name << " (case " << why << ")";
    }
  }
}

// The dashboard and the recording rules select hosts by `hostname`: a series without it vanishes
// from every host-filtered panel.
TEST(PrometheusText, EverySampleCarriesTheHostname) {
  DaemonState s = testing::MakeDaemonState(2, 1);
  std::string text = RenderPrometheus(s, s.t);
  size_t samples = 0;
  std::set<std::string> families;
  for (const auto& l : Lines(text)) {
    if (l.empty() || l[0] == '#') continue;
    ++samples;
    families.insert(l.substr(0, l.find_first_of("{ ")));
    EXPECT_THAT(l, HasSubstr("hostname=\"node-7\"")) << "no hostname label: " << l;
  }
  EXPECT_GT(samples, 50u);
  EXPECT_TRUE(families.count("vramwatch_nvml_call_duration_seconds_bucket"));
  EXPECT_TRUE(families.count("vramwatch_nvml_errors_total"));
  EXPECT_TRUE(families.count("vramwatch_kernel_log_up"));
}

TEST(PrometheusText, KernelLogUpIsOneWhileReadZeroWhenBlindAbsentWhenSkipped) {
  DaemonState s = testing::MakeDaemonState(1, 0);
  s.kernel_log_up = true;
  EXPECT_THAT(RenderPrometheus(s, s.t), HasSubstr("\nvramwatch_kernel_log_up{hostname=\"node-7\"} 1\n"));
  s.kernel_log_up = false;
  EXPECT_THAT(RenderPrometheus(s, s.t), HasSubstr("\nvramwatch_kernel_log_up{hostname=\"node-7\"} 0\n"));
  s.kernel_log_up = std::nullopt;  // --kernel-log none: no series, so no "blind" alert
  EXPECT_THAT(RenderPrometheus(s, s.t), Not(HasSubstr("vramwatch_kernel_log_up")));
}

// A live daemon serves its --interval, against which the stale rule judges a GPU's sample age;
// a replay has none.
TEST(PrometheusText, SampleIntervalIsServedForALiveDaemonOnly) {
  DaemonState s = testing::MakeDaemonState(1, 0);
  EXPECT_THAT(RenderPrometheus(s, s.t), Not(HasSubstr("vramwatch_sample_interval_seconds")));
  s.sample_interval_s = 300;
  EXPECT_THAT(RenderPrometheus(s, s.t), HasSubstr("\nvramwatch_sample_interval_seconds{hostname=\"node-7\"} 300\n"));
}

// increase() over a series that appears at 1 is 0: the hardware Xid counters exist at 0 on every
// GPU before their first event; codes seen are counted as before.
TEST(PrometheusText, HardwareXidCountersStartAtZeroOnEveryGpu) {
  DaemonState s = testing::MakeDaemonState(2, 0);
  s.gpus[1].xid_events[13] = 4;
  std::string text = RenderPrometheus(s, s.t);
  auto value_of = [&](const std::string& gpu, const std::string& xid) -> std::string {
    for (const auto& l : Lines(text)) {
      if (l.rfind("vramwatch_xid_events_total{gpu=\"" + gpu + "\"", 0) == 0 &&
          l.find(",xid=\"" + xid + "\"}") != std::string::npos) {
        return l.substr(l.rfind(' ') + 1);
      }
    }
    return "absent";
  };
  EXPECT_EQ(value_of("0", "79"), "2");
  EXPECT_EQ(value_of("1", "79"), "0");
  for (const char* hw : {"48", "63", "64", "74", "92", "94", "95", "119", "120", "140"}) {
    EXPECT_EQ(value_of("0", hw), "0") << "Xid " << hw;
    EXPECT_EQ(value_of("1", hw), "0") << "Xid " << hw;
  }
  EXPECT_EQ(value_of("1", "13"), "4");
  EXPECT_EQ(value_of("0", "13"), "absent");  // application codes only once seen
  // Under --kernel-log none nothing is read: no code is claimed at 0, counts seen stay.
  s.kernel_log_up = std::nullopt;
  text = RenderPrometheus(s, s.t);
  EXPECT_EQ(value_of("1", "48"), "absent");
  EXPECT_EQ(value_of("1", "79"), "absent");
  EXPECT_EQ(value_of("0", "79"), "2");
  EXPECT_EQ(value_of("1", "13"), "4");
  // A kernel log that cannot be read reads nothing either ...
  s.kernel_log_up = false;
  text = RenderPrometheus(s, s.t);
  EXPECT_EQ(value_of("1", "79"), "absent");
  // ... unless NVML's event API stands in for it.
  s.xid_events_from_nvml = true;
  text = RenderPrometheus(s, s.t);
  EXPECT_EQ(value_of("1", "79"), "0");
  EXPECT_THAT(text, HasSubstr("\nvramwatch_nvml_xid_events_up{hostname=\"node-7\"} 1\n"));
  s.xid_events_from_nvml = false;
  EXPECT_THAT(RenderPrometheus(s, s.t), HasSubstr("\nvramwatch_nvml_xid_events_up{hostname=\"node-7\"} 0\n"));
  s.gpus[0].xid_events.clear();
  s.gpus[1].xid_events.clear();
  EXPECT_THAT(RenderPrometheus(s, s.t), Not(HasSubstr("vramwatch_xid_events_total"))) << "no family without a sample";
}

// A MIG GPU instance's memory is what its processes run out of: served per instance (once, not
// per compute instance), its use only while the GPU is up.
TEST(PrometheusText, MigInstancesServeTheirOwnMemory) {
  DaemonState s = testing::MakeDaemonState(1, 0);
  GpuSnapshot& g = s.gpus[0].snapshot;
  g.mig_enabled = true;
  MigDeviceSnapshot a;
  a.gpu_instance_id = 1;
  a.compute_instance_id = 0;
  a.uuid = "MIG-aaaa";
  a.name = "NVIDIA H100 80GB HBM3 MIG 3g.40gb";
  a.memory_total_bytes = 40ull << 30;
  a.memory_used_bytes = 12ull << 30;
  MigDeviceSnapshot a2 = a;  // a second compute instance of the same GPU instance
  a2.compute_instance_id = 1;
  a2.uuid = "MIG-aaab";
  MigDeviceSnapshot b = a;
  b.gpu_instance_id = 2;
  b.uuid = "MIG-bbbb";
  b.name = "NVIDIA H100 80GB HBM3 MIG 1g.10gb";
  b.memory_total_bytes = 10ull << 30;
  b.memory_used_bytes.reset();  // unknown: no sample, not 0
  g.mig_devices = {a, a2, b};
  std::string text = RenderPrometheus(s, s.t);
  EXPECT_THAT(text, HasSubstr("# TYPE vramwatch_mig_instance_memory_total_bytes gauge\n"));
  EXPECT_THAT(text,
              HasSubstr(",hostname=\"node-7\",gpu_instance_id=\"1\",mig_profile=\"3g.40gb\",mig_uuid=\"MIG-aaaa\"} "
                        "42949672960\n"));
  EXPECT_THAT(text, HasSubstr(",gpu_instance_id=\"2\",mig_profile=\"1g.10gb\",mig_uuid=\"MIG-bbbb\"} 10737418240\n"));
  EXPECT_THAT(text, HasSubstr("vramwatch_mig_instance_memory_used_bytes{gpu=\"0\""));
  EXPECT_THAT(text, HasSubstr(",mig_uuid=\"MIG-aaaa\"} 12884901888\n"));
  EXPECT_THAT(text, Not(HasSubstr("MIG-aaab"))) << "one series per GPU instance";
  size_t used = 0;
  for (const std::string& line : Lines(text)) used += MetricName(line) == "vramwatch_mig_instance_memory_used_bytes";
  EXPECT_EQ(used, 1u) << "instance 2's use is unknown: no sample";
  s.gpus[0].stale = true;
  text = RenderPrometheus(s, s.t);
  EXPECT_THAT(text, Not(HasSubstr("vramwatch_mig_instance_memory_used_bytes"))) << "a GPU that is not up";
  EXPECT_THAT(text, HasSubstr("vramwatch_mig_instance_memory_total_bytes"));
  EXPECT_THAT(RenderPrometheus(testing::MakeDaemonState(1, 0), s.t), Not(HasSubstr("vramwatch_mig_instance")));
}

// MIG devices whose GPU instance id is unknown are not folded into one instance (as if all were
// instance 0): each is its own series, told apart by its MIG UUID, with an empty gpu_instance_id.
TEST(PrometheusText, MigDevicesWithoutAnInstanceIdAreNotFoldedTogether) {
  DaemonState s = testing::MakeDaemonState(1, 0);
  GpuSnapshot& g = s.gpus[0].snapshot;
  g.mig_enabled = true;
  for (const char* uuid : {"MIG-aaaa", "MIG-bbbb", "MIG-cccc"}) {
    MigDeviceSnapshot m;
    m.compute_instance_id = 0;
    m.uuid = uuid;
    m.name = "NVIDIA H100 80GB HBM3 MIG 1g.10gb";
    m.memory_total_bytes = 10ull << 30;
    m.memory_used_bytes = 1ull << 30;
    g.mig_devices.push_back(m);
  }
  MigDeviceSnapshot zero = g.mig_devices[0];  // a real instance 0 stays apart from them
  zero.gpu_instance_id = 0;
  zero.uuid = "MIG-0000";
  g.mig_devices.push_back(zero);
  const std::string text = RenderPrometheus(s, s.t);
  size_t total = 0, used = 0;
  for (const std::string& line : Lines(text)) {
    total += MetricName(line) == "vramwatch_mig_instance_memory_total_bytes";
    used += MetricName(line) == "vramwatch_mig_instance_memory_used_bytes";
  }
  EXPECT_EQ(total, 4u) << text;
  EXPECT_EQ(used, 4u) << text;
  for (const char* uuid : {"MIG-aaaa", "MIG-bbbb", "MIG-cccc"}) {
    EXPECT_THAT(text, HasSubstr(std::string(",gpu_instance_id=\"\",mig_profile=\"1g.10gb\",mig_uuid=\"") + uuid))
        << text;
  }
  EXPECT_THAT(text, HasSubstr(",gpu_instance_id=\"0\",mig_profile=\"1g.10gb\",mig_uuid=\"MIG-0000\"")) << text;
}

// Per MIG GPU instance: the used memory no process listed on it owns, with the instance's labels;
// absent (not 0) for an instance where it could not be computed, and while the GPU is not up.
TEST(PrometheusText, MigInstancesServeTheirUnattributedMemory) {
  DaemonState s = testing::MakeDaemonState(1, 0);
  GpuSnapshot& g = s.gpus[0].snapshot;
  g.mig_enabled = true;
  MigDeviceSnapshot a;
  a.gpu_instance_id = 1;
  a.compute_instance_id = 0;
  a.uuid = "MIG-aaaa";
  a.name = "NVIDIA H100 80GB HBM3 MIG 3g.40gb";
  a.memory_total_bytes = 40ull << 30;
  a.memory_used_bytes = 12ull << 30;
  MigDeviceSnapshot b = a;
  b.gpu_instance_id = 2;
  b.uuid = "MIG-bbbb";
  g.mig_devices = {a, b};
  s.gpus[0].mig_unattributed_bytes = {{1, 3ull << 30}};  // instance 2 could not be judged
  std::string text = RenderPrometheus(s, s.t);
  EXPECT_THAT(text, HasSubstr("# TYPE vramwatch_mig_instance_memory_unattributed_bytes gauge\n"));
  EXPECT_THAT(text, HasSubstr("vramwatch_mig_instance_memory_unattributed_bytes{gpu=\"0\""));
  EXPECT_THAT(text, HasSubstr(",gpu_instance_id=\"1\",mig_profile=\"3g.40gb\",mig_uuid=\"MIG-aaaa\"} 3221225472\n"));
  size_t n = 0;
  for (const std::string& line : Lines(text))
    n += MetricName(line) == "vramwatch_mig_instance_memory_unattributed_bytes";
  EXPECT_EQ(n, 1u) << text;
  // The status gives each instance the same figure, read with its process list (the snapshot's
  // instance use is newer than its processes between two process refreshes): null where /metrics
  // serves none.
  const nlohmann::ordered_json j = StatusJson(s);
  ASSERT_EQ(j["gpus"][0]["mig_devices"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["mig_devices"][0]["memory_unattributed_bytes"], 3ull << 30);
  EXPECT_TRUE(j["gpus"][0]["mig_devices"][1]["memory_unattributed_bytes"].is_null());
  s.gpus[0].stale = true;
  EXPECT_THAT(RenderPrometheus(s, s.t), Not(HasSubstr("vramwatch_mig_instance_memory_unattributed_bytes")));
}

// On a MIG GPU the process series carry the process's gpu_instance_id (last, after the labels every
// process series has); on a GPU without MIG the label set is unchanged.
TEST(PrometheusText, ProcessSeriesOfAMigGpuCarryTheirGpuInstance) {
  DaemonState s = testing::MakeDaemonState(2, 1);
  const std::string plain = RenderPrometheus(s, s.t);
  s.gpus[1].snapshot.mig_enabled = true;
  s.gpus[1].snapshot.processes[0].gpu_instance_id = 5;
  const std::string text = RenderPrometheus(s, s.t);
  size_t with = 0, without = 0;
  for (const std::string& line : Lines(text)) {
    if (MetricName(line).rfind("vramwatch_process_", 0) != 0 || line[0] == '#') continue;
    const bool mig = line.find("gpu=\"1\"") != std::string::npos;
    EXPECT_EQ(line.find("gpu_instance_id=\"5\"") != std::string::npos, mig) << line;
    (mig ? with : without) += 1;
  }
  EXPECT_GT(with, 0u);
  EXPECT_GT(without, 0u);
  EXPECT_THAT(text, HasSubstr(",gpu_instance_id=\"5\"} "));
  for (const std::string& line : Lines(plain)) {
    if (line.find("gpu=\"0\"") == std::string::npos) continue;
    EXPECT_THAT(text, HasSubstr(line)) << "GPU 0 is unchanged";
  }
}

TEST(PrometheusText, PassesPromtoolCheckMetrics) {
  CommandResult which = RunShell("command -v promtool");
  ASSERT_EQ(which.exit_code, 0) << "promtool is not on PATH; install Debian's 'prometheus' package "
                                   "(scripts/bootstrap does) to run this test";
  DaemonState s = testing::MakeDaemonState(8, 12);
  s.gpus[3].stale = true;
  s.gpus[4].analysis.load_rise_bps = 349525.0;
  s.gpus[5].snapshot.processes[2].info.state = ProcState::kZombie;
  s.gpus[5].snapshot.processes[3].info.command = "weird \"name\" with \\ and \n newline \xff";
  MigDeviceSnapshot m;
  m.gpu_instance_id = 3;
  m.uuid = "MIG-cccc";
  m.name = "NVIDIA H100 80GB HBM3 MIG 2g.20gb";
  m.memory_total_bytes = 20ull << 30;
  m.memory_used_bytes = 1ull << 30;
  s.gpus[6].snapshot.mig_devices = {m, m};
  s.gpus[7].snapshot.mig_devices = {m};
  std::string text = RenderPrometheus(s, s.t);
  char tmpl[] = "/tmp/vw_metrics_XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  CommandResult r = RunShell(std::string("promtool check metrics < ") + tmpl);
  unlink(tmpl);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("error"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace vw::outputs
