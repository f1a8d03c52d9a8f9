#include "core/printable.h"

#include <gtest/gtest.h>

namespace vw {
namespace {

TEST(Printable, PlainAndUtf8TextPassUnchanged) {
  EXPECT_EQ(Printable("python3 train.py --lr 3e-4"), "python3 train.py --lr 3e-4");
  EXPECT_EQ(Printable("café 模型 🚀"), "café 模型 🚀");
  EXPECT_EQ(Printable(R"(C:\path)"), R"(C:\path)");
  EXPECT_EQ(Printable(""), "");
}

TEST(Printable, TerminalEscapesAreWrittenOut) {
  // A command line that would retitle the terminal, colour it and overwrite its own row.
  const std::string evil = "\x1b]0;pwned\a\x1b[31mRED\x1b[0m\rOVERWRITE";
  EXPECT_EQ(Printable(evil), R"(\x1b]0;pwned\x07\x1b[31mRED\x1b[0m\rOVERWRITE)");
  EXPECT_EQ(Printable("a\nb\tc"), R"(a\nb\tc)");
  EXPECT_EQ(Printable(std::string("nul\0x", 5)), R"(nul\x00x)");
  EXPECT_EQ(Printable("del\x7f"), R"(del\x7f)");
}

TEST(Printable, C1ControlsAndBrokenUtf8AreWrittenOut) {
  EXPECT_EQ(Printable("\xc2\x9b"
                      "31m"),
            R"(\u009b31m)")
      << "CSI as a UTF-8 code point";
  EXPECT_EQ(Printable("\x9b"
                      "31m"),
            R"(\x9b31m)")
      << "a lone 8-bit CSI byte is no UTF-8";
  EXPECT_EQ(Printable("\xc3"), R"(\xc3)") << "a cut sequence";
  EXPECT_EQ(Printable("\xc0\xaf"), R"(\xc0\xaf)") << "an overlong '/'";
  EXPECT_EQ(Printable("\xed\xa0\x80"), R"(\xed\xa0\x80)") << "a surrogate";
  EXPECT_EQ(Printable("\xf4\x90\x80\x80"), R"(\xf4\x90\x80\x80)") << "above U+10FFFF";
}

TEST(PrintableLines, KeepsTheNewlinesBetweenLines) {
  EXPECT_EQ(PrintableLines("GPU 0 \x1b[2J\nnext\r\n"), "GPU 0 \\x1b[2J\nnext\\r\n");
  EXPECT_EQ(PrintableLines(""), "");
  EXPECT_EQ(PrintableLines("\n\n"), "\n\n");
}

TEST(Utf8Shortened, CutsToTheLimitWithAnEllipsisBetweenCharacters) {
  EXPECT_EQ(Utf8Shortened("python3 train.py", 40), "python3 train.py");
  EXPECT_EQ(Utf8Shortened("abcdefghij", 10), "abcdefghij");
  EXPECT_EQ(Utf8Shortened("abcdefghijk", 10), "abcdefg...");
  // "é" is 2 bytes: at 6 + 1 of them the prefix stops before it, not through it.
  EXPECT_EQ(Utf8Shortened("abcdef\xc3\xa9\xc3\xa9xyz", 10), "abcdef...");
}

TEST(Utf8Prefix, NeverCutsACharacter) {
  EXPECT_EQ(Utf8Prefix("abcdef", 3), "abc");
  EXPECT_EQ(Utf8Prefix("ab", 3), "ab");
  EXPECT_EQ(Utf8Prefix("a模型", 2), "a") << "模 is three bytes";
  EXPECT_EQ(Utf8Prefix("a模型", 4), "a模");
  EXPECT_EQ(Utf8Prefix("模", 0), "");
}

// A progress line names its file in one terminal row: control characters written out, and a
// long name cut at its start, never inside a character.
TEST(PrintableTail, FitsOneRowAndKeepsTheEnd) {
  EXPECT_EQ(PrintableTail("trace.csv", 20), "trace.csv");
  EXPECT_EQ(PrintableTail("x\x1b]0;pwned\a.csv", 40), "x\\x1b]0;pwned\\x07.csv");
  EXPECT_EQ(PrintableTail("/data/runs/node017/gpu-trace.csv", 12), "…u-trace.csv");
  EXPECT_EQ(PrintableTail("模型模型.csv", 6), "…型.csv");
  EXPECT_EQ(PrintableTail("abc", 3), "abc");
  EXPECT_EQ(PrintableTail("abcd", 3), "…cd");
}

}  // namespace
}  // namespace vw
