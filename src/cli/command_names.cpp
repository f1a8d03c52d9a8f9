#include "cli/command_names.h"

#include <fmt/format.h>

#include <algorithm>

namespace vw::cli {

size_t CommandDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance over three rows of the usual table.
  std::vector<size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    prev2 = prev;
    prev = cur;
  }
  return prev[b.size()];
}

std::optional<std::string> SuggestCommand(std::string_view word, const std::vector<std::string>& names) {
  if (word.empty()) return std::nullopt;
  std::optional<std::string> best;
  size_t best_d = 0;
  for (const std::string& n : names) {
    const size_t d = CommandDistance(word, n);
    if (d <= 2 && 2 * d < word.size() && (!best || d < best_d)) {
      best = n;
      best_d = d;
    }
  }
  if (best) return best;
  for (const std::string& n : names) {
    if (word.size() >= 3 && (n.rfind(word, 0) == 0 || word.rfind(n, 0) == 0)) return n;
  }
  return std::nullopt;
}

std::string UnknownCommandMessage(std::string_view word, const std::vector<std::string>& names) {
  if (auto s = SuggestCommand(word, names)) return fmt::format("unknown command '{}' (did you mean {}?)", word, *s);
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  return fmt::format("unknown command '{}'; the commands are: {} (see vramwatch --help)", word, list);
}

std::string ParseErrorMessage(std::string_view what) {
  static constexpr std::string_view kTwice = "At Most 1 required but received ";
  const size_t at = what.find(kTwice);
  if (at == std::string_view::npos) return std::string(what);
  const size_t from = at + kTwice.size();
  size_t to = from;
  while (to < what.size() && what[to] >= '0' && what[to] <= '9') ++to;
  return std::string(what.substr(0, at)) + "given " + std::string(what.substr(from, to - from)) +
         " times; give it once" + std::string(what.substr(to));
}

}  // namespace vw::cli
