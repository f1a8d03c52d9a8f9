#include "core/file_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace vw {
namespace {

std::string Scratch(const std::string& name, const std::string& content) {
  std::string path = ::testing::TempDir() + "vw-file-io-" + std::to_string(::getpid()) + "-" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

TEST(ReadWholeFile, ReadsEveryByteOfAFileLargerThanOneRead) {
  std::string content(200000, 'x');
  content[123456] = '\n';
  auto r = ReadWholeFile(Scratch("big", content), 1 << 20);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, content);
}

TEST(ReadWholeFile, MissingFileIsNotFoundNamingWhatAndPath) {
  auto r = ReadWholeFile("/nonexistent/vw-file", 1024, "kernel log ");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("open kernel log /nonexistent/vw-file"), std::string::npos)
      << r.status().message();
}

TEST(ReadWholeFile, FileOverTheLimitIsAnErrorNotACut) {
  auto r = ReadWholeFile(Scratch("over", std::string(3 << 20, 'y')), 1 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_NE(r.status().message().find("larger than 1 MiB"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace vw
