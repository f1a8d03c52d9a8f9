// The shipped Prometheus rules and Grafana dashboard must only use metrics the daemon serves (and
// recording rules the rules file defines): a renamed metric would otherwise silently blank a panel
// or disable an alert.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "outputs/daemon_state_testing.h"
#include "outputs/prometheus_text.h"
#include "sources/kernel/xid_catalog.h"

namespace vw::outputs {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::set<std::string> Matches(const std::string& text, const std::regex& re) {
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    out.insert((*it)[0].str());
  }
  return out;
}

// A state with every optional value present, so that every family the daemon can serve is rendered.
DaemonState StateServingEveryFamily() {
  DaemonState s = testing::MakeDaemonState(2, 2);
  s.gpus[0].analysis.baseline_bytes = 1e9;
  s.gpus[1].analysis.load_rise_bps = 349525.0;      // a swinging load's rise worth watching
  SeriesVerdict process_leak = s.gpus[0].analysis;  // a leaking process: its own rate and runway
  s.gpus[0].process_analysis[std::to_string(s.gpus[0].snapshot.processes[0].pid)] = process_leak;
  MigDeviceSnapshot mig;  // a MIG GPU instance
  mig.name = "NVIDIA H100 80GB HBM3 MIG 3g.40gb";
  mig.memory_total_bytes = 40ull << 30;
  mig.memory_used_bytes = 1ull << 30;
  s.gpus[1].snapshot.mig_devices = {mig};
  s.sample_interval_s = 1;  // a live daemon
  return s;
}

// Every family the daemon can serve.
std::set<std::string> ServedFamilies() {
  DaemonState s = StateServingEveryFamily();
  std::string text = RenderPrometheus(s, s.t);
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# TYPE ", 0) == 0) out.insert(line.substr(7, line.find(' ', 7) - 7));
  }
  return out;
}

bool Served(const std::set<std::string>& families, std::string name) {
  if (families.count(name)) return true;
  for (const std::string sfx : {"_bucket", "_sum", "_count"}) {
    if (name.size() > sfx.size() && name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0 &&
        families.count(name.substr(0, name.size() - sfx.size()))) {
      return true;
    }
  }
  return false;
}

const std::regex kMetric("vramwatch_[a-z0-9_]+");
const std::regex kRecorded("vramwatch:[a-z0-9_:]+");

TEST(DeployConsistency, RulesUseOnlyServedMetrics) {
  const std::string rules = ReadFile(std::string(VRAMWATCH_SOURCE_DIR) + "/deploy/prometheus/vramwatch-rules.yml");
  auto families = ServedFamilies();
  auto used = Matches(rules, kMetric);
  ASSERT_GE(used.size(), 6u);
  for (const auto& m : used) EXPECT_TRUE(Served(families, m)) << m << " is used by a rule but never served";
}

TEST(DeployConsistency, DashboardUsesOnlyServedMetricsAndDefinedRecordings) {
  const std::string rules = ReadFile(std::string(VRAMWATCH_SOURCE_DIR) + "/deploy/prometheus/vramwatch-rules.yml");
  std::set<std::string> recorded;
  std::regex record_line("record: (vramwatch:[a-z0-9_:]+)");
  for (auto it = std::sregex_iterator(rules.begin(), rules.end(), record_line); it != std::sregex_iterator(); ++it) {
    recorded.insert((*it)[1].str());
  }
  ASSERT_FALSE(recorded.empty());
  auto dash =
      nlohmann::json::parse(ReadFile(std::string(VRAMWATCH_SOURCE_DIR) + "/deploy/grafana/vramwatch-dashboard.json"));
  ASSERT_TRUE(dash["panels"].is_array());
  std::string exprs;
  for (const auto& p : dash["panels"]) {
    ASSERT_TRUE(p.contains("targets")) << p["title"];
    for (const auto& t : p["targets"]) exprs += t["expr"].get<std::string>() + "\n";
  }
  auto families = ServedFamilies();
  auto metrics = Matches(exprs, kMetric);
  ASSERT_GE(metrics.size(), 8u);
  for (const auto& m : metrics) EXPECT_TRUE(Served(families, m)) << m << " is on the dashboard but never served";
  for (const auto& r : Matches(exprs, kRecorded)) {
    EXPECT_TRUE(recorded.count(r)) << r << " is on the dashboard but no rule records it";
  }
}

// Every expression of the dashboard: panel targets and template variable queries.
std::vector<std::string> DashboardExpressions() {
  auto dash =
      nlohmann::json::parse(ReadFile(std::string(VRAMWATCH_SOURCE_DIR) + "/deploy/grafana/vramwatch-dashboard.json"));
  std::vector<std::string> out;
  for (const auto& p : dash["panels"]) {
    for (const auto& t : p["targets"]) out.push_back(t["expr"].get<std::string>());
  }
  for (const auto& v : dash["templating"]["list"]) {
    if (v.contains("query") && v["query"].is_object()) out.push_back(v["query"]["query"].get<std::string>());
  }
  return out;
}

// name -> the label names of each rendered sample of that name (histogram series by their own
// _bucket/_sum/_count names).
std::map<std::string, std::vector<std::set<std::string>>> ServedLabelSets(const std::string& text) {
  std::map<std::string, std::vector<std::set<std::string>>> out;
  const std::regex label_name("([a-zA-Z_][a-zA-Z0-9_]*)=\"");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t brace = line.find('{');
    const std::string name = line.substr(0, std::min(brace, line.find(' ')));
    std::set<std::string> names;
    if (brace != std::string::npos) {
      // Label values are escaped and never hold `="` unescaped after a name... except inside a
      // value; the fixture's values hold no such text, so a plain scan is exact here.
      const std::string labels = line.substr(brace, line.rfind('}') - brace);
      for (auto it = std::sregex_iterator(labels.begin(), labels.end(), label_name); it != std::sregex_iterator(); ++it)
        names.insert((*it)[1].str());
    }
    out[name].push_back(std::move(names));
  }
  return out;
}

// docs/watch.md names every family the daemon serves (its metric tables), so that a new one is
// documented with its labels.
TEST(DeployConsistency, TheWatchDocsNameEveryServedFamily) {
  const std::string docs = ReadFile(std::string(VRAMWATCH_SOURCE_DIR) + "/docs/watch.md");
  size_t checked = 0;
  for (const std::string& family : ServedFamilies()) {
    EXPECT_NE(docs.find("| `" + family + "` |"), std::string::npos) << family << " has no row in docs/watch.md";
    ++checked;
  }
  EXPECT_GT(checked, 25u);
}

// A selector such as vramwatch_nvml_call_duration_seconds_bucket{hostname=~"$hostname"} matches
// nothing when the daemon does not put `hostname` on that series: the panel is empty for every
// host. Each label a dashboard selector matches on must be on every sample of that metric.
TEST(DeployConsistency, DashboardLabelMatchersExistOnEveryServedSeries) {
  DaemonState s = StateServingEveryFamily();
  const auto served = ServedLabelSets(RenderPrometheus(s, s.t));
  const std::regex selector("(vramwatch_[a-z0-9_]+)\\{([^}]*)\\}");
  const std::regex matcher("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)");
  size_t checked = 0;
  for (const std::string& expr : DashboardExpressions()) {
    for (auto it = std::sregex_iterator(expr.begin(), expr.end(), selector); it != std::sregex_iterator(); ++it) {
      const std::string metric = (*it)[1].str();
      const std::string matchers = (*it)[2].str();
      auto series = served.find(metric);
      ASSERT_TRUE(series != served.end()) << metric << " (in " << expr << ") is never served";
      for (auto m = std::sregex_iterator(matchers.begin(), matchers.end(), matcher); m != std::sregex_iterator(); ++m) {
        const std::string label = (*m)[1].str();
        for (const auto& names : series->second) {
          EXPECT_TRUE(names.count(label))
              << metric << " is served without the label `" << label << "` that the dashboard selects on: " << expr;
        }
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 20u);
}

// The leak-rate panel plots a bytes-per-hour series: its unit must say per hour.
TEST(DeployConsistency, PerHourSeriesArePlottedWithAPerHourUnit) {
  auto dash =
      nlohmann::json::parse(ReadFile(std::string(VRAMWATCH_SOURCE_DIR) + "/deploy/grafana/vramwatch-dashboard.json"));
  size_t per_hour = 0;
  for (const auto& p : dash["panels"]) {
    bool plots_per_hour = false;
    for (const auto& t : p["targets"])
      plots_per_hour |= t["expr"].get<std::string>().find("_per_hour") != std::string::npos;
    if (!plots_per_hour) continue;
    ++per_hour;
    const std::string unit = p["fieldConfig"]["defaults"].value("unit", "");
    EXPECT_TRUE(unit.size() > 2 && unit.compare(unit.size() - 2, 2, "/h") == 0)
        << p["title"] << ": unit '" << unit << "' does not say per hour";
  }
  EXPECT_GE(per_hour, 1u);
}

// The rules page on the hardware Xid set by its codes; the daemon serves those counters at 0 from
// the start. Both come from the Xid catalog and must name the same codes.
TEST(DeployConsistency, HardwareXidRuleNamesTheCatalogsHardwareSet) {
  const std::string rules = ReadFile(std::string(VRAMWATCH_SOURCE_DIR) + "/deploy/prometheus/vramwatch-rules.yml");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(rules, m, std::regex("vramwatch_xid_events_total\\{xid=~\"([0-9|]+)\"\\}")));
  std::set<int> in_rule;
  std::stringstream codes(m[1].str());
  for (std::string c; std::getline(codes, c, '|');) in_rule.insert(std::stoi(c));
  std::set<int> catalog;
  for (int code = 1; code < 1000; ++code) {
    const kernel::XidInfo* info = kernel::LookupXid(code);
    if (info != nullptr && info->hardware()) catalog.insert(code);
  }
  EXPECT_EQ(in_rule, catalog);
}

// The DaemonSet names series by the node (not the pod), users from the host's passwd, pods from
// the host's kubelet log directory, and reads a kernel log: each file flag points into a volume
// that is mounted.
TEST(DeployConsistency, DaemonSetPassesNodeNamePasswdKubeLogsAndKernelLogFromMountedPaths) {
  const std::string ds = ReadFile(std::string(VRAMWATCH_SOURCE_DIR) + "/deploy/kubernetes/daemonset.yaml");
  EXPECT_NE(ds.find("- --hostname=$(NODE_NAME)\n"), std::string::npos);
  EXPECT_TRUE(
      std::regex_search(ds, std::regex("name: NODE_NAME\\s+valueFrom:\\s+fieldRef:\\s+fieldPath: spec.nodeName")));
  std::set<std::string> mounts;
  const std::regex mount("mountPath: (\\S+)");
  for (auto it = std::sregex_iterator(ds.begin(), ds.end(), mount); it != std::sregex_iterator(); ++it) {
    mounts.insert((*it)[1].str());
  }
  for (const char* flag : {"--passwd", "--kernel-log", "--kube-logs"}) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(ds, m, std::regex(std::string("- ") + flag + "=(\\S+)"))) << flag << " not passed";
    const std::string path = m[1].str();
    bool mounted = false;
    for (const std::string& mp : mounts) mounted |= path == mp || path.rfind(mp + "/", 0) == 0;
    EXPECT_TRUE(mounted) << flag << "=" << path << " is not under any mountPath";
  }
}

// The Prometheus Operator gives every target of a ServiceMonitor the labels namespace, service,
// pod, container, endpoint, job and instance: those of the vramwatch pod itself. A served label of
// the same name (the process series' pod, container and namespace: the GPU holder's) is then
// renamed exported_<name> and replaced by the daemon's own pod, unless the endpoint honours the
// served labels; the process leak alert would otherwise name the vramwatch pod as the leaking one.
TEST(DeployConsistency, ServiceMonitorKeepsTheHoldersPodAndContainerLabels) {
  DaemonState s = testing::MakeDaemonState(1, 2);
  const std::string text = RenderPrometheus(s, s.t);
  std::set<std::string> served;
  const std::regex label("[{,]([a-zA-Z_][a-zA-Z0-9_]*)=\"");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), label); it != std::sregex_iterator(); ++it) {
    served.insert((*it)[1].str());
  }
  std::vector<std::string> clashing;
  for (const char* target : {"namespace", "service", "pod", "container", "endpoint", "job", "instance"}) {
    if (served.count(target)) clashing.push_back(target);
  }
  ASSERT_FALSE(clashing.empty()) << "no served label clashes with a target label: this test can go";
  const std::string ds = ReadFile(std::string(VRAMWATCH_SOURCE_DIR) + "/deploy/kubernetes/daemonset.yaml");
  const size_t monitor = ds.find("kind: ServiceMonitor");
  ASSERT_NE(monitor, std::string::npos);
  EXPECT_TRUE(std::regex_search(ds.substr(monitor), std::regex("\\n\\s+honorLabels: true\\n")))
      << "the ServiceMonitor endpoint must set honorLabels: true, or the served label(s) "
      << ::testing::PrintToString(clashing) << " are overwritten with the vramwatch pod's own";
}

}  // namespace
}  // namespace vw::outputs
