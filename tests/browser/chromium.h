// Headless Chromium from tests: dump a page's DOM after it ran, or save a screenshot; and a small
// start-tag scanner to query the dumped DOM. Each run gets its own profile folder, so tests may run
// in parallel. Chromium must be on PATH as `chromium`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace vw::browser_test {

// Full path of `chromium` on PATH, or nothing.
std::optional<std::string> FindChromium();

struct PageRun {
  std::string url;
  int width = 1200, height = 900;
  bool dark = false;               // prefers-color-scheme: dark
  int virtual_time_budget_ms = 0;  // > 0 lets the page's scripts and timers run that long first
  std::string tz = "UTC";          // the browser's time zone (TZ), e.g. "Asia/Tokyo"
};

// The serialized DOM after load (empty with `error` set on failure).
struct DomResult {
  std::string dom;
  std::string error;
};
DomResult DumpDom(const PageRun& run);

// Writes a PNG to `png_path`; returns an error message, empty on success.
std::string Screenshot(const PageRun& run, const std::string& png_path);

// One start tag of the dumped DOM.
struct Element {
  std::string tag;
  std::map<std::string, std::string> attrs;
  size_t offset = 0;  // where the tag starts in the DOM text
  bool Has(const std::string& name, const std::string& value) const;
};

// Every start tag named `tag` ("svg", "tr", "*" for all), in document order; the text of script
// and style elements is skipped.
std::vector<Element> Elements(const std::string& dom, const std::string& tag);

// Elements of `tag` with attribute `name` (and, when given, that value).
std::vector<Element> Select(const std::string& dom, const std::string& tag, const std::string& name,
                            const std::optional<std::string>& value = std::nullopt);

// The DOM text with tags (and script/style text) removed and entities &amp; &lt; &gt; &quot; &#39; decoded.
std::string TextOf(const std::string& html);

}  // namespace vw::browser_test
