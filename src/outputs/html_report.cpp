// The self-contained HTML report (see html_report.h).
#include "outputs/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "core/time.h"
#include "core/units.h"
#include "outputs/analyze_report.h"
#include "outputs/framework_plot.h"

namespace vw::outputs {
namespace {

using detection::SeriesAnalysis;
using detection::Verdict;

constexpr const char* kPageCss = R"css(
:root{--bg:#f6f8fa;--card:#ffffff;--fg:#1f2328;--muted:#57606a;--line:#d0d7de;
  --leak:#c8202b;--leak-bg:#ffebe9;--ok:#1a7f37;--ok-bg:#dafbe1;--wait:#9a6700;--wait-bg:#fff8c5;--none:#57606a;--none-bg:#eaeef2}
@media (prefers-color-scheme: dark){:root.vw-theme-auto{--bg:#010409;--card:#0d1117;--fg:#e6edf3;--muted:#9da7b3;--line:#30363d;
  --leak:#ff7b72;--leak-bg:#3d1418;--ok:#56d364;--ok-bg:#12361f;--wait:#e3b341;--wait-bg:#3b2e0a;--none:#9da7b3;--none-bg:#21262d}}
:root.vw-theme-dark{--bg:#010409;--card:#0d1117;--fg:#e6edf3;--muted:#9da7b3;--line:#30363d;
  --leak:#ff7b72;--leak-bg:#3d1418;--ok:#56d364;--ok-bg:#12361f;--wait:#e3b341;--wait-bg:#3b2e0a;--none:#9da7b3;--none-bg:#21262d}
*{box-sizing:border-box}
body{margin:0;padding:20px 24px;background:var(--bg);color:var(--fg);
  font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
h1{font-size:20px;margin:0 0 2px}
.vw-meta{color:var(--muted);margin:0 0 16px}
table{border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:6px;margin-bottom:18px}
th,td{padding:6px 12px;text-align:left;border-bottom:1px solid var(--line);white-space:nowrap}
th{color:var(--muted);font-weight:600;font-size:12px}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.vw-scroll{overflow-x:auto}
.vw-multiples{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(560px,100%),1fr));gap:16px}
.vw-series,.vw-framework{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px 16px;min-width:0}
.vw-series h2,.vw-framework h2{font-size:16px;margin:0 0 6px;display:flex;gap:10px;align-items:center;flex-wrap:wrap;overflow-wrap:anywhere}
.vw-series figure,.vw-framework figure{margin:8px 0}
.vw-series svg,.vw-framework svg{width:100%;height:auto;display:block}
.vw-verdict{margin:4px 0 8px}
.vw-badge{display:inline-block;padding:1px 9px;border-radius:999px;font-size:12px;font-weight:600;
  border:1px solid currentColor;text-transform:uppercase;letter-spacing:.03em}
.vw-badge-leak{color:var(--leak);background:var(--leak-bg)}
.vw-badge-plateau{color:var(--ok);background:var(--ok-bg)}
.vw-badge-settling,.vw-badge-warm-up{color:var(--wait);background:var(--wait-bg)}
.vw-badge-insufficient-data{color:var(--none);background:var(--none-bg)}
dl.vw-facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0}
dl.vw-facts dt{color:var(--muted)}
dl.vw-facts dd{margin:0;font-variant-numeric:tabular-nums}
.vw-evidence{margin:6px 0 0;padding-left:20px}
.vw-evidence li{margin:2px 0}
h3{font-size:13px;color:var(--muted);margin:10px 0 2px;font-weight:600}
.vw-source{color:var(--muted);font-size:13px;font-weight:400}
.vw-command{margin:0 0 8px;font-size:12px}
.vw-command summary{color:var(--muted);cursor:pointer}
.vw-command code{display:block;white-space:pre-wrap;overflow-wrap:anywhere;max-height:14em;overflow:auto;
  font-family:ui-monospace,"DejaVu Sans Mono",monospace}
)css";

// A series' name ("GPU 0 · pid 4242 " and its command line) and a source's file name are cut to
// this many characters in a heading or a table cell: a command line of kilobytes made the summary
// table tens of thousands of pixels wide and a heading a column of text.
constexpr size_t kShownChars = 60;
constexpr size_t kTitleSourceChars = 120;  // of the sources in the page's <title>

// `text` cut to at most `max` characters (code points), the last of them "…"; whole when it fits.
std::string Shortened(const std::string& text, size_t max) {
  size_t chars = 0, cut = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // inside a UTF-8 sequence
    if (chars + 1 == max) cut = i;
    ++chars;
  }
  return chars <= max ? text : text.substr(0, cut) + "…";
}

// A text cut to `max` characters, in a span (or a table cell) whose title holds it whole when cut.
std::string ShownText(const char* tag, const std::string& text, size_t max) {
  const std::string shown = Shortened(text, max);
  const std::string title = shown == text ? "" : " title=\"" + XmlEscape(text) + "\"";
  return fmt::format("<{0}{1}>{2}</{0}>", tag, title, XmlEscape(shown));
}

// A series' source by its file name, the whole path in its title.
std::string SourceSpan(const std::string& source) {
  if (source.empty()) return {};
  return fmt::format("<span class=\"vw-source\" data-role=\"source\" title=\"{}\">{}</span>", XmlEscape(source),
                     XmlEscape(Shortened(FrameworkSourceName(source), kShownChars)));
}

std::string BadgeClass(Verdict v) {
  std::string name = VerdictText(v);
  for (char& c : name) {
    if (c == ' ') c = '-';
  }
  return "vw-badge vw-badge-" + name;
}

std::string Fact(std::string_view name, const std::string& value) {
  return fmt::format("<dt>{}</dt><dd>{}</dd>\n", name, XmlEscape(value));
}

// A chart inside the page: no XML declaration or style of its own (the page has ChartCss()).
SvgOptions FigureOptions(const HtmlReportOptions& o, double chart_width) {
  SvgOptions svg;
  svg.standalone = false;
  svg.embed_style = false;
  svg.theme = o.theme;
  svg.chart.width = chart_width;
  svg.chart.height = chart_width > 700 ? 400 : 360;
  svg.chart.label_offset_s = o.label_offset_s;
  return svg;
}

// A heading ("Evidence", "Next steps") and its sentences as a list; nothing without any.
std::string SentenceList(const char* heading, const char* role, const std::vector<std::string>& sentences) {
  if (sentences.empty()) return {};
  std::string out = fmt::format("<h3>{}</h3>\n<ul class=\"vw-evidence\" data-role=\"{}\">\n", heading, role);
  for (const auto& e : sentences) out += "<li>" + XmlEscape(e) + "</li>\n";
  return out + "</ul>\n";
}

std::string EvidenceList(const std::vector<std::string>& evidence) {
  return SentenceList("Evidence", "evidence", evidence);
}

// `source`: the file the series came from, shown beside its name; empty when not shown.
std::string SeriesSection(const SeriesAnalysis& s, const std::string& source, const HtmlReportOptions& o,
                          double chart_width) {
  const auto& a = s.assessment;
  std::string out = fmt::format("<section class=\"vw-series\" data-gpu=\"{}\" data-verdict=\"{}\"",
                                XmlEscape(s.gpu.key), XmlEscape(VerdictKey(a.verdict)));
  if (s.pid) out += fmt::format(" data-pid=\"{}\"", *s.pid);
  if (!source.empty()) out += fmt::format(" data-source=\"{}\"", XmlEscape(source));
  out += ">\n";
  const std::string name = SeriesName(s);
  out += fmt::format("<h2>{}{}<span class=\"{}\">{}</span></h2>\n", ShownText("span", name, kShownChars),
                     SourceSpan(source), BadgeClass(a.verdict), XmlEscape(VerdictText(a.verdict)));
  // A command line cut in the heading is shown whole here, folded and wrapped.
  if (s.pid && Shortened(name, kShownChars) != name) {
    out += fmt::format(
        "<details class=\"vw-command\" data-role=\"command\"><summary>Whole command line</summary><code>{}</code>"
        "</details>\n",
        XmlEscape(s.process_command));
  }
  out += fmt::format("<p class=\"vw-verdict\">{}</p>\n", XmlEscape(VerdictSentence(s, o.label_offset_s)));

  SvgOptions figure = FigureOptions(o, chart_width);
  if (!source.empty()) figure.chart.source = FrameworkSourceName(source);
  out += "<figure>\n" + RenderSvgChart(s, figure) + "</figure>\n";

  out += "<dl class=\"vw-facts\">\n";
  if (a.rate_bps) out += Fact("Leak rate", RateText(a));
  if (a.leak_start_t) out += Fact("Growing since", ReportTime(s, *a.leak_start_t, o.label_offset_s));
  if (a.tto_s) out += Fact("Out of memory", OomText(s, o.label_offset_s));
  if (a.floor_bytes) out += Fact("Floor", FormatBytes(*a.floor_bytes));
  if (a.peak_bytes) out += Fact("Peak", FormatBytes(*a.peak_bytes));
  if (a.capacity_bytes) out += Fact("Capacity", FormatBytes(*a.capacity_bytes));
  if (a.samples > 0) {
    out += Fact("Samples", fmt::format("{} from {} to {}", a.samples, ReportTime(s, a.start_t, o.label_offset_s),
                                       ReportTime(s, a.end_t, o.label_offset_s)));
  }
  out += "</dl>\n";
  out += EvidenceList(a.evidence);
  // What to do next, as the text report's "next" says it.
  out += SentenceList("Next steps", "next-steps", NextSteps(s));
  out += "</section>\n";
  return out;
}

// What the badge of a device of a PyTorch memory log says, and its colour's class.
std::pair<std::string, std::string> FrameworkBadge(const detection::FrameworkSplit& d) {
  switch (d.verdict) {
    case detection::FrameworkVerdict::kGrowing: return {"growing", "vw-badge vw-badge-leak"};
    case detection::FrameworkVerdict::kSettled:
    case detection::FrameworkVerdict::kFlat: return {"no growth", "vw-badge vw-badge-plateau"};
    case detection::FrameworkVerdict::kTooShort: break;
  }
  return {"too short", "vw-badge vw-badge-insufficient-data"};
}

std::string FrameworkSection(const FrameworkReport& r, const detection::FrameworkSplit& d, const HtmlReportOptions& o,
                             double chart_width) {
  std::string out =
      fmt::format("<section class=\"vw-framework\" data-source=\"{}\" data-device=\"{}\" data-verdict=\"{}\"",
                  XmlEscape(r.source), d.device, detection::FrameworkVerdictName(d.verdict));
  if (const char* layer = detection::FrameworkLayerName(d.layer)) out += fmt::format(" data-layer=\"{}\"", layer);
  out += ">\n";
  const auto [badge, badge_class] = FrameworkBadge(d);
  out += fmt::format("<h2><span title=\"{}\">{} · device {}</span><span class=\"{}\">{}</span></h2>\n",
                     XmlEscape(r.source), XmlEscape(FrameworkSourceName(r.source)), d.device, badge_class, badge);
  std::string sentence = "PyTorch memory log: " + FrameworkHeadline(d) + ".";
  if (!d.next_step.empty()) sentence += " Next: " + d.next_step;
  out += fmt::format("<p class=\"vw-verdict\">{}</p>\n", XmlEscape(sentence));
  out += "<figure>\n" + RenderFrameworkChart(r, d, FigureOptions(o, chart_width)) + "</figure>\n";
  out += "<dl class=\"vw-facts\">\n";
  out += Fact("Steps judged", fmt::format("{} (lines {}–{})", d.steps, d.first_line, d.last_line));
  if (r.not_read > 0) out += Fact("Values not read", fmt::format("{}", r.not_read));
  out += "</dl>\n";
  out += EvidenceList(d.evidence);
  out += "</section>\n";
  return out;
}

// `sources`: each series' source, a column of its own when any is given.
std::string SummaryTable(const std::vector<SeriesAnalysis>& series, const std::vector<std::string>& sources,
                         const HtmlReportOptions& o) {
  const bool source_column = std::any_of(sources.begin(), sources.end(), [](const auto& x) { return !x.empty(); });
  std::string out = "<div class=\"vw-scroll\"><table class=\"vw-summary\">\n<thead><tr>";
  for (const char* head : {"Series", "Source", "Verdict", "Leak rate", "Out of memory", "Floor", "Peak", "Capacity"}) {
    if (std::string_view(head) == "Source" && !source_column) continue;
    out += fmt::format("<th scope=\"col\">{}</th>", head);
  }
  out += "</tr></thead>\n<tbody>\n";
  auto opt_bytes = [](const std::optional<double>& v) { return v ? FormatBytes(*v) : std::string("—"); };
  for (size_t i = 0; i < series.size(); ++i) {
    const SeriesAnalysis& s = series[i];
    const auto& a = s.assessment;
    std::string source;
    if (source_column) source = "<td>" + SourceSpan(sources[i]) + "</td>";
    out += fmt::format(
        "<tr data-gpu=\"{}\">{}{}<td><span class=\"{}\">{}</span></td><td class=\"num\">{}</td><td>{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
        XmlEscape(s.gpu.key), ShownText("td", SeriesName(s), kShownChars), source, BadgeClass(a.verdict),
        XmlEscape(VerdictText(a.verdict)), a.rate_bps ? XmlEscape(FormatRate(*a.rate_bps)) : "—",
        a.tto_s ? XmlEscape(OomAtText(s, o.label_offset_s)) : "—", opt_bytes(a.floor_bytes), opt_bytes(a.peak_bytes),
        opt_bytes(a.capacity_bytes));
  }
  out += "</tbody>\n</table></div>\n";
  return out;
}

}  // namespace

std::string VerdictSentence(const SeriesAnalysis& s, double label_offset_s) {
  const auto& a = s.assessment;
  switch (a.verdict) {
    case Verdict::kLeak: {
      std::string out = "Leak";
      if (a.rate_bps) out += " of " + RateText(a);
      if (a.leak_start_t) out += " since " + ReportTime(s, *a.leak_start_t, label_offset_s);
      if (a.tto_s) {
        out += "; memory runs out in " + OomText(s, label_offset_s) + ".";
      } else {
        out += a.capacity_bytes ? "." : "; the card's capacity is unknown, so there is no OOM forecast.";
      }
      return out;
    }
    case Verdict::kPlateau: {
      std::string out = "Plateau: no leak.";
      if (a.floor_bytes) out += " The floor holds at " + FormatBytes(*a.floor_bytes);
      if (a.floor_bytes && a.peak_bytes) out += " with peaks to " + FormatBytes(*a.peak_bytes);
      if (a.floor_bytes) out += ".";
      if (a.capacity_bytes && a.peak_bytes) out += " Headroom " + FormatBytes(*a.capacity_bytes - *a.peak_bytes) + ".";
      return out;
    }
    case Verdict::kSettling: return "Settling: memory still grows but the growth is slowing down; no verdict yet.";
    case Verdict::kWarmup: return "Warm-up: still in the initial ramp; no verdict yet.";
    case Verdict::kInsufficientData:
      return fmt::format("Insufficient data: {} samples over {} are not enough to judge.", a.samples,
                         FormatDuration(a.end_t - a.start_t));
  }
  return {};
}

std::string RenderHtmlReport(const std::vector<SeriesAnalysis>& series, const HtmlReportOptions& o,
                             const std::vector<FrameworkReport>& framework) {
  std::string out = "<!DOCTYPE html>\n";
  out += fmt::format("<html lang=\"en\" class=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n", ThemeClass(o.theme));
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"color-scheme\" content=\"light dark\">\n";
  // The window's or tab's title names what is reported, not only "vramwatch report".
  std::string title = o.title;
  if (!o.source.empty()) title += " · " + Shortened(o.source, kTitleSourceChars);
  out += fmt::format("<title>{}</title>\n<style>{}\n{}</style>\n</head>\n<body>\n", XmlEscape(title), kPageCss,
                     ChartCss());
  out += fmt::format("<h1>{}</h1>\n", XmlEscape(o.title));
  std::string meta;
  if (!o.source.empty()) meta += XmlEscape(o.source);
  if (!o.generated_at.empty()) meta += (meta.empty() ? "generated " : " · generated ") + XmlEscape(o.generated_at);
  size_t leaks = 0;
  for (const auto& s : series) leaks += s.assessment.verdict == Verdict::kLeak ? 1 : 0;
  size_t devices = 0, growing = 0;
  for (const FrameworkReport& r : framework) {
    for (const auto& d : r.devices) {
      ++devices;
      growing += d.verdict == detection::FrameworkVerdict::kGrowing ? 1 : 0;
    }
  }
  if (!series.empty() || devices == 0) {
    meta += fmt::format("{}{} series, {} leaking", meta.empty() ? "" : " · ", series.size(), leaks);
  }
  if (devices > 0) {
    meta += fmt::format("{}{} device{} of PyTorch memory logs, {} growing", meta.empty() ? "" : " · ", devices,
                        devices == 1 ? "" : "s", growing);
  }
  out += "<p class=\"vw-meta\">" + meta + "</p>\n";
  const size_t sections = series.size() + devices;
  if (sections == 0) {
    out += "<p class=\"vw-verdict\">No series to report: the input held no memory samples.</p>\n";
  } else {
    const std::vector<std::string> sources = SourcesToName(o.sources, series.size());
    if (series.size() > 1) out += SummaryTable(series, sources, o);
    double chart_width = sections > 1 ? 540 : 1100;
    out += sections > 1 ? "<div class=\"vw-multiples\">\n" : "<div>\n";
    for (size_t i = 0; i < series.size(); ++i) out += SeriesSection(series[i], sources[i], o, chart_width);
    for (const FrameworkReport& r : framework) {
      for (const auto& d : r.devices) out += FrameworkSection(r, d, o, chart_width);
    }
    out += "</div>\n";
  }
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace vw::outputs
