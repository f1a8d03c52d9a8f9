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

// `s` with its ASCII letters raised, every other byte as it is ("3b:00.0" -> "3B:00.0").
inline std::string AsciiUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

}  // namespace vw
