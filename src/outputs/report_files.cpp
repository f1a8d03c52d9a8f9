// File writers for the SVG plot and the HTML report (see report_files.h).
#include "outputs/report_files.h"

#include <cerrno>
#include <cstdio>

#include "outputs/framework_plot.h"

namespace vw::outputs {
namespace {

Status WriteWhole(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return FromErrno(errno, "open " + tmp + " for writing");
  size_t written = std::fwrite(content.data(), 1, content.size(), f);
  int write_err = written == content.size() ? 0 : errno;
  if (std::fclose(f) != 0 && write_err == 0) write_err = errno;
  if (write_err != 0) {
    std::remove(tmp.c_str());
    return FromErrno(write_err, "write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    return FromErrno(err, "rename " + tmp + " to " + path);
  }
  return Status::Ok();
}

}  // namespace

Status WriteSvgPlot(const std::string& path, const std::vector<detection::SeriesAnalysis>& series,
                    const SvgOptions& options, const std::vector<FrameworkReport>& framework,
                    const std::vector<std::string>& sources) {
  std::vector<SvgCell> cells;
  const std::vector<std::string> named = SourcesToName(sources, series.size());
  for (size_t i = 0; i < series.size(); ++i) {
    cells.push_back([&s = series[i], source = named[i]](const SvgOptions& o) {
      SvgOptions cell = o;
      if (!source.empty()) cell.chart.source = FrameworkSourceName(source);
      return RenderSvgChart(s, cell);
    });
  }
  for (SvgCell& cell : FrameworkCells(framework)) cells.push_back(std::move(cell));
  if (cells.empty()) return Status::InvalidArgument("--plot " + path + ": no series to plot");
  SvgOptions o = options;
  o.standalone = true;
  o.embed_style = true;
  return WriteWhole(path, RenderSvgFigure(cells, o));
}

Status WriteHtmlReport(const std::string& path, const std::vector<detection::SeriesAnalysis>& series,
                       const HtmlReportOptions& options, const std::vector<FrameworkReport>& framework) {
  return WriteWhole(path, RenderHtmlReport(series, options, framework));
}

}  // namespace vw::outputs
