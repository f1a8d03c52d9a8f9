#include "outputs/report_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

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

// A link planted where a fixed temporary name would be ("report.html.tmp", in a shared directory)
// is not written through: the file it points at keeps its content, the report is a file of its own,
// readable as the user's files are, and nothing is left beside it.
TEST(ReportFiles, ALinkAtTheTemporaryNameIsNotWrittenThrough) {
  fs::path dir = TempDir("report_files_link");
  {
    std::ofstream victim(dir / "victim");
    victim << "precious";
  }
  fs::create_symlink(dir / "victim", dir / "report.html.tmp");
  auto gpus = testing::TwoGpus();
  ASSERT_TRUE(WriteHtmlReport((dir / "report.html").string(), gpus).ok());
  EXPECT_EQ(Slurp(dir / "victim"), "precious");
  EXPECT_FALSE(fs::is_symlink(dir / "report.html"));
  EXPECT_EQ(Slurp(dir / "report.html"), RenderHtmlReport(gpus));
  const fs::perms p = fs::status(dir / "report.html").permissions();
  EXPECT_NE(p & fs::perms::owner_read, fs::perms::none);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ((p & fs::perms::others_read) != fs::perms::none, (mask & S_IROTH) == 0);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.path().filename() != "report.html.tmp";
  EXPECT_EQ(files, 2u) << "victim and report.html, no temporary left";
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
