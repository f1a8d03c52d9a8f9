// File writers for the SVG plot and the HTML report (see report_files.h).
#include "outputs/report_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "outputs/framework_plot.h"

namespace vw::outputs {
namespace {

// Written whole to a new file beside `path` and renamed over it, so that a reader never sees half
// a report. The new file is made by mkstemp (O_EXCL, a name nobody can guess): a link planted at a
// fixed name ("report.html.tmp") in a shared directory cannot make it write elsewhere.
Status WriteWhole(const std::string& path, const std::string& content) {
  std::string tmp = path + ".XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return FromErrno(errno, "create a file beside " + path + " for writing");
  // mkstemp makes it 0600; a report is as readable as any file this user creates (the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  int write_err = ::fchmod(fd, 0666 & ~mask) == 0 ? 0 : errno;
  for (size_t done = 0; write_err == 0 && done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      write_err = errno;
    } else {
      done += static_cast<size_t>(n);
    }
  }
  if (::close(fd) != 0 && write_err == 0) write_err = errno;
  if (write_err != 0) {
    ::unlink(tmp.c_str());
    return FromErrno(write_err, "write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
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
