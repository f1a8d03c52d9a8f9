// The matchers that find the parts of a framework memory log's line (framework_log.cpp): keys and
// their values, units, devices, maxima, the driver's figure, a summary table's title. Each finds
// what std::regex_search finds with the ECMAScript expression in its comment, as libstdc++ runs it
// in the "C" locale: the same leftmost match and the same groups. framework_log_matcher_test.cpp
// holds them to those expressions: the parser run with them and with the expressions themselves
// (framework_log_regex_oracle.h) must give the same results.
//
// Lines are lowercased (ASCII) first. Word characters (\w; \b lies between one and a character that
// is not one, or an end) are ASCII letters, digits and '_'; \s is ' ', \t, \n, \v, \f and \r; \d is
// 0-9. A search in `[from, to)` never reads past `to`: \b at `to` sees no character after it, and \b
// at `from` sees the one before it, as the expressions did with match_prev_avail.
// Positions are indexes into the line. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace vw::trace::framework_match {

// Characters [begin, end) of a line.
struct Span {
  size_t begin = 0, end = 0;
  size_t size() const { return end - begin; }
  std::string Of(const std::string& line) const { return line.substr(begin, size()); }
};

// The unit a line names for its unit-less values ("(mb)", "[mib]", "in gb"): group 1 of
// (?:\(|\[|\bin )\s*([kmgt]i?b|bytes)\s*(?:\)|\]|\b), empty for none.
std::string_view LineUnitWord(const std::string& lower);

// Whether (?:max|peak)[ _]*(?:gpu[ _]*)?(?:cuda[ _]*)?(?:memory[ _]*)?$ matches at one of the 20
// positions before `at`, `$` at `at`.
bool MaxOrPeakBefore(const std::string& lower, size_t at);

// The first device named in `[from, to)`, \b(?:cuda:|gpu[ -]?)(\d{1,6})\b, or without `cuda_too`
// \bgpu[- ]?(\d{1,6})\b: its digits (group 1, which ends the match).
std::optional<Span> FindDevice(const std::string& lower, size_t from, size_t to, bool cuda_too);

// The first rank or device a line names in words in `[from, to)`, as torchrun and loggers prefix
// lines ("[rank1]:", "rank 0 |", "Device 1:"): \b(?:rank|device)\s*(\d{1,6})\s*[|:\]]: its
// digits (group 1).
std::optional<Span> FindRankDevice(const std::string& lower, size_t from, size_t to);

// A memory_summary() table's device: the digits of memory summary, device id (\d{1,6})\b.
std::optional<Span> FindTableTitleDevice(const std::string& lower);

// A key and its value:
// \b(?:memory_)?(alloc(?:ated)?|reserved)(?:_bytes\.all\.current)?(?:[ _](?:memory|mem))?
// (?:[ _](cur(?:rent)?|peak|max))?\s*(?:\(\s*(?:device\s*=\s*)?['"]?(?:cuda:)?(\d{0,6})['"]?\s*\)|
// [(\[]\s*([kmgt]i?b|bytes)\s*[)\]])?(?:['"],|[\s:=|'"])*
// (-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)\s*([kmgt](?:i?b)?|bytes|b)?\b
// A unit in brackets after the key ("allocated (GB): 1.5", "allocated [MB]: 1500.5") is the
// value's unit; the `', ` between a tuple's key and value (an OrderedDict printed by Python 3.11
// and older: "('allocated_bytes.all.current', 4294967296)") is skipped as a ':' is.
struct KeyMatch {
  Span whole;
  std::string_view metric;     // group 1: "alloc", "allocated" or "reserved"
  std::string_view which;      // group 2: "cur", "current", "peak", "max", or empty when unmatched
  std::optional<Span> device;  // group 3, the call's device digits (maybe none) when it has brackets
  Span bracket_unit;           // group 4, empty when unmatched
  Span number;                 // group 5
  Span unit;                   // group 6, empty when unmatched
};

// The first key and value that starts in `[from, lower.size())`.
std::optional<KeyMatch> FindKey(const std::string& lower, size_t from);

// The driver's figure:
// \bmemory\b(?:[^0-9\n]|[0-9][0-9.]*\s*%)*?([0-9]+(?:\.[0-9]+)?)(?![0-9.]*\s*%)\s*([kmgt]i?b|bytes)?\b
// (a percentage, "memory 45% (35000 MiB)", is passed over).
struct DriverMatch {
  Span whole;
  Span number;  // group 1
  Span unit;    // group 2, empty when unmatched
};

// The first driver's figure that starts in `[from, lower.size())`.
std::optional<DriverMatch> FindDriverFigure(const std::string& lower, size_t from);

// Two keys and their values written as fractions, "allocated/reserved: 2048/4096 MB":
// \b(alloc(?:ated)?|reserved)\s*/\s*(alloc(?:ated)?|reserved)[\s:=|'"]*([0-9]+(?:\.[0-9]+)?)\s*/\s*
// ([0-9]+(?:\.[0-9]+)?)\s*([kmgt](?:i?b)?|bytes|b)?\b
struct KeyPairMatch {
  Span whole;
  std::string_view first, second;    // groups 1 and 2
  Span first_number, second_number;  // groups 3 and 4
  Span unit;                         // group 5, empty when unmatched
};

// The first pair of keys and values that starts in `[from, lower.size())`.
std::optional<KeyPairMatch> FindKeyPair(const std::string& lower, size_t from);

// The unit of a value given as a part of a whole ("allocated 2048 / 81920 MiB"): at `at` (right
// after the value's number), ^\s*/\s*[0-9][0-9,]*(?:\.[0-9]+)?\s*([kmgt](?:i?b)?|bytes|b)\b: the
// unit's span (group 1).
std::optional<Span> RatioUnitAt(const std::string& lower, size_t at);

// The matchers the parser (framework_log_internal.h) finds a line's parts with, one member per
// function above and of its signature. A default-built set holds the functions above; the tests
// give the parser another set (framework_log_regex_oracle.h's, the expressions themselves).
struct Matchers {
  std::string_view (*line_unit_word)(const std::string& lower) = LineUnitWord;
  bool (*max_or_peak_before)(const std::string& lower, size_t at) = MaxOrPeakBefore;
  std::optional<Span> (*find_device)(const std::string& lower, size_t from, size_t to, bool cuda_too) = FindDevice;
  std::optional<Span> (*find_rank_device)(const std::string& lower, size_t from, size_t to) = FindRankDevice;
  std::optional<Span> (*find_table_title_device)(const std::string& lower) = FindTableTitleDevice;
  std::optional<KeyMatch> (*find_key)(const std::string& lower, size_t from) = FindKey;
  std::optional<DriverMatch> (*find_driver_figure)(const std::string& lower, size_t from) = FindDriverFigure;
  std::optional<KeyPairMatch> (*find_key_pair)(const std::string& lower, size_t from) = FindKeyPair;
  std::optional<Span> (*ratio_unit_at)(const std::string& lower, size_t at) = RatioUnitAt;
};

}  // namespace vw::trace::framework_match
