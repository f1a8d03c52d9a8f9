#include "outputs/json_text.h"

#include <gtest/gtest.h>

#include <string>

namespace vw::outputs {
namespace {

TEST(JsonText, WritesBytesThatAreNotUtf8AsReplacementCharacters) {
  // A command line from /proc may hold any bytes; 0xff is never valid UTF-8.
  const nlohmann::json j = {{"command", std::string("python\xff train.py")}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // what the default dump does
  const std::string one_line = JsonText(j);
  EXPECT_EQ(one_line, "{\"command\":\"python\xef\xbf\xbd train.py\"}");
  EXPECT_EQ(nlohmann::json::parse(one_line)["command"], "python\xef\xbf\xbd train.py");
  EXPECT_EQ(JsonText(j, 2), "{\n  \"command\": \"python\xef\xbf\xbd train.py\"\n}");
}

TEST(JsonText, LeavesValidUtf8AsItIs) {
  const nlohmann::json j = {{"gpu", "NVIDIA H200 — GPU 0"}, {"used", 12}};
  EXPECT_EQ(JsonText(j), j.dump());
  EXPECT_EQ(JsonText(j, 2), j.dump(2));
}

}  // namespace
}  // namespace vw::outputs
