#include "cli/proc_flags.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sources/procfs/proc_fixture.h"

namespace vw::cli {
namespace {

namespace fs = std::filesystem;

// A scratch directory that is also the working directory while the test runs (relative paths).
class ProcFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    old_cwd_ = fs::current_path();
    dir_ = fs::temp_directory_path() / ("vw-procflags-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::current_path(dir_);
  }
  void TearDown() override {
    fs::current_path(old_cwd_);
    fs::remove_all(dir_);
  }
  fs::path old_cwd_, dir_;
};

TEST_F(ProcFlagsTest, MissingOrEmptyProcRootIsAUsageErrorNamingThePathAndTheMount) {
  Status missing = CheckProcRootFlag("host/proc");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.message(), "--proc-root host/proc: does not exist (is the host's /proc mounted there?)");
  fs::create_directories("empty");
  Status empty = CheckProcRootFlag("empty");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(empty.message().find("--proc-root empty: holds no process directories"), std::string::npos)
      << empty.message();
  ASSERT_TRUE(procfs::WriteProcFixture("demo/proc", {}).ok());
  EXPECT_TRUE(CheckProcRootFlag("demo/proc").ok());
}

TEST_F(ProcFlagsTest, FixtureRootDefaultsToItsOwnPasswdAsAnAbsolutePath) {
  ASSERT_TRUE(procfs::WriteProcFixture("demo/proc", {}).ok());
  auto p = ResolvePasswd("demo/proc", "");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(*p, (dir_ / "demo/proc/passwd").string());
  // The live /proc uses the system user database.
  auto live = ResolvePasswd("/proc", "");
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(*live, "");
  // A fixture without a passwd file too.
  fs::create_directories("bare/1");
  auto bare = ResolvePasswd("bare", "");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(*bare, "");
}

TEST_F(ProcFlagsTest, GivenPasswdIsRelativeToTheWorkingDirectoryNotTheProcRoot) {
  ASSERT_TRUE(procfs::WriteProcFixture("demo/proc", {}).ok());
  std::ofstream("users") << "carol:x:1000:1000::/home/carol:/bin/sh\n";
  auto p = ResolvePasswd("demo/proc", "users");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(*p, (dir_ / "users").string());
  auto q = ResolvePasswd("demo/proc", "demo/proc/passwd");
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(*q, (dir_ / "demo/proc/passwd").string());
}

TEST_F(ProcFlagsTest, UnreadableGivenPasswdIsAnErrorNamingTheFile) {
  ASSERT_TRUE(procfs::WriteProcFixture("demo/proc", {}).ok());
  auto missing = ResolvePasswd("demo/proc", "nonexist");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--passwd"), std::string::npos) << missing.status().message();
  EXPECT_NE(missing.status().message().find("nonexist"), std::string::npos) << missing.status().message();
  fs::create_directories("adir");
  EXPECT_FALSE(ResolvePasswd("demo/proc", "adir").ok());
}

}  // namespace
}  // namespace vw::cli
