#include "sources/trace/line_reader.h"

#include <gtest/gtest.h>

#include <string>
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

TEST(LineReader, MissingFileIsNotFound) {
  auto r = LineReader::Open("/nonexistent/trace.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace vw::trace
