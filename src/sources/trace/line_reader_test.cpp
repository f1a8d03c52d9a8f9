#include "sources/trace/line_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "sources/trace/trace_values.h"

namespace vw::trace {
namespace {

std::vector<std::string> AllLines(std::string text) {
  auto r = LineReader::FromString(std::move(text));
  std::vector<std::string> out;
  std::string_view line;
  while (r->Next(&line)) out.emplace_back(line);
  return out;
}

std::string Utf16(std::u16string_view s, bool le, bool bom) {
  std::string out;
  if (bom) out += le ? "\xFF\xFE" : "\xFE\xFF";
  for (char16_t c : s) {
    char lo = static_cast<char>(c & 0xFF), hi = static_cast<char>(c >> 8);
    out += le ? std::string{lo, hi} : std::string{hi, lo};
  }
  return out;
}

TEST(LineReader, CrlfLfAndLastLineWithoutNewline) {
  EXPECT_EQ(AllLines("a\r\nb\nc"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(AllLines("a\n\n"), (std::vector<std::string>{"a", ""}));
  EXPECT_TRUE(AllLines("").empty());
}

TEST(LineReader, StripsUtf8Bom) {
  EXPECT_EQ(AllLines("\xEF\xBB\xBFx,y\n"), (std::vector<std::string>{"x,y"}));
}

TEST(LineReader, DecodesUtf16LittleAndBigEndian) {
  EXPECT_EQ(AllLines(Utf16(u"ab\r\nc\u00e9\n", true, true)), (std::vector<std::string>{"ab", "c\xC3\xA9"}));
  EXPECT_EQ(AllLines(Utf16(u"ab\ncd", false, true)), (std::vector<std::string>{"ab", "cd"}));
  EXPECT_EQ(AllLines(Utf16(u"timestamp\n", true, false)), (std::vector<std::string>{"timestamp"}))
      << "BOM-less UTF-16LE is recognised by its zero bytes";
  EXPECT_EQ(AllLines(Utf16(u"timestamp\nab\n", false, false)), (std::vector<std::string>{"timestamp", "ab"}))
      << "so is BOM-less UTF-16BE (it was read as UTF-8 and taken for bare CR line ends)";
  // A surrogate pair (U+1F600) and a lone high surrogate at the end.
  EXPECT_EQ(AllLines(Utf16(u"\U0001F600\n\xD800", true, true)),
            (std::vector<std::string>{"\xF0\x9F\x98\x80", "\xEF\xBF\xBD"}));
}

TEST(LineReader, Utf16AcrossChunkBoundaries) {
  std::u16string text;
  for (int i = 0; i < 300000; ++i) text += u"12345\r\n";
  auto lines = AllLines(Utf16(text, true, true));
  ASSERT_EQ(lines.size(), 300000u);
  for (const auto& l : lines) ASSERT_EQ(l, "12345");
}

TEST(LineReader, LinesSpanningChunksAreWhole) {
  std::string text;
  std::vector<std::string> expected;
  for (int i = 0; i < 200000; ++i) {
    expected.push_back(std::to_string(i * 7919));
    text += expected.back() + "\n";
  }
  auto r = LineReader::FromString(text);
  std::string_view line;
  size_t n = 0;
  while (r->Next(&line)) {
    ASSERT_EQ(line, expected[n]) << n;
    ++n;
    EXPECT_EQ(r->line_number(), n);
  }
  EXPECT_EQ(n, expected.size());
  EXPECT_EQ(r->bytes_read(), text.size());
}

TEST(LineReader, OverlongLineIsCutAndFlagged) {
  std::string text = "short\n" + std::string(LineReader::kMaxLine + 10, 'x') + "\nafter\n";
  auto r = LineReader::FromString(text);
  std::string_view line;
  ASSERT_TRUE(r->Next(&line));
  EXPECT_FALSE(r->overlong());
  ASSERT_TRUE(r->Next(&line));
  EXPECT_TRUE(r->overlong());
  EXPECT_EQ(line.size(), LineReader::kMaxLine);
  ASSERT_TRUE(r->Next(&line));
  EXPECT_FALSE(r->overlong());
  EXPECT_EQ(line, "after");
  EXPECT_EQ(r->line_number(), 3u);
}

TEST(LineReader, PeekDoesNotConsume) {
  auto r = LineReader::FromString("a\nb\n");
  EXPECT_EQ(r->Peek(100), "a\nb\n");
  EXPECT_TRUE(r->at_eof_after_peek());
  std::string_view line;
  ASSERT_TRUE(r->Next(&line));
  EXPECT_EQ(line, "a");
}

struct ReadLines {
  std::vector<std::string> lines;
  std::vector<bool> overlong;
  size_t last_line_number = 0;
  uint64_t bytes_read = 0;
  uint64_t tail_left_out = 0;
  std::string peek;
  bool eof_after_peek = false;
  bool mapped = false;
};

ReadLines ReadFile(const std::string& path, LineReader::Mode mode) {
  ReadLines out;
  auto r = LineReader::Open(path, mode);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return out;
  out.mapped = (*r)->mapped();
  out.peek = std::string((*r)->Peek(64 * 1024));
  out.eof_after_peek = (*r)->at_eof_after_peek();
  std::string_view line;
  while ((*r)->Next(&line)) {
    out.lines.emplace_back(line);
    out.overlong.push_back((*r)->overlong());
    EXPECT_EQ((*r)->line_number(), out.lines.size());
  }
  out.last_line_number = (*r)->line_number();
  out.bytes_read = (*r)->bytes_read();
  out.tail_left_out = (*r)->unterminated_tail_bytes();
  return out;
}

std::string WriteTempFile(const std::string& name, const std::string& content) {
  std::string path = ::testing::TempDir() + "vw-lines-" + std::to_string(::getpid()) + "-" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  if (f == nullptr) return path;
  std::fwrite(content.data(), 1, content.size(), f);
  std::fclose(f);
  return path;
}

TEST(LineReader, MappedFileGivesTheSameLinesAsRead) {
  std::string many;
  for (int i = 0; i < 300000; ++i) many += "2026/07/14 08:12:38.100, " + std::to_string(i % 8) + ", 20011 MiB\r\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"crlf", "a\r\nb\nc"},
      {"blank", "a\n\n\nb\n"},
      {"bom", "\xEF\xBB\xBFx,y\n1,2\n"},
      {"bom-only", "\xEF\xBB\xBF"},
      {"overlong", "short\n" + std::string(LineReader::kMaxLine + 10, 'x') + "\r\nafter\n"},
      {"overlong-last", "short\n" + std::string(LineReader::kMaxLine + 3, 'y')},
      {"many", many},  // more than LineReader::kReleaseStep: pages are released behind the reader
      {"utf16", Utf16(u"ab\r\nc\u00e9\n", true, true)},
  };
  for (const auto& [name, text] : cases) {
    const std::string path = WriteTempFile(name, text);
    ReadLines mapped = ReadFile(path, LineReader::Mode::kMap);
    ReadLines read = ReadFile(path, LineReader::Mode::kRead);
    EXPECT_EQ(mapped.mapped, name != "utf16") << name << ": UTF-8 files are mapped, UTF-16 ones are read";
    EXPECT_FALSE(read.mapped) << name;
    EXPECT_EQ(mapped.lines, read.lines) << name;
    EXPECT_EQ(mapped.overlong, read.overlong) << name;
    EXPECT_EQ(mapped.last_line_number, read.last_line_number) << name;
    // "crlf" ends in "c" without a line end: left out on both paths. "overlong-last" ends in a line
    // of over 64 KiB without one: too far back to look, so it is read (and cut) as before.
    const uint64_t tail = name == "crlf" ? 1 : 0;
    EXPECT_EQ(mapped.tail_left_out, tail) << name;
    EXPECT_EQ(read.tail_left_out, tail) << name;
    EXPECT_EQ(mapped.bytes_read, text.size() - tail) << name;
    EXPECT_EQ(read.bytes_read, text.size() - tail) << name;
    EXPECT_EQ(mapped.peek, read.peek) << name;
    EXPECT_EQ(mapped.eof_after_peek, read.eof_after_peek) << name;
    std::remove(path.c_str());
  }
}

// A file still being written ends mid-line ("20000 MiB" cut to "20"): that line is left out, on
// both paths, so no value cut short is read. A file of one line without a line end, UTF-16 text
// (a NUL after its last '\n') and standard input are read whole.
TEST(LineReader, AnUnterminatedLastLineOfAFileIsLeftOut) {
  const std::vector<std::tuple<std::string, std::string, std::vector<std::string>, uint64_t>> cases = {
      {"cut",
       "timestamp, memory.used [MiB]\n2026/07/14 08:12:38, 20000 MiB\n2026/07/14 08:12:39, 20",
       {"timestamp, memory.used [MiB]", "2026/07/14 08:12:38, 20000 MiB"},
       23},
      {"whole", "a\nb\n", {"a", "b"}, 0},
      {"one-line", "12345", {"12345"}, 0},
      {"utf16-no-final-newline", Utf16(u"ab\nc", true, true), {"ab", "c"}, 0},
  };
  for (const auto& [name, text, want, tail] : cases) {
    const std::string path = WriteTempFile(name, text);
    for (auto mode : {LineReader::Mode::kMap, LineReader::Mode::kRead}) {
      ReadLines got = ReadFile(path, mode);
      EXPECT_EQ(got.lines, want) << name;
      EXPECT_EQ(got.tail_left_out, tail) << name;
    }
    std::remove(path.c_str());
  }
}

// procfs files (and some FUSE mounts) read as 0 bytes in size: read to their end, as a pipe is,
// not taken for empty.
TEST(LineReader, AFileWhoseSizeReadsAsZeroIsReadToItsEnd) {
  ReadLines got = ReadFile("/proc/sys/kernel/pid_max", LineReader::Mode::kRead);
  ASSERT_EQ(got.lines.size(), 1u);
  EXPECT_FALSE(got.lines[0].empty());
  EXPECT_EQ(got.tail_left_out, 0u);
}

TEST(LineReader, MissingFileIsNotFound) {
  auto r = LineReader::Open("/nonexistent/trace.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace vw::trace
