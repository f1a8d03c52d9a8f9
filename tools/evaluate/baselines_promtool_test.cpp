// Cross-check: the baselines computed here must fire exactly when a real Prometheus rule engine
// fires them. For a few series (hand-made and generated) we compute our firing timeline, write it
// as the expected alerts of a `promtool test rules` unit test over the same samples and rules, and
// require promtool to agree at every evaluation.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "baselines.h"
#include "core/units.h"
#include "trace_generator.h"

namespace vw::evaluate {
namespace {

constexpr const char* kAlertNames[kBaselineCount] = {"Static90", "PredictLinear24h", "DerivPositive",
                                                     "DerivOnePercentPerHour"};

std::string RulesYaml(double total_bytes) {
  return fmt::format(
      "groups:\n"
      "  - name: gpu_memory\n"
      "    rules:\n"
      "      - alert: Static90\n"
      "        expr: used > 0.9 * {0:.0f}\n"
      "        for: 5m\n"
      "      - alert: PredictLinear24h\n"
      "        expr: predict_linear(used[1h], 86400) > {0:.0f}\n"
      "        for: 5m\n"
      "      - alert: DerivPositive\n"
      "        expr: deriv(used[1h]) > 0\n"
      "        for: 5m\n"
      "      - alert: DerivOnePercentPerHour\n"
      "        expr: deriv(used[1h]) > 0.01 * {0:.0f} / 3600\n"
      "        for: 5m\n",
      total_bytes);
}

// A promtool unit test expecting, at every evaluation, exactly the alerts our timeline fires.
std::string UnitTestYaml(const std::vector<ScrapedSample>& scraped, const BaselineTimeline& tl) {
  std::string values;
  for (const ScrapedSample& s : scraped) values += fmt::format("{:.0f} ", s.bytes);
  std::string out = fmt::format(
      "rule_files: [rules.yml]\n"
      "evaluation_interval: 1m\n"
      "tests:\n"
      "  - interval: 15s\n"
      "    input_series:\n"
      "      - series: 'used{{gpu=\"0\"}}'\n"
      "        values: '{}'\n"
      "    alert_rule_test:\n",
      values);
  for (size_t k = 0; k < tl.eval_t.size(); ++k) {
    for (size_t r = 0; r < kBaselineCount; ++r) {
      out += fmt::format("      - eval_time: {:.0f}s\n        alertname: {}\n", tl.eval_t[k], kAlertNames[r]);
      out +=
          tl.firing[r][k] ? "        exp_alerts:\n          - exp_labels: {gpu: \"0\"}\n" : "        exp_alerts: []\n";
    }
  }
  return out;
}

// Runs promtool on the series; returns its exit status and output.
std::pair<int, std::string> Promtool(const std::vector<ScrapedSample>& scraped, double total_bytes,
                                     const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("vw_promtool_test_{}_{}", ::getpid(), name);
  std::filesystem::create_directories(dir);
  PromConfig config;  // pure Prometheus: no trend grace
  const BaselineTimeline tl = EvaluateBaselines(scraped, total_bytes, config);
  std::ofstream(dir / "rules.yml") << RulesYaml(total_bytes);
  std::ofstream(dir / "test.yml") << UnitTestYaml(scraped, tl);
  const std::string cmd = fmt::format("cd '{}' && promtool test rules test.yml 2>&1", dir.string());
  std::string output;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) output.append(buf, n);
  const int status = ::pclose(p);
  std::filesystem::remove_all(dir);
  return {status, output.substr(0, 4000)};
}

// The tested series must make every rule both fire and not fire somewhere, or agreement means little.
void ExpectEveryRuleChanges(const std::vector<ScrapedSample>& scraped, double total_bytes, const char* what) {
  const BaselineTimeline tl = EvaluateBaselines(scraped, total_bytes, PromConfig{});
  for (size_t r = 0; r < kBaselineCount; ++r) {
    size_t firing = 0;
    for (bool f : tl.firing[r]) firing += f ? 1 : 0;
    EXPECT_GT(firing, 0u) << what << ": " << kAlertNames[r] << " never fires";
    EXPECT_LT(firing, tl.firing[r].size()) << what << ": " << kAlertNames[r] << " always fires";
  }
}

TEST(BaselinesPromtool, HandMadeRampStepAndSpikeAgreeWithPrometheus) {
  const double total = 80 * kGiB;
  std::vector<ScrapedSample> s;
  for (double t = 0; t <= 3 * 3600; t += 15) {
    double mib = 60000;
    if (t > 1800) mib += 9000 * std::min(1.0, (t - 1800) / 3600);  // ramp to 69000 MiB
    if (t >= 5400 && t < 6000) mib += 6000;                        // a 10-minute spike above 90 %
    if (t >= 8000) mib -= 1000;                                    // a drop
    mib += (static_cast<int>(t / 15) % 7) - 3;                     // a little jitter
    s.push_back({t, mib * kMiB});
  }
  ExpectEveryRuleChanges(s, total, "hand-made");
  const auto [status, output] = Promtool(s, total, "handmade");
  EXPECT_EQ(status, 0) << output;
}

TEST(BaselinesPromtool, GeneratedTracesAgreeWithPrometheus) {
  const TraceGenerator gen({.seed = 31, .min_hours = 2.5, .max_hours = 3, .min_interval_s = 5});
  for (Shape shape : {Shape::kServing, Shape::kLeakUnderSpikes, Shape::kPreallocated}) {
    const Trace t = gen.Generate(3, shape);
    const std::vector<ScrapedSample> s = ScrapeUniform(t.used_mib, t.label.interval_s, 15);
    const auto [status, output] = Promtool(s, t.label.total_bytes, std::string(ShapeName(shape)));
    EXPECT_EQ(status, 0) << ShapeName(shape) << ":\n" << output;
  }
}

}  // namespace
}  // namespace vw::evaluate
