// LineReader: reads a text file (or standard input) line by line in fixed-size chunks, whatever
// its encoding and line ends, so trace parsers see plain UTF-8 lines.
//
// - UTF-8 with or without a byte-order mark; UTF-16LE/BE with a BOM (PowerShell's `>` writes
//   UTF-16LE), and UTF-16LE or BE without a BOM when the first bytes look like it, are converted to
//   UTF-8.
// - "\n" and "\r\n" line ends; the terminator is never part of a line.
// - Memory stays bounded: at most one chunk plus kMaxLine bytes are held. A longer line is cut at
//   kMaxLine bytes and reported with overlong() == true (the rest of it is discarded).
// - Files are read with read() in kChunk pieces. Mode::kMap maps a regular UTF-8 file instead and
//   hands its lines out in place (pages behind the reader are released every kReleaseStep bytes).
//   Mapping is not the default: a file truncated while it is read (log rotation with copytruncate)
//   raises SIGBUS on a mapping, where read() just ends; mapping saves only the kernel's copy.
//   Both paths give the same lines.
// - A regular file whose last line has no line end (a file still being written, as by
//   `nvidia-smi -l > gpu.csv`, ends mid-line) is read up to its last line end: the cut line is
//   left out (unterminated_tail_bytes() says how much), rather than read as a value cut short.
//   So is that of standard input or a pipe in UTF-8. Input of a single line without its end is
//   read, and so is UTF-16 text.
//
// Lines returned by Next() point into the internal buffer and are valid until the next call.
// Not thread-safe: one reader per thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace vw::trace {

enum class TextEncoding { kUtf8, kUtf16Le, kUtf16Be };

// How many bytes of the regular file `fd` (of `size` bytes) end with its last line end: `size`
// when the file ends with '\n', holds no '\n' in its last 64 KiB, or has a NUL after its last
// '\n' (UTF-16 text); else the bytes up to and including that '\n'.
uint64_t CompleteLinesLength(int fd, uint64_t size);

// What to tell a person when `bytes` of a last line without its end were left out of `display`
// ("gpu.csv: its last line has no line end (41 bytes; is the file still being written?): left
// out"); empty when `bytes` is 0.
std::string UnterminatedTailNote(std::string_view display, uint64_t bytes);

class LineReader {
 public:
  static constexpr size_t kChunk = 1 << 20;        // bytes read from the file per call
  static constexpr size_t kMaxLine = 1 << 20;      // longest line kept (bytes of UTF-8)
  static constexpr size_t kReleaseStep = 4 << 20;  // mapped bytes behind the reader released at a time

  enum class Mode {
    kRead,  // read() (the default)
    kMap,   // map regular UTF-8 files, read() the rest (tests compare the two paths)
  };

  // Opens `path`; "-" reads standard input.
  static Result<std::unique_ptr<LineReader>> Open(const std::string& path, Mode mode = Mode::kRead);
  // Reads from a string (tests).
  static std::unique_ptr<LineReader> FromString(std::string text);
  // Hands out the lines of `text` in place, like a mapped file; `text` is UTF-8 without a byte-order
  // mark and must outlive the reader. line_number() counts from 1 at its first line.
  static std::unique_ptr<LineReader> OverText(std::string_view text);
  // Continues an open file `fd` (owned from now on) at byte `offset`, which must be the start of a
  // line; line_number() goes on from `lines_before`. At offset 0 the encoding is detected as by
  // Open(); elsewhere the file is taken to be UTF-8. `total` is the file size for bytes_total().
  static Result<std::unique_ptr<LineReader>> FromFd(int fd, uint64_t offset, size_t lines_before, uint64_t total);

  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line (without its terminator); false at the end of input or on an I/O error (see
  // status()). line_number() is then the 1-based number of the returned line.
  bool Next(std::string_view* line) {
    if (map_ != nullptr) return NextMapped(line);
    return NextRead(line);
  }
  // True when the line last returned by Next() was longer than kMaxLine and was cut.
  bool overlong() const { return overlong_; }
  size_t line_number() const { return line_no_; }
  const Status& status() const { return status_; }

  // Up to `max_bytes` (<= kChunk) of the decoded text ahead, without consuming it (format detection).
  std::string_view Peek(size_t max_bytes);
  // True when the whole remaining input fits in what Peek() returned.
  bool at_eof_after_peek() const { return eof_; }

  TextEncoding encoding() const { return encoding_; }
  bool mapped() const { return map_ != nullptr; }

  // Mapped input only (mapped() true): the text not handed out yet, and consuming `bytes` of it
  // that hold `lines` whole lines (each ended by its '\n', the last possibly by the text's end),
  // as that many Next() calls would. A parser that finds the lines itself uses these; a line it
  // leaves alone is then the next one Next() returns.
  std::string_view MappedRest() const { return std::string_view(map_ + map_pos_, map_size_ - map_pos_); }
  void SkipMapped(size_t bytes, size_t lines) {
    overlong_ = false;
    map_pos_ += bytes;
    raw_read_ = map_pos_;
    line_no_ += lines;
    if (!borrowed_ && map_pos_ - map_released_ >= kReleaseStep) ReleaseBehind();
  }
  uint64_t bytes_read() const { return raw_read_; }
  uint64_t bytes_total() const { return raw_total_; }
  // Bytes of a last line without a line end, left out by Open()'s reader; 0 when none. For a pipe,
  // known once Next() has returned false.
  uint64_t unterminated_tail_bytes() const { return tail_left_out_; }

 private:
  LineReader() = default;
  // Appends decoded input to buf_; sets eof_ at the end. False on an I/O error.
  bool Refill();
  void DetectEncoding();
  void DecodeUtf16(const unsigned char* p, size_t n);
  void Compact();
  // Maps the open regular file of `size` bytes when it is UTF-8; false leaves the read() path.
  bool TryMap(size_t size);
  // Inline: a block of a file is read as a mapped text, one call per line from the parser.
  bool NextMapped(std::string_view* line) {
    overlong_ = false;
    if (map_pos_ >= map_size_) return false;
    if (!borrowed_ && map_pos_ - map_released_ >= kReleaseStep) ReleaseBehind();
    const char* start = map_ + map_pos_;
    const size_t avail = map_size_ - map_pos_;
    const auto* nl = static_cast<const char*>(std::memchr(start, '\n', avail));
    size_t len = nl != nullptr ? static_cast<size_t>(nl - start) : avail;
    map_pos_ += nl != nullptr ? len + 1 : len;
    raw_read_ = map_pos_;
    if (len > kMaxLine) {
      len = kMaxLine;
      overlong_ = true;
    }
    if (len > 0 && start[len - 1] == '\r') --len;
    *line = std::string_view(start, len);
    ++line_no_;
    return true;
  }
  bool NextRead(std::string_view* line);
  void ReleaseBehind();

  const char* map_ = nullptr;  // the whole file when mapped (then buf_ is unused)
  bool borrowed_ = false;      // map_ is the caller's text (OverText): never unmapped or released
  size_t map_size_ = 0;
  size_t map_pos_ = 0;       // first unconsumed byte of the mapping
  size_t map_released_ = 0;  // bytes at the front already given back (page aligned)

  int fd_ = -1;
  bool own_fd_ = false;
  std::string source_;  // FromString input
  size_t source_pos_ = 0;
  bool from_string_ = false;

  std::unique_ptr<char[]> buf_;           // decoded UTF-8, kBufferSize bytes (uninitialised)
  size_t begin_ = 0;                      // first unconsumed byte
  size_t end_ = 0;                        // one past the last decoded byte
  std::unique_ptr<unsigned char[]> raw_;  // raw UTF-16 input, kChunk + 8 bytes, allocated on first use
  size_t raw_carry_ = 0;                  // undecoded bytes kept at the front of raw_ (odd byte, lone surrogate)
  bool encoding_known_ = false;
  TextEncoding encoding_ = TextEncoding::kUtf8;
  bool eof_ = false;
  bool skipping_rest_ = false;  // discarding the tail of an overlong line
  bool overlong_ = false;
  size_t line_no_ = 0;
  uint64_t raw_read_ = 0;
  uint64_t raw_total_ = 0;
  uint64_t read_limit_ = UINT64_MAX;  // read() no further than this file offset
  uint64_t tail_left_out_ = 0;
  bool hold_tail_ = false;  // a pipe or standard input: leave out a last line without its end
  Status status_;
};

}  // namespace vw::trace
