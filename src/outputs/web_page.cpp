// The live page: the generated template with the chart stylesheet put in (see web_page.h).
#include "outputs/web_page.h"

#include <string_view>

#include "outputs/svg_plot.h"

namespace vw::outputs {
namespace internal {
std::string_view WebPageTemplate();  // generated from src/outputs/web/ by embed_web.cmake
}  // namespace internal

const std::string& WebPageHtml() {
  static const std::string page = [] {
    std::string html(internal::WebPageTemplate());
    constexpr std::string_view kMarker = "/*@CHART_CSS@*/";
    if (auto at = html.find(kMarker); at != std::string::npos) html.replace(at, kMarker.size(), ChartCss());
    return html;
  }();
  return page;
}

}  // namespace vw::outputs
