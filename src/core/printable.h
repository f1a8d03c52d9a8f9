// Text for a terminal or a log line: strings that come from other people (a process's command
// line, a container's or pod's name, a kernel log line, a file) may hold control characters that
// a terminal obeys — ESC sequences that retitle or recolour it, a carriage return that overwrites
// a row, a newline that fakes one. Printable writes each of them as an escape instead, so what is
// shown is what the string holds. The JSON and Prometheus outputs escape by their own rules and do
// not use this.
//
// Pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace vw {

// `text` with every control character written out: \n, \r, \t as those two characters, other C0
// bytes and DEL as \xNN, C1 code points (U+0080–U+009F) as \u0080..\u009f, and each byte that is
// not part of valid UTF-8 as \xNN; a backslash stays as it is. Valid UTF-8 otherwise passes
// unchanged ("café", "模型").
std::string Printable(std::string_view text);

// The same for a report of several lines: each line's control characters written out, the
// newlines between them kept.
std::string PrintableLines(std::string_view text);

// Length (1–4) of the valid UTF-8 sequence starting at text[i], or 0 when none starts there (a
// stray continuation byte, an overlong form, a surrogate, a code point above U+10FFFF, a cut).
// Precondition: i < text.size().
size_t Utf8SequenceLength(std::string_view text, size_t i);

// The longest prefix of `text` of at most `max_bytes` bytes that ends on a UTF-8 character
// boundary (never half a character).
std::string_view Utf8Prefix(std::string_view text, size_t max_bytes);

// `text` when it has at most `max_bytes` bytes, else Utf8Prefix(text, max_bytes - 3) and "...": a
// long command line cut for a table cell or a message. Precondition: max_bytes >= 3.
std::string Utf8Shortened(std::string_view text, size_t max_bytes);

// Printable(text) in at most `max_columns` characters (code points) for one terminal row: when it
// is longer, "…" and its last max_columns - 1 characters (a file's name is at its end). Wide
// characters (CJK) count as one. Precondition: max_columns >= 2.
std::string PrintableTail(std::string_view text, size_t max_columns);

}  // namespace vw
