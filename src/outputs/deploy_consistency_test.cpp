// The shipped Prometheus rules and Grafana dashboard must only use metrics the daemon serves (and
// recording rules the rules file defines): a renamed metric would otherwise silently blank a panel
// or disable an alert.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "outputs/daemon_state_testing.h"
#include "outputs/prometheus_text.h"

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

// Every family the daemon can serve: render a state with every optional value present.
std::set<std::string> ServedFamilies() {
  DaemonState s = testing::MakeDaemonState(2, 2);
  s.gpus[0].analysis.baseline_bytes = 1e9;
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

}  // namespace
}  // namespace vw::outputs
