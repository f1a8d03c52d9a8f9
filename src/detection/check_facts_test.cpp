#include "detection/check_facts.h"

#include <gtest/gtest.h>

#include <string>

#include "core/printable.h"

namespace vw::detection::check_facts {
namespace {

// Whether `s` is well-formed UTF-8 (no cut character, no stray continuation byte).
bool ValidUtf8(const std::string& s) {
  for (size_t i = 0, n = 0; i < s.size(); i += n) {
    if ((n = Utf8SequenceLength(s, i)) == 0) return false;
  }
  return true;
}

ProcessSnapshot WithCommand(std::string command) {
  ProcessSnapshot p;
  p.pid = 41877;
  p.info.command = std::move(command);
  return p;
}

// A long command line is cut for the findings' words; a cut through a character of several bytes
// (a path in Japanese, an accented model name) left half a character, which a terminal shows as
// garbage and a strict JSON reader refuses.
TEST(CheckFacts, ALongCommandIsCutBetweenCharacters) {
  for (size_t pad = 0; pad < 4; ++pad) {
    const std::string cmd =
        "python3 " + std::string(pad, 'x') + "/データ/訓練/モデル/学習スクリプト/実行.py --epochs 100";
    const std::string short_form = PidAndCommand(WithCommand(cmd));
    EXPECT_TRUE(ValidUtf8(short_form)) << short_form;
    EXPECT_EQ(short_form.rfind("41877 `python3 ", 0), 0u) << short_form;
    EXPECT_NE(short_form.find("...`"), std::string::npos) << short_form;
    EXPECT_LE(short_form.size(), std::string("41877 ``").size() + 40) << short_form;
    const std::string long_cmd = cmd + " " + cmd;
    const std::string who = Who(WithCommand(long_cmd));
    EXPECT_TRUE(ValidUtf8(who)) << who;
    EXPECT_NE(who.find("...`"), std::string::npos) << who;
  }
  EXPECT_EQ(PidAndCommand(WithCommand("python3 train.py")), "41877 `python3 train.py`");
  EXPECT_EQ(PidAndCommand(WithCommand("")), "41877");
}

}  // namespace
}  // namespace vw::detection::check_facts
