#include "core/printable.h"

#include <fmt/format.h>

namespace vw {
namespace {

// Utf8SequenceLength, and the code point it encodes.
size_t Utf8Length(std::string_view text, size_t i, char32_t* code_point) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = b(i);
  size_t n = 0;
  char32_t cp = 0;
  if (c < 0x80) {
    *code_point = c;
    return 1;
  }
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  *code_point = cp;
  return n;
}

}  // namespace

size_t Utf8SequenceLength(std::string_view text, size_t i) {
  char32_t cp = 0;
  return Utf8Length(text, i, &cp);
}

std::string Printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const size_t n = Utf8Length(text, i, &cp);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || cp == 0x7F) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    } else if (cp >= 0x80 && cp <= 0x9F) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string PrintableLines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at <= text.size();) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    out += Printable(text.substr(at, nl - at));
    if (nl < text.size()) out += '\n';
    at = nl + 1;
  }
  return out;
}

std::string_view Utf8Prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  // Back off over continuation bytes to the start of the character that would be cut.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

std::string Utf8Shortened(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  return std::string(Utf8Prefix(text, max_bytes - 3)) + "...";
}

std::string PrintableTail(std::string_view text, size_t max_columns) {
  std::string shown = Printable(text);  // valid UTF-8 from here on
  size_t chars = 0;
  for (unsigned char c : shown) chars += (c & 0xC0) != 0x80;
  if (chars <= max_columns) return shown;
  // Skip the first chars - (max_columns - 1) characters.
  size_t skip = chars - (max_columns - 1), at = 0;
  while (skip > 0) {
    ++at;
    while (at < shown.size() && (static_cast<unsigned char>(shown[at]) & 0xC0) == 0x80) ++at;
    --skip;
  }
  return "…" + shown.substr(at);
}

}  // namespace vw
