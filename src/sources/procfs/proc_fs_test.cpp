#include "sources/procfs/proc_fs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sources/procfs/proc_fixture.h"

namespace vw::procfs {
namespace {

namespace fs = std::filesystem;

class CheckProcRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("vw-procroot-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(CheckProcRootTest, MissingPathIsNotFoundNamingIt) {
  Status s = CheckProcRoot((root_ / "host" / "proc").string());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find((root_ / "host" / "proc").string()), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("does not exist"), std::string::npos) << s.message();
}

TEST_F(CheckProcRootTest, RegularFileIsNotADirectory) {
  fs::create_directories(root_);
  std::ofstream(root_ / "proc") << "1\n";
  Status s = CheckProcRoot((root_ / "proc").string());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("not a directory"), std::string::npos) << s.message();
}

TEST_F(CheckProcRootTest, EmptyDirectoryOrOneWithoutProcessEntriesIsRejected) {
  fs::create_directories(root_);
  Status empty = CheckProcRoot(root_.string());
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(empty.message().find("no process directories"), std::string::npos) << empty.message();
  // Files that are not processes (an unmounted mount point with leftovers) do not count.
  std::ofstream(root_ / "passwd") << "root:x:0:0::/root:/bin/sh\n";
  fs::create_directories(root_ / "sys");
  fs::create_directories(root_ / "12a");
  EXPECT_FALSE(CheckProcRoot(root_.string()).ok());
}

TEST_F(CheckProcRootTest, FixtureAndLiveProcAreAccepted) {
  ASSERT_TRUE(WriteProcFixture(root_.string(), {}).ok());  // only PID 1 and passwd
  EXPECT_TRUE(CheckProcRoot(root_.string()).ok());
  EXPECT_TRUE(CheckProcRoot("/proc").ok());
  fs::remove_all(root_);
  fs::create_directories(root_ / "self");
  EXPECT_TRUE(CheckProcRoot(root_.string()).ok());
}

// stat() follows the link, as /proc/PID/fd/N does to the open file: /dev/null is character device
// (1, 3); a link to nothing fails, and a regular file is no device.
TEST_F(CheckProcRootTest, StatGivesTheDeviceNumberOfALinksTarget) {
  fs::create_directories(root_ / "10" / "fd");
  fs::create_symlink("/dev/null", root_ / "10" / "fd" / "3");
  fs::create_symlink("/dev/nvidia-nonexistent", root_ / "10" / "fd" / "4");
  std::ofstream(root_ / "10" / "stat") << "10 (x) S\n";
  DirProcFs dir(root_.string());
  auto null = dir.Stat("10/fd/3");
  ASSERT_TRUE(null.ok()) << null.status().ToString();
  EXPECT_TRUE(null->char_device);
  EXPECT_EQ(null->major, 1u);
  EXPECT_EQ(null->minor, 3u);
  EXPECT_EQ(dir.Stat("10/fd/4").status().code(), StatusCode::kNotFound);
  auto file = dir.Stat("10/stat");
  ASSERT_TRUE(file.ok());
  EXPECT_FALSE(file->char_device);
}

}  // namespace
}  // namespace vw::procfs
