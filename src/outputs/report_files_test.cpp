#include "outputs/report_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "outputs/testing/series_fixtures.h"

namespace vw::outputs {
namespace {

namespace fs = std::filesystem;

fs::path TempDir(const std::string& name) {
  fs::path dir = fs::path(VRAMWATCH_BINARY_DIR) / "test-tmp" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ReportFiles, WritesTheSvgAndTheHtmlWhole) {
  fs::path dir = TempDir("report_files");
  auto gpus = testing::TwoGpus();
  ASSERT_TRUE(WriteSvgPlot((dir / "plot.svg").string(), gpus).ok());
  ASSERT_TRUE(WriteHtmlReport((dir / "report.html").string(), gpus).ok());
  std::string svg = Slurp(dir / "plot.svg"), html = Slurp(dir / "report.html");
  EXPECT_EQ(svg, RenderSvgSmallMultiples(gpus));
  EXPECT_EQ(html, RenderHtmlReport(gpus));
  EXPECT_FALSE(fs::exists(dir / "plot.svg.tmp"));
}

TEST(ReportFiles, NamesThePathWhenItCannotWrite) {
  fs::path dir = TempDir("report_files_missing");
  std::string path = (dir / "no-such-folder" / "plot.svg").string();
  Status st = WriteSvgPlot(path, {testing::Plateau()});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
}

// Series from several files (whose GPUs may share a name): each chart names its file, in its
// subtitle and its <title>; series from one file are not named one by one (it said only "GPU 0 ·
// NVIDIA H100 80GB HBM3" twice).
TEST(ReportFiles, APlotOfSeveralFilesNamesEachChartsFile) {
  fs::path dir = TempDir("report_files_sources");
  auto gpus = testing::TwoGpus();
  const std::string path = (dir / "plot.svg").string();
  ASSERT_TRUE(WriteSvgPlot(path, gpus, {}, {}, {"runs/a/node-7.csv", "runs/b/node-8.csv"}).ok());
  std::string svg = Slurp(path);
  size_t titles_naming = 0;
  for (size_t at = svg.find("<title>"); at != std::string::npos; at = svg.find("<title>", at + 1)) {
    const std::string title = svg.substr(at, svg.find("</title>", at) - at);
    titles_naming += title.find("node-7.csv") != std::string::npos || title.find("node-8.csv") != std::string::npos;
  }
  EXPECT_EQ(titles_naming, 2u);
  EXPECT_EQ(svg.find("runs/a/"), std::string::npos) << "the file's name, not its path";
  ASSERT_TRUE(WriteSvgPlot(path, gpus, {}, {}, {"one.csv", "one.csv"}).ok());
  EXPECT_EQ(Slurp(path).find("one.csv"), std::string::npos);
}

TEST(ReportFiles, RefusesAnEmptyPlot) {
  fs::path dir = TempDir("report_files_empty");
  Status st = WriteSvgPlot((dir / "plot.svg").string(), {});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir / "plot.svg"));
}

}  // namespace
}  // namespace vw::outputs
