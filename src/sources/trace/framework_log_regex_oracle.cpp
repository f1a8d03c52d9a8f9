// The matchers of framework_log_match.h written as the std::regex expressions their comments give,
// and the parser (framework_log_internal.h) run with them: kept for the tests only, as the reference
// the hand-written matchers are compared with (framework_log_matcher_test.cpp). Not built into the
// library.
#include "sources/trace/framework_log_regex_oracle.h"

#include <cstddef>
#include <optional>
#include <regex>
#include <string>
#include <string_view>

#include "sources/trace/framework_log_internal.h"
#include "sources/trace/framework_log_match.h"

namespace vw::trace::regex_oracle {
namespace {

using framework_match::DriverMatch;
using framework_match::KeyMatch;
using framework_match::KeyPairMatch;
using framework_match::Span;

// The leftmost match of `re` in `s[from, to)`, tried only where `may_start(s, p)` says a match can
// begin (a cheap look at the text): the same match as std::regex_search on that range, without
// running the expression at every position. \b sees the character before `from`, and `$` and a
// final \b take `to` for the end. `m` holds iterators into `s`.
template <typename MayStart>
bool SearchFrom(const std::string& s, size_t from, size_t to, const std::regex& re, std::smatch& m,
                MayStart may_start) {
  for (size_t p = from; p < to; ++p) {
    if (!may_start(s, p)) continue;
    auto flags = std::regex_constants::match_continuous;
    if (p > 0) flags |= std::regex_constants::match_prev_avail;
    if (std::regex_search(s.begin() + static_cast<std::ptrdiff_t>(p), s.begin() + static_cast<std::ptrdiff_t>(to), m,
                          re, flags)) {
      return true;
    }
  }
  return false;
}

bool StartsAt(const std::string& s, size_t p, std::string_view word) {
  return s[p] == word[0] && s.compare(p, word.size(), word) == 0;  // s[p] exists: p < s.size()
}

// Group `g` of `m` as positions in `s`; an empty span at 0 when it did not match.
Span Group(const std::string& s, const std::smatch& m, int g) {
  if (!m[g].matched) return Span{};
  return Span{static_cast<size_t>(m[g].first - s.begin()), static_cast<size_t>(m[g].second - s.begin())};
}

std::string_view View(const std::string& s, Span span) {
  return std::string_view(s).substr(span.begin, span.size());
}

std::string_view LineUnitWord(const std::string& lower) {
  static const std::regex kUnit(R"((?:\(|\[|\bin )\s*([kmgt]i?b|bytes)\s*(?:\)|\]|\b))");
  std::smatch m;
  if (!SearchFrom(lower, 0, lower.size(), kUnit, m,
                  [](const std::string& t, size_t p) { return t[p] == '(' || t[p] == '[' || StartsAt(t, p, "in "); })) {
    return {};
  }
  return View(lower, Group(lower, m, 1));
}

bool MaxOrPeakBefore(const std::string& lower, size_t at) {
  static const std::regex kMax(R"((?:max|peak)[ _]*(?:gpu[ _]*)?(?:cuda[ _]*)?(?:memory[ _]*)?$)");
  const size_t from = at > 20 ? at - 20 : 0;
  std::smatch m;
  return SearchFrom(lower, from, at, kMax, m,
                    [](const std::string& t, size_t p) { return StartsAt(t, p, "max") || StartsAt(t, p, "peak"); });
}

std::optional<Span> FindDevice(const std::string& lower, size_t from, size_t to, bool cuda_too) {
  static const std::regex kDevice(R"(\b(?:cuda:|gpu[ -]?)(\d{1,6})\b)");
  static const std::regex kGpu(R"(\bgpu[- ]?(\d{1,6})\b)");
  std::smatch m;
  if (!SearchFrom(lower, from, to, cuda_too ? kDevice : kGpu, m, [&](const std::string& t, size_t p) {
        return (cuda_too && StartsAt(t, p, "cuda:")) || StartsAt(t, p, "gpu");
      })) {
    return std::nullopt;
  }
  return Group(lower, m, 1);
}

std::optional<Span> FindRankDevice(const std::string& lower, size_t from, size_t to) {
  static const std::regex kRank(
      R"(\b(?:global_rank|local_rank|rank|device)(?:\s*[:=]\s*(\d{1,6})\b(?!\.\d)|\s*(\d{1,6})\s*(?:/|of)\s*\d{1,6}\b|\s*(\d{1,6})\s*[|:\]]))");
  std::smatch m;
  if (!SearchFrom(lower, from, to, kRank, m, [](const std::string& t, size_t p) {
        return StartsAt(t, p, "global_rank") || StartsAt(t, p, "local_rank") || StartsAt(t, p, "rank") ||
               StartsAt(t, p, "device");
      })) {
    return std::nullopt;
  }
  for (int g = 1; g <= 3; ++g) {
    if (m[g].matched) return Group(lower, m, g);
  }
  return std::nullopt;
}

std::optional<Span> FindTableTitleDevice(const std::string& lower) {
  static const std::regex kTitle(R"(memory summary, device id (\d{1,6})\b)");
  std::smatch m;
  if (!SearchFrom(lower, 0, lower.size(), kTitle, m,
                  [](const std::string& t, size_t p) { return StartsAt(t, p, "memory summary"); })) {
    return std::nullopt;
  }
  return Group(lower, m, 1);
}

std::optional<KeyMatch> FindKey(const std::string& lower, size_t from) {
  static const std::regex kKey(
      R"(\b(?:memory_)?(alloc(?:ated)?|reserved)(?:_bytes\.all\.current)?(?:[ _](?:memory|mem))?(?:[ _](cur(?:rent)?|peak|max))?\s*(?:\(\s*(?:device\s*=\s*)?['"]?(?:cuda:)?(\d{0,6})['"]?\s*\)|[(\[]\s*([kmgt]i?b|bytes)\s*[)\]])?(?:['"],|[\s:=|'"])*(-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)\s*([kmgt](?:i?b)?|bytes|b)?\b)");
  std::smatch m;
  if (!SearchFrom(lower, from, lower.size(), kKey, m, [](const std::string& t, size_t p) {
        return StartsAt(t, p, "alloc") || StartsAt(t, p, "reserved") || StartsAt(t, p, "memory_");
      })) {
    return std::nullopt;
  }
  KeyMatch k;
  k.whole = Group(lower, m, 0);
  k.metric = View(lower, Group(lower, m, 1));
  k.which = View(lower, Group(lower, m, 2));
  if (m[3].matched) k.device = Group(lower, m, 3);
  k.bracket_unit = Group(lower, m, 4);
  k.number = Group(lower, m, 5);
  k.unit = Group(lower, m, 6);
  return k;
}

std::optional<DriverMatch> FindDriverFigure(const std::string& lower, size_t from) {
  static const std::regex kUsed(
      R"(\bmemory\b(?:[^0-9\n]|[0-9][0-9.]*\s*%)*?([0-9]+(?:\.[0-9]+)?)(?![0-9.]*\s*%)\s*([kmgt]i?b|bytes)?\b)");
  std::smatch m;
  if (!SearchFrom(lower, from, lower.size(), kUsed, m,
                  [](const std::string& t, size_t p) { return StartsAt(t, p, "memory"); })) {
    return std::nullopt;
  }
  return DriverMatch{Group(lower, m, 0), Group(lower, m, 1), Group(lower, m, 2)};
}

std::optional<KeyPairMatch> FindKeyPair(const std::string& lower, size_t from) {
  static const std::regex kPair(
      R"(\b(alloc(?:ated)?|reserved)\s*/\s*(alloc(?:ated)?|reserved)[\s:=|'"]*([0-9]+(?:\.[0-9]+)?)\s*/\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt](?:i?b)?|bytes|b)?\b)");
  std::smatch m;
  if (!SearchFrom(lower, from, lower.size(), kPair, m, [](const std::string& t, size_t p) {
        return StartsAt(t, p, "alloc") || StartsAt(t, p, "reserved");
      })) {
    return std::nullopt;
  }
  KeyPairMatch k;
  k.whole = Group(lower, m, 0);
  k.first = View(lower, Group(lower, m, 1));
  k.second = View(lower, Group(lower, m, 2));
  k.first_number = Group(lower, m, 3);
  k.second_number = Group(lower, m, 4);
  k.unit = Group(lower, m, 5);
  return k;
}

std::optional<Span> RatioUnitAt(const std::string& lower, size_t at) {
  static const std::regex kRatio(R"(\s*/\s*[0-9][0-9,]*(?:\.[0-9]+)?\s*([kmgt](?:i?b)?|bytes|b)\b)");
  std::smatch m;
  auto flags = std::regex_constants::match_continuous;
  if (at > 0) flags |= std::regex_constants::match_prev_avail;
  if (at >= lower.size() ||
      !std::regex_search(lower.begin() + static_cast<std::ptrdiff_t>(at), lower.end(), m, kRatio, flags)) {
    return std::nullopt;
  }
  return Group(lower, m, 1);
}

}  // namespace

const framework_match::Matchers& RegexMatchers() {
  static const framework_match::Matchers kRegex{
      .line_unit_word = LineUnitWord,
      .max_or_peak_before = MaxOrPeakBefore,
      .find_device = FindDevice,
      .find_rank_device = FindRankDevice,
      .find_table_title_device = FindTableTitleDevice,
      .find_key = FindKey,
      .find_driver_figure = FindDriverFigure,
      .find_key_pair = FindKeyPair,
      .ratio_unit_at = RatioUnitAt,
  };
  return kRegex;
}

bool LooksLikeFrameworkLog(std::string_view head) {
  return LooksLikeFrameworkLogWith(head, RegexMatchers());
}

bool IsFrameworkLogHead(std::string_view head, bool complete) {
  return IsFrameworkLogHeadWith(head, complete, RegexMatchers());
}

Result<FrameworkLog> ParseFrameworkLog(std::string_view text, const std::string& display, bool lenient) {
  return ParseFrameworkLogWith(text, display, lenient, RegexMatchers());
}

}  // namespace vw::trace::regex_oracle
