#include "sources/trace/recording_header.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace vw::trace {
namespace {

std::string WriteTemp(const std::string& text) {
  char tmpl[] = "/tmp/vw_rechdr_XXXXXX";
  int fd = mkstemp(tmpl);
  close(fd);
  std::ofstream(tmpl) << text;
  return tmpl;
}

TEST(RecordingHeader, ReadsTheHostAndStartOfTheWriterHeader) {
  RecordingHeader h;
  h.host = "gpu-node-7";
  h.source = "nvml";
  h.started = 1764189075;
  h.interval_s = 1;
  const std::string path = WriteTemp(RecordingHeaderLine(h) + "\n{\"t\":1}\n");
  auto got = ReadRecordingHeader(path);
  std::remove(path.c_str());
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->host, "gpu-node-7");
  EXPECT_EQ((*got)->source, "nvml");
  EXPECT_DOUBLE_EQ((*got)->started, 1764189075);
  EXPECT_EQ((*got)->interval_s, 1.0);
}

TEST(RecordingHeader, OtherFormatsHaveNoHeaderAndAMissingFileIsAnError) {
  for (const char* text : {"timestamp, index, memory.used [MiB]\n", "{\"schema\":\"other/1\",\"host\":\"x\"}\n", ""}) {
    const std::string path = WriteTemp(text);
    auto got = ReadRecordingHeader(path);
    std::remove(path.c_str());
    ASSERT_TRUE(got.ok()) << text;
    EXPECT_FALSE(got->has_value()) << text;
  }
  auto missing = ReadRecordingHeader("/nonexistent-dir/rec.jsonl");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent-dir/rec.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace vw::trace
