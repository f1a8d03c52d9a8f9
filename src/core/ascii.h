// ASCII text helpers that do not depend on the locale (vramwatch sets none; names, units and
// schemes it compares are ASCII).
#pragma once

#include <string>
#include <string_view>

namespace vw {

// `s` with its ASCII letters lowered, every other byte as it is ("GiB" -> "gib").
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace vw
