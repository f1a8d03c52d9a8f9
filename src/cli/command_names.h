// Top-level command words: what `vramwatch WORD` does when WORD is not a subcommand. A mistyped
// or British spelling ("analyse", "chek") gets "unknown command 'analyse' (did you mean
// analyze?)" instead of CLI11's "A subcommand is required", and `--version` means `version`.
// Pure functions; no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vw::cli {

// Edit distance (insertions, deletions, substitutions and swaps of neighbours) between a and b.
size_t CommandDistance(std::string_view a, std::string_view b);

// The closest of `names` to `word` when it is close enough to be a typo (distance at most 2, and
// less than half the word), or a name that `word` begins or that begins `word`; else nothing.
std::optional<std::string> SuggestCommand(std::string_view word, const std::vector<std::string>& names);

// "unknown command 'analyse' (did you mean analyze?)", or "unknown command 'frob'; commands: a, b".
std::string UnknownCommandMessage(std::string_view word, const std::vector<std::string>& names);

// A CLI11 parse error in our words: "--nvml-lib: At Most 1 required but received 2" (a flag given
// twice) becomes "--nvml-lib: given 2 times; give it once". Any other message is kept.
std::string ParseErrorMessage(std::string_view what);

}  // namespace vw::cli
