#include "outputs/framework_plot.h"

#include <gtest/gtest.h>

#include <cmath>

#include "outputs/html_report.h"
#include "outputs/testing/framework_fixtures.h"
#include "outputs/testing/series_fixtures.h"

namespace vw::outputs {
namespace {

using testing::RestartThenTensorLeak;
using testing::TwoDevicesFlat;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

const detection::LayerTrend* Layer(const detection::FrameworkSplit& d, const std::string& name) {
  for (const auto& t : d.layers) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

TEST(FrameworkChart, TheFixtureIsJudgedAsItSays) {
  const FrameworkReport r = RestartThenTensorLeak();
  ASSERT_EQ(r.devices.size(), 1u);
  const auto& d = r.devices[0];
  EXPECT_EQ(d.verdict, detection::FrameworkVerdict::kGrowing);
  EXPECT_EQ(d.layer, detection::FrameworkLayer::kApplication);
  EXPECT_EQ(d.first_step, 15u) << "the steps before the restart are left out";
  EXPECT_EQ(d.steps, 40u);
  const auto* allocated = Layer(d, "allocated");
  ASSERT_NE(allocated, nullptr);
  ASSERT_TRUE(allocated->rate_bytes_per_step && allocated->intercept_bytes);
  EXPECT_NEAR(*allocated->rate_bytes_per_step, 50 * kMiB, 1 * kMiB);
  EXPECT_NEAR(*allocated->intercept_bytes, 512 * kMiB, 4 * kMiB) << "Sen's line at the first step judged";
}

TEST(FrameworkChart, LinesOnlyForTheLayersTheLogPrints) {
  const FrameworkReport r = RestartThenTensorLeak();
  const auto steps = DeviceSteps(r, 0);
  const FrameworkChartLayout L = LayoutFrameworkChart(r.source, r.devices[0], steps);
  ASSERT_EQ(L.lines.size(), 2u);
  EXPECT_EQ(L.lines[0].role, "allocated");
  EXPECT_EQ(L.lines[1].role, "reserved");
  // Step 1 at the left edge of the plot, the last step at the right; 0 bytes at the bottom.
  EXPECT_DOUBLE_EQ(L.x(1), L.plot.x);
  EXPECT_DOUBLE_EQ(L.x(static_cast<double>(steps.size())), L.plot.right());
  EXPECT_DOUBLE_EQ(L.y(0), L.plot.bottom());
  EXPECT_DOUBLE_EQ(L.lines[0].points.front().x, L.plot.x);
  EXPECT_NEAR(L.lines[0].points.front().y, L.y(2 * kGiB), 0.01);
  // The y axis holds the highest value (13 GiB reserved before the restart).
  EXPECT_GE(L.y.domain_hi(), 13 * kGiB);
  for (const auto& t : L.x_ticks) EXPECT_EQ(t.value, std::floor(t.value)) << "steps are whole";
  EXPECT_GE(L.x_ticks.size(), 3u);
}

TEST(FrameworkChart, DrawsSensLineOfEachRisingLayerOverTheStepsJudged) {
  const FrameworkReport r = RestartThenTensorLeak();
  const auto& d = r.devices[0];
  const FrameworkChartLayout L = LayoutFrameworkChart(r.source, d, DeviceSteps(r, 0));
  ASSERT_FALSE(L.trends.empty());
  for (const auto& t : L.trends) {
    const auto* layer = Layer(d, t.layer);
    ASSERT_NE(layer, nullptr) << t.layer;
    EXPECT_TRUE(layer->rising) << t.layer;
    // From the first step judged (the 16th) to the last, along intercept + rate · j.
    EXPECT_NEAR(t.from.x, L.x(16), 0.01);
    EXPECT_NEAR(t.to.x, L.x(55), 0.01);
    EXPECT_NEAR(L.y.Invert(t.from.y), *layer->intercept_bytes, 1.0);
    EXPECT_NEAR(L.y.Invert(t.to.y), *layer->intercept_bytes + 39 * *layer->rate_bytes_per_step, 1.0);
  }
  ASSERT_TRUE(L.restart_x.has_value());
  EXPECT_NEAR(*L.restart_x, L.x(16), 0.01);
  ASSERT_EQ(L.labels.size(), 1u);
  EXPECT_EQ(L.labels[0].text, "restart");
  EXPECT_NE(L.title.find("train.log · device 0 — growing in the application's live tensors"), std::string::npos);
  EXPECT_EQ(L.title.find("logs/"), std::string::npos) << "the title names the file, not its directories";
  std::string subtitle;
  for (const auto& line : L.subtitle_lines) subtitle += line + " ";
  EXPECT_NE(subtitle.find("40 steps judged (lines 16–55)"), std::string::npos) << subtitle;
  EXPECT_NE(subtitle.find("15 steps before a restart left out"), std::string::npos) << subtitle;
  EXPECT_NE(subtitle.find("allocated +50"), std::string::npos) << subtitle;
}

TEST(FrameworkChart, NothingRisingDrawsNoTrendAndNoRestart) {
  const FrameworkReport r = TwoDevicesFlat();
  ASSERT_EQ(r.devices.size(), 2u);
  for (const auto& d : r.devices) {
    EXPECT_EQ(d.verdict, detection::FrameworkVerdict::kFlat);
    const FrameworkChartLayout L = LayoutFrameworkChart(r.source, d, DeviceSteps(r, d.device));
    EXPECT_TRUE(L.trends.empty());
    EXPECT_FALSE(L.restart_x.has_value());
    ASSERT_EQ(L.lines.size(), 3u);
    EXPECT_EQ(L.lines[2].role, "driver");
    EXPECT_EQ(L.x_title.text, "step of device " + std::to_string(d.device) + " in the log");
  }
}

TEST(FrameworkChart, SvgCarriesItsRolesAndData) {
  const FrameworkReport r = RestartThenTensorLeak();
  const std::string svg = RenderFrameworkChart(r, r.devices[0]);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_EQ(Count(svg, "xmlns=\"http://www.w3.org/2000/svg\""), 1u);
  EXPECT_NE(svg.find("<style>"), std::string::npos);
  EXPECT_NE(svg.find("data-source=\"logs/train.log\" data-device=\"0\" data-verdict=\"growing\" "
                     "data-layer=\"application\""),
            std::string::npos);
  for (const char* role : {"allocated", "reserved", "trend", "restart", "legend", "x-axis", "y-axis"}) {
    EXPECT_NE(svg.find(std::string("data-role=\"") + role + "\""), std::string::npos) << role;
  }
  EXPECT_EQ(svg.find("data-role=\"driver\""), std::string::npos) << "the log prints no driver figure";
  EXPECT_NE(svg.find("data-role=\"trend\" data-layer=\"allocated\""), std::string::npos);
  // Trends are drawn first, so each layer's own line stays on top of its fit.
  EXPECT_LT(svg.find("data-role=\"trend\""), svg.find("data-role=\"allocated\""));
}

TEST(FrameworkChart, EscapesTheSource) {
  const FrameworkReport r = RestartThenTensorLeak("dir/<a&b>.log");
  const std::string svg = RenderFrameworkChart(r, r.devices[0]);
  EXPECT_NE(svg.find("data-source=\"dir/&lt;a&amp;b&gt;.log\""), std::string::npos);
  EXPECT_EQ(svg.find("<a&b>"), std::string::npos);
}

TEST(FrameworkChart, FigureHoldsTracesAndLogsAsCells) {
  const std::vector<FrameworkReport> logs = {RestartThenTensorLeak(), TwoDevicesFlat()};
  std::vector<SvgCell> cells;
  const auto gpus = testing::TwoGpus();
  for (const auto& s : gpus) cells.push_back([&s](const SvgOptions& o) { return RenderSvgChart(s, o); });
  for (auto& c : FrameworkCells(logs)) cells.push_back(std::move(c));
  ASSERT_EQ(cells.size(), 5u) << "two GPUs, then one chart per device of each log";
  const std::string svg = RenderSvgFigure(cells);
  EXPECT_EQ(Count(svg, "<svg "), 6u) << "one figure holding five charts";
  EXPECT_EQ(Count(svg, "<style>"), 1u);
  EXPECT_EQ(Count(svg, "xmlns="), 1u);
  EXPECT_EQ(Count(svg, "<?xml"), 1u);
  EXPECT_EQ(Count(svg, "class=\"vw-chart vw-framework-chart"), 3u);
  EXPECT_NE(svg.find("data-source=\"flat.log\" data-device=\"1\" data-verdict=\"flat\" x=\""), std::string::npos);
}

TEST(FrameworkChart, OneLogAloneIsAChartOfItsOwn) {
  const std::vector<FrameworkReport> logs = {RestartThenTensorLeak()};
  const std::string svg = RenderSvgFigure(FrameworkCells(logs));
  EXPECT_EQ(Count(svg, "<svg "), 1u);
  EXPECT_EQ(svg, RenderFrameworkChart(logs[0], logs[0].devices[0]));
}

TEST(FrameworkHtml, EachDeviceIsASectionWithItsChartAndEvidence) {
  const std::vector<FrameworkReport> logs = {RestartThenTensorLeak(), TwoDevicesFlat()};
  const std::string page = RenderHtmlReport({}, {}, logs);
  EXPECT_EQ(Count(page, "<section class=\"vw-framework\""), 3u);
  EXPECT_EQ(Count(page, "<section class=\"vw-series\""), 0u);
  EXPECT_NE(page.find("<section class=\"vw-framework\" data-source=\"logs/train.log\" data-device=\"0\" "
                      "data-verdict=\"growing\" data-layer=\"application\">"),
            std::string::npos);
  EXPECT_NE(page.find("<section class=\"vw-framework\" data-source=\"flat.log\" data-device=\"1\" "
                      "data-verdict=\"flat\">"),
            std::string::npos);
  EXPECT_NE(page.find("<span title=\"logs/train.log\">train.log · device 0</span>"), std::string::npos);
  EXPECT_NE(page.find("3 devices of PyTorch memory logs, 1 growing"), std::string::npos);
  EXPECT_EQ(page.find("0 series"), std::string::npos) << "no traces: no count of them";
  EXPECT_EQ(Count(page, "<svg "), 3u);
  EXPECT_EQ(page.find("xmlns="), std::string::npos) << "inline SVG in HTML needs no namespace";
  // The evidence and the next step, as the text report gives them.
  const auto& d = logs[0].devices[0];
  ASSERT_FALSE(d.evidence.empty());
  for (const auto& e : d.evidence) EXPECT_NE(page.find("<li>" + XmlEscape(e) + "</li>"), std::string::npos) << e;
  EXPECT_NE(page.find("Next: "), std::string::npos);
}

TEST(FrameworkHtml, TracesAndLogsShareThePage) {
  const std::vector<FrameworkReport> logs = {RestartThenTensorLeak()};
  const std::string page = RenderHtmlReport(testing::TwoGpus(), {}, logs);
  EXPECT_EQ(Count(page, "<section class=\"vw-series\""), 2u);
  EXPECT_EQ(Count(page, "<section class=\"vw-framework\""), 1u);
  EXPECT_NE(page.find("2 series, 1 leaking · 1 device of PyTorch memory logs, 1 growing"), std::string::npos);
  EXPECT_LT(page.find("class=\"vw-series\""), page.find("class=\"vw-framework\"")) << "traces first";
}

}  // namespace
}  // namespace vw::outputs
