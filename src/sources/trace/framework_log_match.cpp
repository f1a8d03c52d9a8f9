#include "sources/trace/framework_log_match.h"

#include <algorithm>
#include <initializer_list>

namespace vw::trace::framework_match {
namespace {

// The character classes of the header's comment.
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
bool IsSpace(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}
bool IsWord(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// \b at `p` of `s[0, to)`.
bool Boundary(const std::string& s, size_t p, size_t to) {
  const bool left = p > 0 && IsWord(s[p - 1]);
  const bool right = p < to && IsWord(s[p]);
  return left != right;
}

// Whether `s[p, to)` starts with `word` (p <= to). A loop: the words are short, and most tries
// end at their first character.
bool At(const std::string& s, size_t p, size_t to, std::string_view word) {
  if (to - p < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (s[p + i] != word[i]) return false;
  }
  return true;
}

// The end of the run of characters `in` takes from `p` on, `to` at most.
template <typename In>
size_t RunEnd(const std::string& s, size_t p, size_t to, In in) {
  while (p < to && in(s[p])) ++p;
  return p;
}
size_t SpacesEnd(const std::string& s, size_t p, size_t to) {
  return RunEnd(s, p, to, IsSpace);
}
size_t DigitsEnd(const std::string& s, size_t p, size_t to) {
  return RunEnd(s, p, to, IsDigit);
}

// \b at `p` right after a word character (a unit's last letter, a number's last digit).
bool WordEndsAt(const std::string& s, size_t p, size_t to) {
  return p == to || !IsWord(s[p]);
}

// The end of `[kmgt]i?b|bytes` at `p`, or `p` for none (there is one match or none: "ki" with no
// "b" after it matches neither with the "i" nor without).
size_t ByteUnitEnd(const std::string& s, size_t p, size_t to) {
  if (p < to && (s[p] == 'k' || s[p] == 'm' || s[p] == 'g' || s[p] == 't')) {
    if (At(s, p + 1, to, "ib")) return p + 3;
    if (At(s, p + 1, to, "b")) return p + 2;
    return p;
  }
  return At(s, p, to, "bytes") ? p + 5 : p;
}

// What `\s*(unit)?\b` matches right after a number (whose last character is a digit) at `p`:
// the unit's span (empty for none) and the match's end. `unit_end(s, q, to)` gives the end of the
// unit at `q` that the expression takes there (the first of its alternatives followed by \b), or
// `q` for none. \s* takes every space first: with fewer, a space follows, which no unit starts
// with and \b does not hold before, but at the number's end, where \b holds between its digit and
// the space.
struct Tail {
  Span unit;
  size_t end = 0;
};

template <typename UnitEnd>
std::optional<Tail> TailAt(const std::string& s, size_t p, size_t to, UnitEnd unit_end) {
  const size_t q = SpacesEnd(s, p, to);
  if (const size_t u = unit_end(s, q, to); u > q) return Tail{{q, u}, u};
  if (Boundary(s, q, to)) return Tail{{q, q}, q};
  if (q > p) return Tail{{p, p}, p};
  return std::nullopt;
}

// The unit after a memory value, [kmgt](?:i?b)?|bytes|b followed by \b: its end at `p`, or `p`.
size_t ValueUnitEnd(const std::string& s, size_t p, size_t to) {
  if (p >= to) return p;
  if (s[p] == 'k' || s[p] == 'm' || s[p] == 'g' || s[p] == 't') {
    if (At(s, p + 1, to, "ib") && WordEndsAt(s, p + 3, to)) return p + 3;
    if (At(s, p + 1, to, "b") && WordEndsAt(s, p + 2, to)) return p + 2;
    return WordEndsAt(s, p + 1, to) ? p + 1 : p;
  }
  if (At(s, p, to, "bytes") && WordEndsAt(s, p + 5, to)) return p + 5;
  return s[p] == 'b' && WordEndsAt(s, p + 1, to) ? p + 1 : p;
}

// The driver's figure's unit, ([kmgt]i?b|bytes)? followed by \b: its end at `p`, or `p`.
size_t DriverUnitEnd(const std::string& s, size_t p, size_t to) {
  const size_t u = ByteUnitEnd(s, p, to);
  return u > p && WordEndsAt(s, u, to) ? u : p;
}

// A number matched with what follows it: where the number ends, and its unit's tail.
struct NumberEnd {
  size_t end = 0;
  Tail tail;
};

// (?:e[+-]?[0-9]+)? and the unit's tail at `p`. A run of digits is taken whole here and below: a
// shorter one stops before a digit, which nothing after it matches and \b does not hold before.
std::optional<NumberEnd> AfterFraction(const std::string& s, size_t p, size_t to) {
  if (p < to && s[p] == 'e') {
    size_t q = p + 1;
    if (q < to && (s[q] == '+' || s[q] == '-')) ++q;
    const size_t e = DigitsEnd(s, q, to);
    if (e > q) {
      if (const std::optional<Tail> t = TailAt(s, e, to, ValueUnitEnd)) return NumberEnd{e, *t};
    }
  }
  if (const std::optional<Tail> t = TailAt(s, p, to, ValueUnitEnd)) return NumberEnd{p, *t};
  return std::nullopt;
}

// (?:\.[0-9]+)?, the exponent and the unit's tail after an integer part ending at `p`.
std::optional<NumberEnd> AfterInteger(const std::string& s, size_t p, size_t to) {
  if (p < to && s[p] == '.') {
    const size_t f = DigitsEnd(s, p + 1, to);
    if (f > p + 1) {
      if (const std::optional<NumberEnd> n = AfterFraction(s, f, to)) return n;
    }
  }
  return AfterFraction(s, p, to);
}

// -?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+), the fraction, the exponent and the unit's tail at `p`.
// The thousands groups are tried as many as follow first, then fewer (one fewer stops before a
// comma, where \b holds), then the digits without them.
std::optional<NumberEnd> NumberAt(const std::string& s, size_t p, size_t to) {
  if (p < to && s[p] == '-') ++p;
  const size_t d = DigitsEnd(s, p, to);
  if (d == p) return std::nullopt;
  if (d - p <= 3) {
    size_t groups = 0;
    for (size_t g = d; g < to && s[g] == ',' && DigitsEnd(s, g + 1, std::min(to, g + 4)) == g + 4; g += 4) ++groups;
    for (; groups > 0; --groups) {
      if (const std::optional<NumberEnd> n = AfterInteger(s, d + 4 * groups, to)) return n;
    }
  }
  return AfterInteger(s, d, to);
}

// The word of `words` that follows a ' ' or '_' at `*p`, `*p` moved past it; empty for none.
std::string_view SeparatedWord(const std::string& s, size_t* p, size_t to,
                               std::initializer_list<std::string_view> words) {
  if (*p >= to || (s[*p] != ' ' && s[*p] != '_')) return {};
  for (std::string_view w : words) {
    if (At(s, *p + 1, to, w)) {
      *p += 1 + w.size();
      return std::string_view(s).substr(*p - w.size(), w.size());
    }
  }
  return {};
}

// The call's device in brackets at `p` (an opening bracket), as
// \(\s*(?:device\s*=\s*)?['"]?(?:cuda:)?(\d{0,6})['"]?\s*\) matches it: its digits into `*device`,
// and the end; nullopt when it does not match. Each optional part is taken when it is there: left
// out, what is there matches no later part, or the match ends at the same bracket with the same
// digits.
std::optional<size_t> DeviceInBrackets(const std::string& s, size_t p, size_t to, std::optional<Span>* device) {
  auto quote = [&](size_t i) { return i < to && (s[i] == '\'' || s[i] == '"'); };
  size_t q = SpacesEnd(s, p + 1, to);
  if (At(s, q, to, "device")) {
    const size_t eq = SpacesEnd(s, q + 6, to);
    if (eq < to && s[eq] == '=') q = SpacesEnd(s, eq + 1, to);
  }
  if (quote(q)) ++q;
  if (At(s, q, to, "cuda:")) q += 5;
  const size_t d = DigitsEnd(s, q, to);
  if (d - q > 6) return std::nullopt;  // six digits then a digit: nothing matches
  *device = Span{q, d};
  q = d;
  if (quote(q)) ++q;
  q = SpacesEnd(s, q, to);
  if (q < to && s[q] == ')') return q + 1;
  return std::nullopt;
}

// A unit in brackets at `p` (an opening bracket), [(\[]\s*([kmgt]i?b|bytes)\s*[)\]]: the unit into
// `*unit`, and the end; nullopt when it does not match.
std::optional<size_t> UnitInBrackets(const std::string& s, size_t p, size_t to, Span* unit) {
  const size_t q = SpacesEnd(s, p + 1, to);
  const size_t u = ByteUnitEnd(s, q, to);
  if (u == q) return std::nullopt;
  const size_t r = SpacesEnd(s, u, to);
  if (r >= to || (s[r] != ')' && s[r] != ']')) return std::nullopt;
  *unit = Span{q, u};
  return r + 1;
}

// FindKey's expression at `p`. Each part is read as far as it goes: a shorter or a skipped one ("alloc" of
// "allocated", "cur" of "current", no "memory_") leaves a letter or a separator that no later
// part matches before the number.
std::optional<KeyMatch> KeyAt(const std::string& s, size_t p) {
  const size_t to = s.size();
  if (p > 0 && IsWord(s[p - 1])) return std::nullopt;  // \b before the key's first letter
  KeyMatch m;
  size_t q = p;
  if (At(s, q, to, "memory_")) q += 7;
  for (std::string_view metric : {"allocated", "alloc", "reserved"}) {
    if (At(s, q, to, metric)) {
      m.metric = std::string_view(s).substr(q, metric.size());
      q += metric.size();
      break;
    }
  }
  if (m.metric.empty()) return std::nullopt;
  if (At(s, q, to, "_bytes.all.current")) q += 18;
  SeparatedWord(s, &q, to, {"memory", "mem"});
  m.which = SeparatedWord(s, &q, to, {"current", "cur", "peak", "max"});
  q = SpacesEnd(s, q, to);
  if (q < to && (s[q] == '(' || s[q] == '[')) {
    std::optional<size_t> close = s[q] == '(' ? DeviceInBrackets(s, q, to, &m.device) : std::nullopt;
    if (!close) {
      m.device.reset();
      close = UnitInBrackets(s, q, to, &m.bracket_unit);
    }
    if (!close) return std::nullopt;  // left out, the bracket is no number
    q = *close;
  }
  // (?:['"],|[\s:=|'"])*: all of them, as a number starts with none; a comma only after a quote.
  for (;;) {
    if (q < to && (s[q] == '\'' || s[q] == '"') && q + 1 < to && s[q + 1] == ',') {
      q += 2;
    } else if (q < to && (IsSpace(s[q]) || s[q] == ':' || s[q] == '=' || s[q] == '|' || s[q] == '\'' || s[q] == '"')) {
      ++q;
    } else {
      break;
    }
  }
  const std::optional<NumberEnd> n = NumberAt(s, q, to);
  if (!n) return std::nullopt;
  m.whole = Span{p, n->tail.end};
  m.number = Span{q, n->end};
  m.unit = n->tail.unit;
  return m;
}

}  // namespace

// The closing part always matches unless a word character follows the unit right away (after
// spaces, \b holds between the unit and the first).
std::string_view LineUnitWord(const std::string& lower) {
  const size_t to = lower.size();
  for (size_t p = 0; p < to; ++p) {
    size_t q = p + 1;
    if (lower[p] != '(' && lower[p] != '[') {
      if (!At(lower, p, to, "in ") || (p > 0 && IsWord(lower[p - 1]))) continue;
      q = p + 3;
    }
    q = SpacesEnd(lower, q, to);
    const size_t u = ByteUnitEnd(lower, q, to);
    if (u > q && WordEndsAt(lower, u, to)) return std::string_view(lower).substr(q, u - q);
  }
  return {};
}

// Each part is read as far as it goes: a shorter read leaves a character no later part starts with.
bool MaxOrPeakBefore(const std::string& lower, size_t at) {
  auto separators_end = [&](size_t p) { return RunEnd(lower, p, at, [](char c) { return c == ' ' || c == '_'; }); };
  for (size_t p = at > 20 ? at - 20 : 0; p < at; ++p) {
    size_t q;
    if (At(lower, p, at, "max")) {
      q = p + 3;
    } else if (At(lower, p, at, "peak")) {
      q = p + 4;
    } else {
      continue;
    }
    q = separators_end(q);
    for (std::string_view word : {"gpu", "cuda", "memory"}) {
      if (At(lower, q, at, word)) q = separators_end(q + word.size());
    }
    if (q == at) return true;
  }
  return false;
}

std::optional<Span> FindDevice(const std::string& lower, size_t from, size_t to, bool cuda_too) {
  const std::string& s = lower;
  for (size_t p = from; p < to; ++p) {
    if ((s[p] != 'c' && s[p] != 'g') || (p > 0 && IsWord(s[p - 1]))) continue;  // \b before a letter
    size_t q;
    if (cuda_too && At(s, p, to, "cuda:")) {
      q = p + 5;
    } else if (At(s, p, to, "gpu")) {
      q = p + 3;
      if (q < to && (s[q] == ' ' || s[q] == '-')) ++q;  // [ -]? (without it, no digit would follow)
    } else {
      continue;
    }
    // \d{1,6}\b: the whole run of digits, when it has at most six and no word character after it.
    const size_t d = DigitsEnd(s, q, to);
    if (d > q && d - q <= 6 && WordEndsAt(s, d, to)) return Span{q, d};
  }
  return std::nullopt;
}

std::optional<Span> FindRankDevice(const std::string& lower, size_t from, size_t to) {
  const std::string& s = lower;
  for (size_t p = from; p < to; ++p) {
    const char c = s[p];
    if ((c != 'r' && c != 'd' && c != 'l' && c != 'g') || (p > 0 && IsWord(s[p - 1]))) continue;  // \b before
    size_t q = p;
    for (std::string_view word : {"global_rank", "local_rank", "rank", "device"}) {
      if (At(s, p, to, word)) {
        q = p + word.size();
        break;
      }
    }
    if (q == p) continue;
    q = SpacesEnd(s, q, to);
    // \s*[:=]\s*(\d{1,6})\b(?!\.\d): a key and its value ("rank=1", "local_rank: 1"), not a figure
    // ("on device: 1.5 GB").
    if (q < to && (s[q] == ':' || s[q] == '=')) {
      const size_t b = SpacesEnd(s, q + 1, to);
      const size_t d = DigitsEnd(s, b, to);
      const bool fraction = d + 1 < to && s[d] == '.' && IsDigit(s[d + 1]);
      if (d > b && d - b <= 6 && WordEndsAt(s, d, to) && !fraction) return Span{b, d};
      continue;
    }
    // \s*(\d{1,6}) then \s*(?:/|of)\s*\d{1,6}\b ("rank 1 of 8", "[rank 1/8]") or \s*[|:\]] ("rank 1 |",
    // "[rank1]:"); fewer digits leave a digit, which neither \s nor a mark is.
    const size_t d = DigitsEnd(s, q, to);
    if (d == q || d - q > 6) continue;
    const size_t r = SpacesEnd(s, d, to);
    if (r < to && (s[r] == '|' || s[r] == ':' || s[r] == ']')) return Span{q, d};
    size_t m = r;
    if (At(s, r, to, "/")) {
      m = r + 1;
    } else if (At(s, r, to, "of")) {
      m = r + 2;
    }
    if (m == r) continue;
    const size_t b = SpacesEnd(s, m, to);
    const size_t e = DigitsEnd(s, b, to);
    if (e > b && e - b <= 6 && WordEndsAt(s, e, to)) return Span{q, d};
  }
  return std::nullopt;
}

std::optional<Span> FindTableTitleDevice(const std::string& lower) {
  constexpr std::string_view kTitle = "memory summary, device id ";
  for (size_t p = lower.find(kTitle); p != std::string::npos; p = lower.find(kTitle, p + 1)) {
    const size_t q = p + kTitle.size();
    const size_t d = DigitsEnd(lower, q, lower.size());
    if (d > q && d - q <= 6 && WordEndsAt(lower, d, lower.size())) return Span{q, d};
  }
  return std::nullopt;
}

std::optional<KeyMatch> FindKey(const std::string& lower, size_t from) {
  for (size_t p = from; p < lower.size(); ++p) {
    const char c = lower[p];
    if (c != 'a' && c != 'r' && c != 'm') continue;
    if (std::optional<KeyMatch> m = KeyAt(lower, p)) return m;
  }
  return std::nullopt;
}

// The lazy part stops at the first digit after "memory": it takes no digit, and the number starts
// with one.
std::optional<DriverMatch> FindDriverFigure(const std::string& lower, size_t from) {
  const std::string& s = lower;
  const size_t to = s.size();
  // A first look for a digit after "memory" that found none before this place: a later "memory"
  // before it finds none either (without this, each of thousands was a scan to the line's end).
  size_t no_digit_before = 0;
  for (size_t p = from; p < to; ++p) {
    if (!At(s, p, to, "memory") || !Boundary(s, p, to) || !WordEndsAt(s, p + 6, to)) continue;
    if (p + 6 < no_digit_before) continue;
    // The lazy part passes over non-digits and percentages ([0-9][0-9.]*\s*%); a number followed
    // by its [0-9.]* run, spaces and '%' is one, whichever digits the number took.
    size_t d = p + 6;
    for (;;) {
      const size_t start = d;
      d = RunEnd(s, d, to, [](char c) { return !IsDigit(c) && c != '\n'; });
      if (d == to || !IsDigit(s[d])) {
        if (start == p + 6) no_digit_before = d;
        break;
      }
      const size_t r = SpacesEnd(s, RunEnd(s, d, to, [](char c) { return IsDigit(c) || c == '.'; }), to);
      if (r == to || s[r] != '%') break;
      d = r + 1;
    }
    if (d == to || !IsDigit(s[d])) continue;
    const size_t e = DigitsEnd(s, d, to);
    if (e < to && s[e] == '.') {
      const size_t f = DigitsEnd(s, e + 1, to);
      if (f > e + 1) {
        if (const std::optional<Tail> t = TailAt(s, f, to, DriverUnitEnd))
          return DriverMatch{{p, t->end}, {d, f}, t->unit};
      }
    }
    if (const std::optional<Tail> t = TailAt(s, e, to, DriverUnitEnd)) return DriverMatch{{p, t->end}, {d, e}, t->unit};
  }
  return std::nullopt;
}

// Each part is read as far as it goes: a shorter number leaves a digit or a '.', which no later
// part starts with.
std::optional<KeyPairMatch> FindKeyPair(const std::string& lower, size_t from) {
  const std::string& s = lower;
  const size_t to = s.size();
  auto key_at = [&](size_t q, std::string_view* key) {
    for (std::string_view metric : {"allocated", "alloc", "reserved"}) {
      if (At(s, q, to, metric)) {
        *key = std::string_view(s).substr(q, metric.size());
        return q + metric.size();
      }
    }
    return q;
  };
  // ([0-9]+(?:\.[0-9]+)?) at `q`: its end, or `q`.
  auto number_end = [&](size_t q) {
    const size_t d = DigitsEnd(s, q, to);
    if (d > q && d < to && s[d] == '.' && DigitsEnd(s, d + 1, to) > d + 1) return DigitsEnd(s, d + 1, to);
    return d;
  };
  for (size_t p = from; p < to; ++p) {
    if ((s[p] != 'a' && s[p] != 'r') || (p > 0 && IsWord(s[p - 1]))) continue;
    KeyPairMatch m;
    size_t q = key_at(p, &m.first);
    if (q == p) continue;
    q = SpacesEnd(s, q, to);
    if (q >= to || s[q] != '/') continue;
    q = SpacesEnd(s, q + 1, to);
    const size_t k = key_at(q, &m.second);
    if (k == q) continue;
    q = RunEnd(s, k, to,
               [](char c) { return IsSpace(c) || c == ':' || c == '=' || c == '|' || c == '\'' || c == '"'; });
    const size_t n1 = number_end(q);
    if (n1 == q) continue;
    m.first_number = Span{q, n1};
    q = SpacesEnd(s, n1, to);
    if (q >= to || s[q] != '/') continue;
    q = SpacesEnd(s, q + 1, to);
    // The second number with its fraction, else without it (then \b holds before the '.').
    size_t n2 = number_end(q);
    std::optional<Tail> t = n2 > q ? TailAt(s, n2, to, ValueUnitEnd) : std::nullopt;
    if (!t && n2 > q && DigitsEnd(s, q, to) < n2) {
      n2 = DigitsEnd(s, q, to);
      t = TailAt(s, n2, to, ValueUnitEnd);
    }
    if (!t) continue;
    m.second_number = Span{q, n2};
    m.unit = t->unit;
    m.whole = Span{p, t->end};
    return m;
  }
  return std::nullopt;
}

std::optional<Span> RatioUnitAt(const std::string& lower, size_t at) {
  const std::string& s = lower;
  const size_t to = s.size();
  size_t q = SpacesEnd(s, at, to);
  if (q >= to || s[q] != '/') return std::nullopt;
  q = SpacesEnd(s, q + 1, to);
  if (q >= to || !IsDigit(s[q])) return std::nullopt;
  q = RunEnd(s, q, to, [](char c) { return IsDigit(c) || c == ','; });
  if (q < to && s[q] == '.' && DigitsEnd(s, q + 1, to) > q + 1) q = DigitsEnd(s, q + 1, to);
  q = SpacesEnd(s, q, to);
  const size_t u = ValueUnitEnd(s, q, to);
  if (u == q) return std::nullopt;
  return Span{q, u};
}

}  // namespace vw::trace::framework_match
