// The HTML report in a real browser: fixture reports (a leak with evaluation spikes, a plateau,
// two GPUs) are written to the build folder, loaded by headless Chromium from file://, and the DOM
// it built is checked: one chart per GPU, the verdict, the OOM marker exactly for a leak, and that
// a report of three GPUs fits a narrow window. Light and dark screenshots are saved next to them
// (browser/report-*.png).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "chromium.h"
#include "outputs/html_report.h"
#include "outputs/testing/framework_fixtures.h"
#include "outputs/testing/series_fixtures.h"

namespace vw::browser_test {
namespace {

namespace fs = std::filesystem;
using outputs::testing::LeakWithEvalSpikes;
using outputs::testing::Plateau;
using outputs::testing::TwoGpus;

fs::path OutDir() {
  fs::path dir = fs::path(VRAMWATCH_BINARY_DIR) / "browser";
  fs::create_directories(dir);
  return dir;
}

// Writes the report, loads it in Chromium and returns the DOM it built.
std::string RenderAndLoad(const std::vector<detection::SeriesAnalysis>& series, const std::string& name,
                          const std::vector<outputs::FrameworkReport>& logs = {}) {
  outputs::HtmlReportOptions opt;
  opt.source = "fixture " + name;
  opt.generated_at = "2026-07-14 14:05";
  fs::path html = OutDir() / (name + ".html");
  std::ofstream(html) << outputs::RenderHtmlReport(series, opt, logs);
  DomResult r = DumpDom({.url = "file://" + html.string()});
  EXPECT_EQ(r.error, "");
  return r.dom;
}

void SaveScreenshots(const std::string& name, int width, int height) {
  fs::path html = OutDir() / (name + ".html");
  for (bool dark : {false, true}) {
    fs::path png = OutDir() / (name + (dark ? "-dark.png" : ".png"));
    EXPECT_EQ(
        Screenshot({.url = "file://" + html.string(), .width = width, .height = height, .dark = dark}, png.string()),
        "");
    EXPECT_GT(fs::file_size(png), 5000u) << png << " looks blank";
  }
}

TEST(ReportInBrowser, ChromiumIsInstalled) {
  ASSERT_TRUE(FindChromium().has_value())
      << "chromium is not on PATH: install Debian's `chromium` (scripts/bootstrap does for tests)";
}

TEST(ReportInBrowser, LeakReportShowsChartVerdictAndOomMarker) {
  std::string dom = RenderAndLoad({LeakWithEvalSpikes(0)}, "report-leak");
  ASSERT_FALSE(dom.empty());
  auto charts = Select(dom, "svg", "data-gpu");
  ASSERT_EQ(charts.size(), 1u);
  EXPECT_TRUE(charts[0].Has("data-gpu", "0"));
  EXPECT_TRUE(charts[0].Has("data-verdict", "leak"));
  auto oom = Select(dom, "*", "data-role", "oom");
  ASSERT_EQ(oom.size(), 1u);
  EXPECT_EQ(oom[0].tag, "circle") << "the OOM of this fixture falls inside the chart";
  EXPECT_EQ(Select(dom, "*", "data-role", "projection").size(), 1u);
  EXPECT_EQ(Select(dom, "*", "data-role", "oom-range").size(), 1u);
  EXPECT_EQ(Select(dom, "*", "data-role", "event").size(), 1u) << "the Xid marker";
  std::string text = TextOf(dom);
  EXPECT_NE(text.find("Leak of 1536 MiB/h (90 % range 1331 MiB/h … 1741 MiB/h) since 2026-07-14 08:40"),
            std::string::npos);
  EXPECT_NE(text.find("memory runs out in 7h 0m (at 2026-07-14 21:00), range 6h 11m … 8h 5m"), std::string::npos);
  EXPECT_NE(text.find("OOM 21:00 (in 7h 0m)"), std::string::npos) << "the label at the marker";
  SaveScreenshots("report-leak", 1200, 900);
}

TEST(ReportInBrowser, PlateauReportHasNoOomMarker) {
  std::string dom = RenderAndLoad({Plateau(1)}, "report-plateau");
  ASSERT_FALSE(dom.empty());
  auto charts = Select(dom, "svg", "data-gpu");
  ASSERT_EQ(charts.size(), 1u);
  EXPECT_TRUE(charts[0].Has("data-verdict", "plateau"));
  EXPECT_TRUE(Select(dom, "*", "data-role", "oom").empty());
  EXPECT_TRUE(Select(dom, "*", "data-role", "projection").empty());
  EXPECT_EQ(Select(dom, "*", "data-role", "capacity").size(), 1u);
  EXPECT_NE(TextOf(dom).find("Plateau: no leak."), std::string::npos);
  SaveScreenshots("report-plateau", 1200, 900);
}

TEST(ReportInBrowser, TwoGpuReportHasOneChartPerGpuAndOneOomMarker) {
  std::string dom = RenderAndLoad(TwoGpus(), "report-two-gpus");
  ASSERT_FALSE(dom.empty());
  auto charts = Select(dom, "svg", "data-gpu");
  ASSERT_EQ(charts.size(), 2u);
  EXPECT_TRUE(charts[0].Has("data-gpu", "0"));
  EXPECT_TRUE(charts[1].Has("data-gpu", "1"));
  auto oom = Select(dom, "*", "data-role", "oom");
  ASSERT_EQ(oom.size(), 1u);
  EXPECT_GT(oom[0].offset, charts[0].offset);
  EXPECT_LT(oom[0].offset, charts[1].offset) << "the marker belongs to GPU 0's chart, the leaking one";
  auto sections = Select(dom, "section", "data-verdict");
  ASSERT_EQ(sections.size(), 2u);
  EXPECT_TRUE(sections[0].Has("data-verdict", "leak"));
  EXPECT_TRUE(sections[1].Has("data-verdict", "plateau"));
  EXPECT_EQ(Select(dom, "tr", "data-gpu").size(), 2u) << "summary table rows";
  SaveScreenshots("report-two-gpus", 1200, 900);
}

TEST(ReportInBrowser, PyTorchLogReportDrawsEachDeviceByStep) {
  std::string dom = RenderAndLoad({Plateau(1)}, "report-pytorch-log",
                                  {outputs::testing::RestartThenTensorLeak(), outputs::testing::TwoDevicesFlat()});
  ASSERT_FALSE(dom.empty());
  auto sections = Select(dom, "section", "data-device");
  ASSERT_EQ(sections.size(), 3u) << "one section per device of each log";
  EXPECT_TRUE(sections[0].Has("data-verdict", "growing"));
  EXPECT_TRUE(sections[0].Has("data-layer", "application"));
  EXPECT_TRUE(sections[1].Has("data-verdict", "flat"));
  auto charts = Select(dom, "svg", "data-device");
  ASSERT_EQ(charts.size(), 3u);
  EXPECT_EQ(Select(dom, "svg", "data-gpu").size(), 1u) << "the trace's chart comes first";
  auto trends = Select(dom, "polyline", "data-role", "trend");
  ASSERT_FALSE(trends.empty());
  EXPECT_GT(trends[0].offset, charts[0].offset);
  EXPECT_LT(trends[0].offset, charts[1].offset) << "the trend is the growing device's";
  EXPECT_EQ(Select(dom, "*", "data-role", "restart").size(), 1u);
  EXPECT_EQ(Select(dom, "path", "data-role", "driver").size(), 2u) << "the flat log prints the driver's figure";
  std::string text = TextOf(dom);
  EXPECT_NE(text.find("PyTorch memory log: growing in the application's live tensors."), std::string::npos);
  EXPECT_NE(text.find("1 series, 0 leaking · 3 devices of PyTorch memory logs, 1 growing"), std::string::npos);
  SaveScreenshots("report-pytorch-log", 1200, 1400);
}

// In a window narrower than a card (500 px, the narrowest headless Chromium lays out) the report
// fits: each GPU's card is as wide as the window allows, not 560 px with its verdict and facts cut
// off at the window's edge, and the summary table scrolls in its own box.
TEST(ReportInBrowser, ThreeGpuReportFitsANarrowWindow) {
  auto series = TwoGpus();
  series.push_back(Plateau(2));
  outputs::HtmlReportOptions opt;
  opt.source = "fixture report-narrow";
  opt.generated_at = "2026-07-14 14:05";
  fs::path html = OutDir() / "report-narrow.html";
  // The report and a script that writes how wide the page is laid out, and the window, into <html>.
  std::ofstream(html) << outputs::RenderHtmlReport(series, opt)
                      << "<script>document.documentElement.dataset.width = "
                         "document.documentElement.scrollWidth;"
                         "document.documentElement.dataset.window = innerWidth;</script>\n";
  DomResult r = DumpDom({.url = "file://" + html.string(), .width = 500});
  ASSERT_EQ(r.error, "");
  auto root = Elements(r.dom, "html");
  ASSERT_EQ(root.size(), 1u);
  ASSERT_EQ(root[0].attrs.count("data-width"), 1u);
  const int window = std::stoi(root[0].attrs.at("data-window"));
  EXPECT_LT(window, 560) << "narrower than a card was";
  EXPECT_LE(std::stoi(root[0].attrs.at("data-width")), window) << "the page scrolls sideways";
  EXPECT_EQ(Select(r.dom, "svg", "data-gpu").size(), 3u);
  SaveScreenshots("report-narrow", 500, 1600);
}

// A process series whose command line is 4 KB long: the summary table stays within the window and
// each section's heading a line or two tall (the table was 34,000 px wide, the heading 1,770 px tall).
TEST(ReportInBrowser, ALongCommandLineKeepsTheSummaryTableAndHeadingsSmall) {
  auto series = TwoGpus();
  std::string command = "python train.py";
  while (command.size() < 4096) command += " --opt=" + std::to_string(command.size());
  series[0].pid = 4242;
  series[0].process_command = command;
  outputs::HtmlReportOptions opt;
  opt.source = "fixture report-long-command";
  fs::path html = OutDir() / "report-long-command.html";
  // The report and a script that writes the summary table's width, the tallest heading and the
  // window's width into <html>.
  std::ofstream(html) << outputs::RenderHtmlReport(series, opt)
                      << "<script>var h = 0;"
                         "document.querySelectorAll('section h2').forEach(function (e) {"
                         "  h = Math.max(h, e.getBoundingClientRect().height); });"
                         "document.documentElement.dataset.table ="
                         "  Math.round(document.querySelector('table.vw-summary').getBoundingClientRect().width);"
                         "document.documentElement.dataset.heading = Math.round(h);"
                         "document.documentElement.dataset.window = innerWidth;</script>\n";
  DomResult r = DumpDom({.url = "file://" + html.string(), .width = 1280});
  ASSERT_EQ(r.error, "");
  auto root = Elements(r.dom, "html");
  ASSERT_EQ(root.size(), 1u);
  ASSERT_EQ(root[0].attrs.count("data-table"), 1u);
  EXPECT_LE(std::stoi(root[0].attrs.at("data-table")), std::stoi(root[0].attrs.at("data-window")));
  EXPECT_LE(std::stoi(root[0].attrs.at("data-heading")), 80);
  EXPECT_EQ(Select(r.dom, "details", "data-role", "command").size(), 1u) << "the whole command, folded";
}

}  // namespace
}  // namespace vw::browser_test
