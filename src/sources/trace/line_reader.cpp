#include "sources/trace/line_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace vw::trace {
namespace {

constexpr size_t kBufferSize = LineReader::kMaxLine + 2 * LineReader::kChunk + 16;

// Appends the UTF-8 form of code point `cp` at `out`; returns the bytes written.
size_t PutUtf8(uint32_t cp, char* out) {
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xC0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (cp >> 18));
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

constexpr uint32_t kReplacement = 0xFFFD;

}  // namespace

uint64_t CompleteLinesLength(int fd, uint64_t size) {
  constexpr uint64_t kLook = 64 * 1024;
  if (size == 0) return 0;
  const uint64_t from = size > kLook ? size - kLook : 0;
  std::string tail(static_cast<size_t>(size - from), '\0');
  size_t got = 0;
  while (got < tail.size()) {
    const ssize_t r = ::pread(fd, tail.data() + got, tail.size() - got, static_cast<off_t>(from + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return size;  // cannot look: read it all, as before
    got += static_cast<size_t>(r);
  }
  if (tail.back() == '\n') return size;
  const size_t nl = tail.rfind('\n');
  if (nl == std::string::npos) return size;
  if (tail.find('\0', nl) != std::string::npos) return size;  // UTF-16: a NUL follows every '\n'
  return from + nl + 1;
}

std::string UnterminatedTailNote(std::string_view display, uint64_t bytes) {
  if (bytes == 0) return {};
  return fmt::format("{}: its last line has no line end ({} bytes; is the file still being written?): left out",
                     display, bytes);
}

Result<std::unique_ptr<LineReader>> LineReader::Open(const std::string& path, Mode mode) {
  std::unique_ptr<LineReader> r(new LineReader());
  if (path == "-") {
    r->fd_ = 0;
    r->hold_tail_ = true;
  } else {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return FromErrno(errno, "open " + path);
    r->fd_ = fd;
    r->own_fd_ = true;
    struct stat st {};
    if (::fstat(fd, &st) == 0) {
      if (S_ISDIR(st.st_mode)) return Status::InvalidArgument(path + " is a directory, not a trace file");
      // A pipe, and a file whose size reads as 0 (procfs, some FUSE mounts: read to its end, as
      // a pipe is), leave out a last line without its end as they are read.
      r->hold_tail_ = !S_ISREG(st.st_mode) || st.st_size == 0;
      if (S_ISREG(st.st_mode) && st.st_size > 0) {
        const auto size = static_cast<uint64_t>(st.st_size);
        const uint64_t complete = CompleteLinesLength(fd, size);
        r->raw_total_ = complete;
        r->read_limit_ = complete;
        r->tail_left_out_ = size - complete;
        if (mode == Mode::kMap && complete > 0 && r->TryMap(static_cast<size_t>(complete))) return r;
      }
    }
  }
  r->buf_.reset(new char[kBufferSize]);
  return r;
}

bool LineReader::TryMap(size_t size) {
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd_, 0);
  if (p == MAP_FAILED) return false;
  const auto* b = static_cast<const unsigned char*>(p);
  // UTF-16 (with a BOM, or BOM-less text) needs decoding: leave it to the read() path.
  const bool utf16 = (size >= 2 && ((b[0] == 0xFF && b[1] == 0xFE) || (b[0] == 0xFE && b[1] == 0xFF))) ||
                     (size >= 4 && b[0] != 0 && b[1] == 0 && b[2] != 0 && b[3] == 0) ||
                     (size >= 4 && b[0] == 0 && b[1] != 0 && b[2] == 0 && b[3] != 0);
  if (utf16) {
    ::munmap(p, size);
    return false;
  }
  ::madvise(p, size, MADV_SEQUENTIAL);
  map_ = static_cast<const char*>(p);
  map_size_ = size;
  encoding_known_ = true;
  encoding_ = TextEncoding::kUtf8;
  if (size >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF) map_pos_ = 3;
  raw_read_ = map_pos_;
  eof_ = true;  // everything is "read": Peek() sees the whole rest
  return true;
}

void LineReader::ReleaseBehind() {
  // Gives back the pages already consumed, so a long file does not stay resident.
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t upto = map_pos_ / page * page;
  if (upto > map_released_) {
    ::madvise(const_cast<char*>(map_) + map_released_, upto - map_released_, MADV_DONTNEED);
    map_released_ = upto;
  }
}

std::unique_ptr<LineReader> LineReader::FromString(std::string text) {
  std::unique_ptr<LineReader> r(new LineReader());
  r->raw_total_ = text.size();
  r->source_ = std::move(text);
  r->from_string_ = true;
  r->buf_.reset(new char[kBufferSize]);
  return r;
}

std::unique_ptr<LineReader> LineReader::OverText(std::string_view text) {
  std::unique_ptr<LineReader> r(new LineReader());
  r->map_ = text.data();
  r->map_size_ = text.size();
  r->borrowed_ = true;
  r->encoding_known_ = true;
  r->encoding_ = TextEncoding::kUtf8;
  r->raw_total_ = text.size();
  r->eof_ = true;
  return r;
}

Result<std::unique_ptr<LineReader>> LineReader::FromFd(int fd, uint64_t offset, size_t lines_before, uint64_t total) {
  std::unique_ptr<LineReader> r(new LineReader());
  r->fd_ = fd;
  r->own_fd_ = true;
  if (::lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0) return FromErrno(errno, "seek trace");
  r->raw_read_ = offset;
  r->raw_total_ = total;
  r->read_limit_ = total;
  r->line_no_ = lines_before;
  if (offset > 0) {
    r->encoding_known_ = true;
    r->encoding_ = TextEncoding::kUtf8;
  }
  r->buf_.reset(new char[kBufferSize]);
  return r;
}

LineReader::~LineReader() {
  if (map_ != nullptr && !borrowed_) ::munmap(const_cast<char*>(map_), map_size_);
  if (own_fd_ && fd_ >= 0) ::close(fd_);
}

void LineReader::Compact() {
  if (begin_ == 0) return;
  std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
}

void LineReader::DetectEncoding() {
  // Called with the first raw bytes at raw_[0..raw_carry_).
  const unsigned char* p = raw_.get();
  const size_t n = raw_carry_;
  encoding_known_ = true;
  if (n >= 2 && p[0] == 0xFF && p[1] == 0xFE) {
    encoding_ = TextEncoding::kUtf16Le;
    std::memmove(raw_.get(), raw_.get() + 2, n - 2);
    raw_carry_ = n - 2;
  } else if (n >= 2 && p[0] == 0xFE && p[1] == 0xFF) {
    encoding_ = TextEncoding::kUtf16Be;
    std::memmove(raw_.get(), raw_.get() + 2, n - 2);
    raw_carry_ = n - 2;
  } else if (n >= 4 && p[0] != 0 && p[1] == 0 && p[2] != 0 && p[3] == 0) {
    encoding_ = TextEncoding::kUtf16Le;  // BOM-less UTF-16LE text ("t\0i\0...")
  } else if (n >= 4 && p[0] == 0 && p[1] != 0 && p[2] == 0 && p[3] != 0) {
    encoding_ = TextEncoding::kUtf16Be;  // BOM-less UTF-16BE text ("\0t\0i...")
  } else if (n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) {
    encoding_ = TextEncoding::kUtf8;
    std::memmove(raw_.get(), raw_.get() + 3, n - 3);
    raw_carry_ = n - 3;
  } else {
    encoding_ = TextEncoding::kUtf8;
  }
}

void LineReader::DecodeUtf16(const unsigned char* p, size_t n) {
  const bool le = encoding_ == TextEncoding::kUtf16Le;
  char* out = buf_.get() + end_;
  size_t i = 0;
  auto unit = [&](size_t at) -> uint32_t {
    return le ? static_cast<uint32_t>(p[at] | (p[at + 1] << 8)) : static_cast<uint32_t>((p[at] << 8) | p[at + 1]);
  };
  while (i + 1 < n) {
    uint32_t u = unit(i);
    if (u >= 0xD800 && u <= 0xDBFF) {
      if (i + 3 >= n) {
        if (!eof_) break;  // the low half is in the next chunk
        out += PutUtf8(kReplacement, out);
        i += 2;
        continue;
      }
      uint32_t lo = unit(i + 2);
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        out += PutUtf8(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00), out);
        i += 4;
      } else {
        out += PutUtf8(kReplacement, out);
        i += 2;
      }
      continue;
    }
    if (u >= 0xDC00 && u <= 0xDFFF) u = kReplacement;
    out += PutUtf8(u, out);
    i += 2;
  }
  end_ = static_cast<size_t>(out - buf_.get());
  // Keep what could not be decoded yet (an odd byte, a high surrogate waiting for its pair).
  size_t rest = eof_ ? 0 : n - i;
  if (rest > 0) std::memmove(raw_.get(), p + i, rest);
  raw_carry_ = rest;
}

bool LineReader::Refill() {
  // Room: Compact() ran and fewer than kMaxLine bytes are pending, so 2*kChunk bytes are free.
  const bool direct = encoding_known_ && encoding_ == TextEncoding::kUtf8;
  unsigned char* dst;
  size_t room;
  if (direct) {
    dst = reinterpret_cast<unsigned char*>(buf_.get() + end_);
    room = kChunk;
  } else {
    if (!raw_) raw_.reset(new unsigned char[kChunk + 8]);
    dst = raw_.get() + raw_carry_;
    room = kChunk;
  }
  size_t got = 0;
  if (from_string_) {
    got = std::min(room, source_.size() - source_pos_);
    std::memcpy(dst, source_.data() + source_pos_, got);
    source_pos_ += got;
  } else {
    if (read_limit_ != UINT64_MAX) room = static_cast<size_t>(std::min<uint64_t>(room, read_limit_ - raw_read_));
    for (;;) {
      ssize_t r = room == 0 ? 0 : ::read(fd_, dst, room);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        status_ = FromErrno(errno, "read trace");
        return false;
      }
      got = static_cast<size_t>(r);
      break;
    }
  }
  raw_read_ += got;
  if (got == 0) eof_ = true;
  if (direct) {
    end_ += got;
    return true;
  }
  raw_carry_ += got;
  if (!encoding_known_) {
    // Wait for a few bytes before deciding (a pipe may deliver one byte at a time).
    if (raw_carry_ < 4 && !eof_) return true;
    DetectEncoding();
    if (encoding_ == TextEncoding::kUtf8) {
      std::memcpy(buf_.get() + end_, raw_.get(), raw_carry_);
      end_ += raw_carry_;
      raw_carry_ = 0;
      return true;
    }
  }
  DecodeUtf16(raw_.get(), raw_carry_);
  return true;
}

bool LineReader::NextRead(std::string_view* line) {
  overlong_ = false;
  for (;;) {
    char* start = buf_.get() + begin_;
    const size_t avail = end_ - begin_;
    auto* nl = static_cast<char*>(avail ? std::memchr(start, '\n', avail) : nullptr);
    if (skipping_rest_) {
      if (nl != nullptr) {
        begin_ += static_cast<size_t>(nl - start) + 1;
        skipping_rest_ = false;
        continue;
      }
      begin_ = end_;
      if (eof_) return false;
      Compact();
      if (!Refill()) return false;
      continue;
    }
    size_t len;
    if (nl != nullptr) {
      len = static_cast<size_t>(nl - start);
      begin_ += len + 1;
      if (len > kMaxLine) {
        len = kMaxLine;
        overlong_ = true;
      }
    } else if (avail >= kMaxLine) {
      len = kMaxLine;
      begin_ += len;
      overlong_ = true;
      skipping_rest_ = true;
    } else if (eof_) {
      if (avail == 0) return false;
      if (hold_tail_ && line_no_ > 0 && encoding_ == TextEncoding::kUtf8) {
        tail_left_out_ = avail;  // a pipe's last line without its end, as a file's (Open)
        begin_ = end_;
        return false;
      }
      len = avail;
      begin_ = end_;
    } else {
      Compact();
      if (!Refill()) return false;
      continue;
    }
    if (len > 0 && start[len - 1] == '\r') --len;
    *line = std::string_view(start, len);
    ++line_no_;
    return true;
  }
}

std::string_view LineReader::Peek(size_t max_bytes) {
  if (max_bytes > kChunk) max_bytes = kChunk;
  if (map_ != nullptr) {
    // Same answer as the read() path: at_eof_after_peek() is true when the rest fits.
    const size_t rest = map_size_ - map_pos_;
    eof_ = rest < max_bytes;
    return std::string_view(map_ + map_pos_, std::min(max_bytes, rest));
  }
  while (end_ - begin_ < max_bytes && !eof_) {
    Compact();
    if (!Refill()) break;
  }
  return std::string_view(buf_.get() + begin_, std::min(max_bytes, end_ - begin_));
}

}  // namespace vw::trace
