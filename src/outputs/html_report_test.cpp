#include "outputs/html_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <sstream>

#include "outputs/analyze_report.h"
#include "outputs/plot_geometry.h"
#include "outputs/svg_markup.h"
#include "outputs/svg_plot.h"
#include "outputs/testing/series_fixtures.h"
#include "outputs/web_page.h"

namespace vw::outputs {
namespace {

using testing::LeakWithEvalSpikes;
using testing::Plateau;
using testing::TwoGpus;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// Anything that would make a browser fetch something.
void ExpectSelfContained(const std::string& page) {
  for (const char* ref : {"http://", "https://", "src=", "href=", "@import", "url(", "<link", "<iframe", "//cdn"}) {
    EXPECT_EQ(page.find(ref), std::string::npos) << "found '" << ref << "'";
  }
}

TEST(HtmlReport, IsSelfContained) {
  std::string page = RenderHtmlReport(TwoGpus());
  ExpectSelfContained(page);
  EXPECT_EQ(page.find("<script"), std::string::npos) << "the report needs no script";
  EXPECT_NE(page.find("<style>"), std::string::npos);
  EXPECT_NE(page.find("prefers-color-scheme: dark"), std::string::npos);
}

TEST(HtmlReport, HasOneChartPerSeriesAndAnOomMarkerOnlyForTheLeak) {
  std::string page = RenderHtmlReport(TwoGpus());
  EXPECT_EQ(Count(page, "<svg "), 2u);
  EXPECT_EQ(Count(page, "<svg class=\"vw-chart vw-theme-auto\""), 2u);
  EXPECT_EQ(Count(page, "data-role=\"oom\""), 1u);
  EXPECT_EQ(Count(page, "<section class=\"vw-series\""), 2u);
  EXPECT_NE(page.find("<section class=\"vw-series\" data-gpu=\"0\" data-verdict=\"leak\">"), std::string::npos);
  EXPECT_NE(page.find("<section class=\"vw-series\" data-gpu=\"1\" data-verdict=\"plateau\">"), std::string::npos);
  EXPECT_NE(page.find("2 series, 1 leaking"), std::string::npos);
  EXPECT_EQ(page.find("xmlns="), std::string::npos) << "inline SVG in HTML needs no namespace";
}

// Each series says what to do next, as the text report's "next" lines do, under the evidence.
TEST(HtmlReport, EachSeriesGivesTheTextReportsNextSteps) {
  const auto gpus = TwoGpus();
  std::string page = RenderHtmlReport(gpus);
  EXPECT_EQ(Count(page, "data-role=\"next-steps\""), 2u);
  for (const auto& s : gpus) {
    const auto steps = NextSteps(s);
    ASSERT_FALSE(steps.empty());
    for (const std::string& step : steps) EXPECT_NE(page.find(XmlEscape(step)), std::string::npos) << step;
  }
  EXPECT_LT(page.find("data-role=\"evidence\""), page.find("data-role=\"next-steps\""));
}

TEST(HtmlReport, EscapesEveryText) {
  auto s = LeakWithEvalSpikes();
  s.assessment.evidence = {"growth <b>after</b> step 100 & \"eval\""};
  s.gpu.name = "GPU <x>";
  std::string page = RenderHtmlReport({s});
  EXPECT_NE(page.find("growth &lt;b&gt;after&lt;/b&gt; step 100 &amp; &quot;eval&quot;"), std::string::npos);
  EXPECT_EQ(page.find("<b>after"), std::string::npos);
  EXPECT_EQ(page.find("GPU <x>"), std::string::npos);
}

// A name or command line from a file may hold bytes XML cannot carry: they are written out, so the
// page and the SVG stay well-formed and show what the file held.
TEST(HtmlReport, WritesOutControlCharactersAndBytesThatAreNotUtf8) {
  EXPECT_EQ(XmlEscape("NVIDIA\x01H100\x7f \xff caf\xc3\xa9 \xc2\x85 a\tb\r"),
            "NVIDIA\\x01H100\\x7f \\xff caf\xc3\xa9 \\u0085 a\tb\\r");
  EXPECT_EQ(XmlEscape("line\none"), "line\none") << "a newline is valid XML text";
  EXPECT_EQ(XmlEscape("a\xef\xbf\xbf b\xef\xbf\xbe c\xef\xbf\xbd"), "a\\uffff b\\ufffe c\xef\xbf\xbd")
      << "U+FFFF and U+FFFE are no XML characters; U+FFFD is";
  auto s = LeakWithEvalSpikes();
  s.gpu.name = "NVIDIA\x01H100\xff";
  s.assessment.evidence = {"rose \x1b[31m"};
  for (const std::string& doc : {RenderHtmlReport({s}), RenderSvgChart(s)}) {
    for (char c : doc) {
      const auto b = static_cast<unsigned char>(c);
      EXPECT_FALSE((b < 0x20 && c != '\n' && c != '\t') || b == 0x7f || b == 0xff) << "byte " << int{b};
    }
    EXPECT_NE(doc.find("NVIDIA\\x01H100\\xff"), std::string::npos);
  }
}

TEST(HtmlReport, ThemeOptionForcesOneTheme) {
  HtmlReportOptions o;
  o.theme = Theme::kDark;
  std::string page = RenderHtmlReport({Plateau()}, o);
  EXPECT_NE(page.find("<html lang=\"en\" class=\"vw-theme-dark\">"), std::string::npos);
  EXPECT_NE(page.find("class=\"vw-chart vw-theme-dark\""), std::string::npos);
}

TEST(HtmlReport, EmptyInputSaysSo) {
  std::string page = RenderHtmlReport({});
  EXPECT_NE(page.find("No series to report"), std::string::npos);
  detection::SeriesAnalysis none;
  none.gpu.key = "2";
  EXPECT_NE(RenderHtmlReport({none}).find("data-gpu=\"2\" data-verdict=\"insufficient_data\""), std::string::npos)
      << "data-verdict uses the JSON spelling";
  EXPECT_EQ(page.find("<svg"), std::string::npos);
}

TEST(VerdictSentence, StatesTheNumbersPerVerdict) {
  EXPECT_EQ(VerdictSentence(LeakWithEvalSpikes()),
            "Leak of 1536 MiB/h (90 % range 1331 MiB/h … 1741 MiB/h) since 2026-07-14 08:40; memory runs out in 7h 0m "
            "(at 2026-07-14 21:00), range 6h 11m … 8h 5m.");
  EXPECT_EQ(VerdictSentence(Plateau()),
            "Plateau: no leak. The floor holds at 70.0 GiB with peaks to 76.2 GiB. Headroom 3.0 GiB.");
  auto no_capacity = LeakWithEvalSpikes();
  no_capacity.assessment.capacity_bytes.reset();
  no_capacity.assessment.tto_s.reset();
  no_capacity.assessment.tto_lo_s.reset();
  no_capacity.assessment.tto_hi_s.reset();
  EXPECT_NE(VerdictSentence(no_capacity).find("capacity is unknown, so there is no OOM forecast"), std::string::npos);
  detection::SeriesAnalysis none;
  none.assessment.samples = 4;
  none.assessment.end_t = 90;
  EXPECT_EQ(VerdictSentence(none), "Insufficient data: 4 samples over 1m 30s are not enough to judge.");
}

// A trace that named its zone (epoch seconds, ISO 8601 with Z): its clock times say UTC, or the
// offset they are shown at; the trace's own wall clock stays unmarked (the sentence above).
TEST(VerdictSentence, MarksTimesOfAZonedTraceAsUtc) {
  auto zoned = LeakWithEvalSpikes();
  zoned.has_zone = true;
  EXPECT_EQ(VerdictSentence(zoned),
            "Leak of 1536 MiB/h (90 % range 1331 MiB/h … 1741 MiB/h) since 2026-07-14 08:40 UTC; memory runs out in "
            "7h 0m (at 2026-07-14 21:00 UTC), range 6h 11m … 8h 5m.");
  EXPECT_EQ(VerdictSentence(zoned, 2 * 3600),
            "Leak of 1536 MiB/h (90 % range 1331 MiB/h … 1741 MiB/h) since 2026-07-14 10:40 UTC+02:00; memory runs "
            "out in 7h 0m (at 2026-07-14 23:00 UTC+02:00), range 6h 11m … 8h 5m.");
  const std::string html = RenderHtmlReport({zoned}, {});
  EXPECT_NE(html.find("<dd>7h 0m (at 2026-07-14 21:00 UTC), range 6h 11m … 8h 5m</dd>"), std::string::npos)
      << "the OOM fact";
  EXPECT_NE(html.find(" UTC</dd>"), std::string::npos) << "the Samples fact";
}

// One style per report: the page and the chart write the rate, the leak's start and the OOM moment
// with the strings the text report prints, for a trace with a UTC clock and one without a clock.
TEST(HtmlReport, NamesTimesAndRatesAsTheTextReportDoes) {
  for (const bool synthetic : {false, true}) {
    auto s = LeakWithEvalSpikes();
    s.has_zone = !synthetic;
    s.synthetic_time = synthetic;
    const std::string text = RenderAnalyzeText({AnalyzedSeries{"run.csv", s, 0}}, {});
    std::smatch rate, oom;
    ASSERT_TRUE(std::regex_search(text, rate, std::regex("\n  rate       ([^\n]+)\n"))) << text;
    ASSERT_TRUE(std::regex_search(text, oom, std::regex("\n  OOM in     ([^,\n]+)"))) << text;
    const std::string since = "since " + ReportTime(s, *s.assessment.leak_start_t);
    EXPECT_EQ(since, synthetic ? "since t+20648d 8h" : "since 2026-07-14 08:40 UTC");
    EXPECT_EQ(oom[1].str(), synthetic ? "7h 0m (at t+20648d 21h)" : "7h 0m (at 2026-07-14 21:00 UTC)");
    const std::string page = RenderHtmlReport({s}, {});
    const std::string chart = RenderSvgChart(s);
    for (const std::string& doc : {page, chart}) {
      EXPECT_NE(doc.find(rate[1].str()), std::string::npos) << rate[1] << " " << synthetic;
      EXPECT_NE(doc.find("OOM in " + oom[1].str()), std::string::npos) << oom[1] << " " << synthetic;
      EXPECT_NE(doc.find(since), std::string::npos) << since << " " << synthetic;
      EXPECT_FALSE(std::regex_search(doc, std::regex("\\+\\d+\\.\\d\\d GiB/h|since \\+\\d|runs out around")))
          << synthetic;
    }
  }
}

// The SVG chart of a zoned trace names the zone in its time axis title, as the reports do; a
// trace's own wall clock is written without any zone anywhere in the chart.
TEST(SvgChart, TimeAxisTitleSaysUtcOnlyForAZonedTrace) {
  auto zoned = LeakWithEvalSpikes();
  zoned.has_zone = true;
  EXPECT_NE(RenderSvgChart(zoned).find(">time (UTC) · 2026-07-14</text>"), std::string::npos);
  SvgOptions shifted;
  shifted.chart.label_offset_s = 2 * 3600;
  EXPECT_NE(RenderSvgChart(zoned, shifted).find(">time (UTC+02:00) · 2026-07-14</text>"), std::string::npos);
  const std::string wall = RenderSvgChart(LeakWithEvalSpikes(), shifted);
  EXPECT_NE(wall.find(">local time (as recorded) · 2026-07-14</text>"), std::string::npos);
  EXPECT_EQ(wall.find("UTC"), std::string::npos);
}

TEST(SvgChart, StandaloneFileHasNamespaceStyleAndRoles) {
  std::string svg = RenderSvgChart(LeakWithEvalSpikes());
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find("<style>"), std::string::npos);
  for (const char* role : {"raw", "floor", "peak", "trend", "projection", "band", "capacity", "oom", "oom-range",
                           "warmup", "event", "legend", "x-axis", "y-axis"}) {
    EXPECT_NE(svg.find(std::string("data-role=\"") + role + "\""), std::string::npos) << role;
  }
  EXPECT_NE(svg.find("data-gpu=\"0\""), std::string::npos);
  EXPECT_NE(svg.find("data-verdict=\"leak\""), std::string::npos);
}

TEST(SvgChart, ProcessSeriesNamesItsPid) {
  auto s = LeakWithEvalSpikes();
  s.pid = 4242;
  s.process_command = "python train.py";
  std::string svg = RenderSvgChart(s);
  EXPECT_NE(svg.find("data-gpu=\"0\" data-pid=\"4242\""), std::string::npos);
  EXPECT_NE(svg.find(">GPU 0 · pid 4242 python train.py — leak</text>"), std::string::npos);
  std::string page = RenderHtmlReport({s});
  EXPECT_NE(page.find("<section class=\"vw-series\" data-gpu=\"0\" data-verdict=\"leak\" data-pid=\"4242\">"),
            std::string::npos);
}

TEST(SvgChart, OomMarkerCarriesTheOomTime) {
  auto s = LeakWithEvalSpikes();
  std::string svg = RenderSvgChart(s);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, std::regex("data-role=\"oom\" data-t=\"([0-9]+)\"")));
  EXPECT_NEAR(std::stod(m[1]), s.assessment.end_t + *s.assessment.tto_s, 0.5);
}

TEST(SvgChart, SmallMultiplesNestOneChartPerSeries) {
  SvgOptions o;
  o.theme = Theme::kLight;
  std::string svg = RenderSvgSmallMultiples(TwoGpus(), o);
  EXPECT_EQ(Count(svg, "<svg "), 3u) << "one figure holding two charts";
  EXPECT_EQ(Count(svg, "data-gpu=\""), 2u);
  EXPECT_EQ(Count(svg, "<style>"), 1u);
  EXPECT_EQ(Count(svg, "xmlns="), 1u);
  EXPECT_NE(svg.find("class=\"vw-chart vw-theme-light\" width=\"592.0\" height=\"340.0\""), std::string::npos);
  EXPECT_NE(svg.find("data-gpu=\"1\" x=\"608.0\" y=\"0.0\""), std::string::npos) << "second cell beside the first";
}

TEST(ChartCss, DefinesLightAndDarkColours) {
  std::string css = ChartCss();
  EXPECT_NE(css.find(".vw-chart .vw-floor{stroke:#1a5fd0}"), std::string::npos);
  EXPECT_NE(css.find(".vw-theme-dark .vw-floor{stroke:#58a6ff}"), std::string::npos);
  size_t media = css.find("@media (prefers-color-scheme: dark){");
  ASSERT_NE(media, std::string::npos);
  EXPECT_NE(css.find(".vw-theme-auto .vw-floor{stroke:#58a6ff}", media), std::string::npos);
  EXPECT_EQ(css.find("var(--"), std::string::npos) << "plain SVG viewers ignore CSS variables";
}

// `analyze --html both.html leak.csv healthy.csv`: two series of GPU 0 with the same card name.
// Each section's heading and each summary row name the file its series came from (the text
// report's `source`), the whole path in its title; both read "GPU 0 · NVIDIA H100 80GB HBM3".
TEST(HtmlReport, NamesEachSeriesFileWhenTheSeriesComeFromSeveral) {
  auto leak = LeakWithEvalSpikes(0);
  auto healthy = Plateau(0);
  healthy.gpu.name = leak.gpu.name;
  HtmlReportOptions o;
  o.source = "examples/training-leak.csv, examples/training-healthy.csv";
  o.sources = {"examples/training-leak.csv", "examples/training-healthy.csv"};
  const std::string page = RenderHtmlReport({leak, healthy}, o);
  EXPECT_NE(page.find("<th scope=\"col\">Series</th><th scope=\"col\">Source</th>"), std::string::npos);
  for (const std::string file : {"training-leak.csv", "training-healthy.csv"}) {
    const std::string span =
        "<span class=\"vw-source\" data-role=\"source\" title=\"examples/" + file + "\">" + file + "</span>";
    EXPECT_EQ(Count(page, span), 2u) << file << ": in its summary row and its section's heading";
    EXPECT_EQ(Count(page, "data-source=\"examples/" + file + "\""), 1u) << file;
  }
  const size_t row = page.find("<tr data-gpu=\"0\">");
  ASSERT_NE(row, std::string::npos);
  EXPECT_LT(page.find("training-leak.csv</span>", row), page.find("</tr>", row)) << "the first row is the leak's";

  // Series of one file: its name is in the page's header, not repeated on each.
  o.sources = {"examples/training-leak.csv", "examples/training-leak.csv"};
  const std::string one = RenderHtmlReport({leak, healthy}, o);
  EXPECT_EQ(one.find("data-role=\"source\""), std::string::npos);
  EXPECT_EQ(one.find(">Source</th>"), std::string::npos);
  EXPECT_EQ(one.find("data-source="), std::string::npos);
}

// The page's <title> (the tab, the window, a bookmark) names what it reports.
TEST(HtmlReport, TitleNamesWhatIsReported) {
  HtmlReportOptions o;
  o.source = "run-0714.csv";
  EXPECT_NE(RenderHtmlReport({Plateau()}, o).find("<title>vramwatch report · run-0714.csv</title>"), std::string::npos);
  o.source = std::string(300, 'f') + ".csv";
  const std::string page = RenderHtmlReport({Plateau()}, o);
  EXPECT_NE(page.find("<title>vramwatch report · " + std::string(119, 'f') + "…</title>"), std::string::npos);
  EXPECT_NE(RenderHtmlReport({Plateau()}).find("<title>vramwatch report</title>"), std::string::npos);
}

// A process series with a command line of 4 KB: the summary table's cell and the section's heading
// show its first 60 characters, ending "…", the whole name in their title; the section shows the
// whole command folded in a details element. The cell (th,td are nowrap) made the table 34,000 px
// wide, the heading 1,770 px tall.
TEST(HtmlReport, ALongCommandLineIsCutInTheTableAndTheHeading) {
  std::vector<detection::SeriesAnalysis> series = TwoGpus();
  std::string command = "python train.py";
  while (command.size() < 4096) command += " --opt=" + std::to_string(command.size());
  series[0].pid = 4242;
  series[0].process_command = command;
  const std::string name = SeriesName(series[0]);
  ASSERT_EQ(name.rfind("GPU 0 · pid 4242 python train.py", 0), 0u);
  const std::string shown = name.substr(0, 60) + "…";  // 59 characters: "·" is two bytes
  const std::string page = RenderHtmlReport(series);
  EXPECT_NE(page.find("<td title=\"" + name + "\">" + shown + "</td>"), std::string::npos);
  EXPECT_NE(page.find("<h2><span title=\"" + name + "\">" + shown + "</span>"), std::string::npos);
  EXPECT_NE(
      page.find("<details class=\"vw-command\" data-role=\"command\"><summary>Whole command line</summary><code>" +
                command + "</code></details>"),
      std::string::npos);
  EXPECT_EQ(Count(page, command), 3u) << "the two titles and the details, nowhere else";
  // A short one is shown whole, with no title and no details.
  series[0].process_command = "python train.py";
  const std::string short_page = RenderHtmlReport(series);
  EXPECT_NE(short_page.find("<td>GPU 0 · pid 4242 python train.py</td>"), std::string::npos);
  EXPECT_NE(short_page.find("<h2><span>GPU 0 · pid 4242 python train.py</span>"), std::string::npos);
  EXPECT_EQ(short_page.find("data-role=\"command\""), std::string::npos);
}

// Characters, not bytes, are counted, and a character is never cut in two.
TEST(HtmlReport, CutsANameOnACharacterBoundary) {
  auto s = Plateau(0);
  s.pid = 7;
  s.process_command = "训练";
  while (s.process_command.size() < 600) s.process_command += "训练";
  const std::string page = RenderHtmlReport({s, Plateau(1)});
  // "GPU 0 · pid 7 " is 14 characters: 45 of the command's follow, then "…".
  std::string shown = "GPU 0 · pid 7 ";
  for (int i = 0; i < 45; ++i) shown += i % 2 == 0 ? "训" : "练";
  EXPECT_NE(page.find(">" + shown + "…</td>"), std::string::npos);
}

// Every column header of the summary table is marked a column header.
TEST(HtmlReport, SummaryTableHeadersAreColumnHeaders) {
  const std::string page = RenderHtmlReport(TwoGpus());
  EXPECT_EQ(Count(page, "<th scope=\"col\">"), 7u);
  EXPECT_EQ(Count(page, "<th>"), 0u);
  EXPECT_EQ(Count(page, "<th "), 7u);
}

// WCAG's contrast of two "#rrggbb" colours.
double Contrast(const std::string& a, const std::string& b) {
  auto luminance = [](const std::string& hex) {
    double l = 0;
    const double weight[3] = {0.2126, 0.7152, 0.0722};
    for (int i = 0; i < 3; ++i) {
      const double c = std::stoi(hex.substr(1 + 2 * i, 2), nullptr, 16) / 255.0;
      l += weight[i] * (c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4));
    }
    return l;
  };
  const double la = luminance(a), lb = luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

// Every line of a chart (in the report, the --plot file and the live page) stands out from the
// chart's background by 3:1 at least, in both themes: the light theme's raw curve was #9db4d3,
// 2.1:1 on white.
TEST(ChartCss, EveryLineStandsOutFromTheBackground) {
  const std::string css = ChartCss();
  for (const std::string scope : {".vw-chart", ".vw-theme-dark"}) {
    std::smatch bg;
    ASSERT_TRUE(std::regex_search(css, bg, std::regex(scope + " \\.vw-bg\\{fill:(#[0-9a-f]{6})\\}"))) << scope;
    for (const char* line :
         {"raw", "floor", "peak", "trend", "capacity", "event", "axis", "allocated", "reserved", "driver"}) {
      std::smatch m;
      ASSERT_TRUE(
          std::regex_search(css, m, std::regex(scope + " \\.vw-" + line + "(,[^{]*)?\\{stroke:(#[0-9a-f]{6})\\}")))
          << scope << " " << line;
      EXPECT_GE(Contrast(m[2].str(), bg[1].str()), 3.0) << scope << " " << line << " " << m[2] << " on " << bg[1];
    }
  }
}

TEST(WebPage, IsOneSelfContainedDocument) {
  const std::string& page = WebPageHtml();
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  // An empty icon in the page itself, so the browser asks for no /favicon.ico (a 404 and a console
  // error on every load); it fetches nothing.
  const std::string icon = "<link rel=\"icon\" href=\"data:,\">";
  const size_t at = page.find(icon);
  ASSERT_NE(at, std::string::npos);
  ExpectSelfContained(std::string(page).erase(at, icon.size()));
  for (const char* marker : {"@PAGE_CSS@", "@CHART_CSS@", "@SCRIPT@"}) {
    EXPECT_EQ(page.find(marker), std::string::npos) << marker << " was not replaced";
  }
  EXPECT_NE(page.find(".vw-chart .vw-raw{stroke:"), std::string::npos) << "the chart stylesheet is in";
  EXPECT_NE(page.find(".vw-card{"), std::string::npos) << "the page stylesheet is in";
  EXPECT_NE(page.find("getJson('/api/v1/status')"), std::string::npos) << "the script is in";
  EXPECT_NE(page.find("'/api/v1/history?series=gpu:'"), std::string::npos);
  EXPECT_NE(page.find("daemon unreachable"), std::string::npos);
  EXPECT_EQ(&page, &WebPageHtml()) << "built once";
}

}  // namespace
}  // namespace vw::outputs

namespace vw::outputs {
namespace {

// Every selector of the chart stylesheet is scoped: an unscoped one (".vw-projection" after a
// comma in the dark theme's rule) painted the light theme's forecast with the dark palette.
TEST(HtmlReport, EveryChartStyleSelectorIsScopedToItsTheme) {
  const std::string css = ChartCss();
  size_t rules = 0;
  for (size_t at = 0; at < css.size();) {
    const size_t open = css.find('{', at);
    if (open == std::string::npos) break;
    const size_t close = css.find('}', open);
    std::string selectors = css.substr(at, open - at);
    at = close == std::string::npos ? css.size() : close + 1;
    selectors.erase(0, selectors.find_first_not_of(" \n}"));
    if (selectors.rfind("@media", 0) == 0) {
      at = open + 1;  // the rules inside the block follow
      continue;
    }
    std::stringstream list(selectors);
    for (std::string one; std::getline(list, one, ',');) {
      one.erase(0, one.find_first_not_of(" \n"));
      ++rules;
      EXPECT_TRUE(one.rfind(".vw-chart", 0) == 0 || one.rfind(".vw-theme-dark", 0) == 0 ||
                  one.rfind(".vw-theme-auto", 0) == 0)
          << "unscoped selector '" << one << "'";
    }
  }
  EXPECT_GT(rules, 40u);
}

}  // namespace
}  // namespace vw::outputs
