// SVG markup shared by the charts (see svg_markup.h).
#include "outputs/svg_markup.h"

#include <fmt/format.h>

#include <cmath>

#include "core/printable.h"

namespace vw::outputs {

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    const auto byte = static_cast<unsigned char>(text[i]);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", byte);  // not UTF-8
      ++i;
      continue;
    }
    if (n == 2 && byte == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1]));  // C1: U+0080..U+009F
      i += 2;
      continue;
    }
    if (n == 3 && byte == 0xEF && static_cast<unsigned char>(text[i + 1]) == 0xBF &&
        static_cast<unsigned char>(text[i + 2]) >= 0xBE) {
      // U+FFFE and U+FFFF: valid UTF-8, but not characters XML allows.
      out += fmt::format("\\u{:04x}", 0xFFC0 | (static_cast<unsigned char>(text[i + 2]) & 0x3F));
      i += 3;
      continue;
    }
    if (n > 1) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    switch (text[i]) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\n': out += '\n'; break;
      case '\t': out += '\t'; break;
      case '\r': out += "\\r"; break;
      default:
        if (byte < 0x20 || byte == 0x7F) {
          out += fmt::format("\\x{:02x}", byte);
        } else {
          out += text[i];
        }
    }
    ++i;
  }
  return out;
}

std::string Num(double v) {
  return fmt::format("{:.1f}", std::round(v * 10) / 10 + 0.0);
}

std::string PathData(const std::vector<Point>& pts, const std::vector<size_t>& breaks) {
  std::string out;
  out.reserve(pts.size() * 13);
  size_t next = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    const bool lift = i == 0 || (next < breaks.size() && breaks[next] == i);
    if (lift && i > 0) ++next;
    if (!out.empty()) out += ' ';
    const bool alone = lift && (i + 1 == pts.size() || (next < breaks.size() && breaks[next] == i + 1));
    if (alone) {  // a stretch of one point between gaps: a 2 px dash, not a pen-down that draws nothing
      out += "M" + Num(pts[i].x - 1) + "," + Num(pts[i].y) + " h2";
      continue;
    }
    out += (lift ? "M" : "L") + Num(pts[i].x) + "," + Num(pts[i].y);
  }
  return out;
}

std::string LonePointDots(const std::vector<Point>& pts, const std::vector<size_t>& breaks, std::string_view role) {
  std::string out;
  size_t next = 0;  // the first break after point i
  for (size_t i = 0; i < pts.size(); ++i) {
    while (next < breaks.size() && breaks[next] <= i) ++next;
    const bool starts = i == 0 || (next > 0 && breaks[next - 1] == i);
    const bool ends = i + 1 == pts.size() || (next < breaks.size() && breaks[next] == i + 1);
    if (!starts || !ends) continue;
    out += fmt::format("<circle class=\"vw-dot vw-dot-{0}\" data-role=\"{0}-dot\" cx=\"{1}\" cy=\"{2}\" r=\"2.5\"/>\n",
                       role, Num(pts[i].x), Num(pts[i].y));
  }
  return out;
}

std::string PointsAttr(const std::vector<Point>& pts) {
  std::string out;
  out.reserve(pts.size() * 12);
  for (const auto& p : pts) {
    if (!out.empty()) out += ' ';
    out += Num(p.x) + "," + Num(p.y);
  }
  return out;
}

namespace {

std::string_view AnchorName(Anchor a) {
  switch (a) {
    case Anchor::kStart: return "start";
    case Anchor::kMiddle: return "middle";
    case Anchor::kEnd: return "end";
  }
  return "start";
}

}  // namespace

std::string TextEl(const PlacedLabel& l, std::string_view cls, std::string_view extra) {
  return fmt::format("<text class=\"{}\" x=\"{}\" y=\"{}\" text-anchor=\"{}\"{}>{}</text>\n", cls, Num(l.at.x),
                     Num(l.at.y), AnchorName(l.anchor), extra, XmlEscape(l.text));
}

std::string ChartHeadMarkup(const std::string& title, const std::string& tooltip, double width, double height,
                            Point title_at, Point subtitle_at, const std::vector<std::string>& subtitle_lines,
                            double line_step) {
  std::string out = fmt::format("<title>{}: {}</title>\n", XmlEscape(title), XmlEscape(tooltip));
  out += fmt::format("<rect class=\"vw-bg\" width=\"{}\" height=\"{}\"/>\n", Num(width), Num(height));
  out += fmt::format("<text class=\"vw-title\" x=\"{}\" y=\"{}\">{}</text>\n", Num(title_at.x), Num(title_at.y),
                     XmlEscape(title));
  for (size_t i = 0; i < subtitle_lines.size(); ++i) {
    out +=
        fmt::format("<text class=\"vw-sub\" data-role=\"subtitle\" x=\"{}\" y=\"{}\">{}</text>\n", Num(subtitle_at.x),
                    Num(subtitle_at.y + static_cast<double>(i) * line_step), XmlEscape(subtitle_lines[i]));
  }
  return out;
}

std::string LegendMarkup(const std::vector<LegendItem>& legend) {
  std::string out = "<g data-role=\"legend\">\n";
  for (const auto& item : legend) {
    const Rect& r = item.swatch;
    if (item.role == "band" || item.role == "warmup") {
      out += fmt::format("<rect class=\"vw-swatch-{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" opacity=\"0.35\"/>",
                         item.role, Num(r.x), Num(r.y), Num(r.w), Num(r.h));
    } else {
      out += fmt::format("<line class=\"vw-{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", item.role, Num(r.x),
                         Num(r.y + r.h / 2), Num(r.right()), Num(r.y + r.h / 2));
    }
    out += TextEl(item.label, "vw-legend-text");
  }
  out += "</g>\n";
  return out;
}

std::string AxesMarkup(const Rect& P, const LinearScale& x_scale, const LinearScale& y_scale,
                       const std::vector<Tick>& x_ticks, const std::vector<PlacedLabel>& x_labels,
                       const std::vector<Tick>& y_ticks, const std::vector<PlacedLabel>& y_labels,
                       const PlacedLabel& x_title) {
  std::string out = "<g data-role=\"y-axis\">\n";
  for (size_t i = 0; i < y_ticks.size(); ++i) {
    double y = y_scale(y_ticks[i].value);
    out += fmt::format("<line class=\"vw-grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", Num(P.x), Num(y),
                       Num(P.right()), Num(y));
    out += TextEl(y_labels[i], "vw-tick");
  }
  out += "</g>\n<g data-role=\"x-axis\">\n";
  for (size_t i = 0; i < x_ticks.size(); ++i) {
    double x = x_scale(x_ticks[i].value);
    out += fmt::format("<line class=\"vw-grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", Num(x), Num(P.y), Num(x),
                       Num(P.bottom()));
    out += TextEl(x_labels[i], "vw-tick");
  }
  out += TextEl(x_title, "vw-sub vw-axis-title");
  out += "</g>\n";
  out += fmt::format("<line class=\"vw-axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n", Num(P.x),
                     Num(P.bottom()), Num(P.right()));
  return out;
}

}  // namespace vw::outputs
