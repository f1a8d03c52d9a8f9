#include "cli/command_names.h"

#include <gtest/gtest.h>

namespace vw::cli {
namespace {

const std::vector<std::string> kNames = {"check", "analyze", "demo", "watch", "record", "version"};

TEST(ParseErrorMessage, AFlagGivenTwiceIsSaidSo) {
  EXPECT_EQ(ParseErrorMessage("--nvml-lib: At Most 1 required but received 2"),
            "--nvml-lib: given 2 times; give it once");
  EXPECT_EQ(ParseErrorMessage("--nvml-lib: At Most 1 required but received 3\nRun with --help for more information.\n"),
            "--nvml-lib: given 3 times; give it once\nRun with --help for more information.\n");
  EXPECT_EQ(ParseErrorMessage("--interval: bad duration"), "--interval: bad duration");
}

TEST(SuggestCommand, TyposAndSpellingsFindTheCommand) {
  struct Case {
    const char* word;
    const char* want;  // nullptr: no suggestion
  };
  for (const Case& c :
       {Case{"analyse", "analyze"}, Case{"chek", "check"}, Case{"anlayze", "analyze"}, Case{"wach", "watch"},
        Case{"recrod", "record"}, Case{"versoin", "version"}, Case{"analyzer", "analyze"}, Case{"ver", "version"},
        Case{"frobnicate", nullptr}, Case{"x", nullptr}, Case{"", nullptr}}) {
    auto got = SuggestCommand(c.word, kNames);
    if (c.want == nullptr) {
      EXPECT_FALSE(got.has_value()) << c.word << " -> " << got.value_or("");
    } else {
      ASSERT_TRUE(got.has_value()) << c.word;
      EXPECT_EQ(*got, c.want) << c.word;
    }
  }
}

TEST(UnknownCommandMessage, NamesTheWordAndTheSuggestionOrTheList) {
  EXPECT_EQ(UnknownCommandMessage("analyse", kNames), "unknown command 'analyse' (did you mean analyze?)");
  const std::string none = UnknownCommandMessage("frobnicate", kNames);
  EXPECT_NE(none.find("'frobnicate'"), std::string::npos) << none;
  EXPECT_NE(none.find("check, analyze, demo, watch, record, version"), std::string::npos) << none;
}

TEST(CommandDistance, CountsSwapsAsOneEdit) {
  EXPECT_EQ(CommandDistance("analyze", "analyze"), 0u);
  EXPECT_EQ(CommandDistance("analyse", "analyze"), 1u);
  EXPECT_EQ(CommandDistance("anlayze", "analyze"), 1u);
  EXPECT_EQ(CommandDistance("", "demo"), 4u);
}

}  // namespace
}  // namespace vw::cli
