#include "sources/kernel/kernel_log_follower.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>

#include "sources/kernel/kernel_log_reader.h"

namespace vw::kernel {
namespace {

class FollowerFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vw_follow_XXXXXX";
    int fd = mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    close(fd);
    path_ = tmpl;
  }
  void TearDown() override { unlink(path_.c_str()); }
  void Append(const std::string& text) {
    std::ofstream out(path_, std::ios::app);
    out << text;
  }
  std::string path_;
};

constexpr const char* kXid79 = "[ 100.5] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n";
constexpr const char* kXid13 = "[ 200.0] NVRM: Xid (PCI:0000:3c:00): 13, pid=42, name=python3, Graphics SM Warp\n";

TEST_F(FollowerFile, SkipsWhatTheFileHeldAtStartAndReturnsOnlyNewLines) {
  Append(kXid13);
  KernelLogFollower f(path_);
  ASSERT_TRUE(f.Start().ok());
  EXPECT_EQ(f.source(), path_);
  auto first = f.ReadNew();
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->events.empty()) << "events before Start are not new";
  Append(kXid79);
  auto second = f.ReadNew();
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->events.size(), 1u);
  EXPECT_EQ(second->events[0].xid, 79);
  EXPECT_EQ(second->events[0].pci_bus_id, "00000000:3B:00.0");
  auto third = f.ReadNew();
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(third->events.empty()) << "an event is returned once";
}

TEST_F(FollowerFile, WaitsForALineToBeCompleteBeforeParsingIt) {
  KernelLogFollower f(path_);
  ASSERT_TRUE(f.Start().ok());
  std::string line = kXid79;
  Append(line.substr(0, 30));
  auto partial = f.ReadNew();
  ASSERT_TRUE(partial.ok());
  EXPECT_TRUE(partial->events.empty());
  Append(line.substr(30));
  auto whole = f.ReadNew();
  ASSERT_TRUE(whole.ok());
  ASSERT_EQ(whole->events.size(), 1u);
  EXPECT_EQ(whole->events[0].xid, 79);
}

TEST_F(FollowerFile, ReadsATruncatedFileAgainFromItsStart) {
  Append(kXid13);
  Append(kXid13);
  KernelLogFollower f(path_);
  ASSERT_TRUE(f.Start().ok());
  { std::ofstream truncate(path_, std::ios::trunc); }
  Append(kXid79);
  auto scan = f.ReadNew();
  ASSERT_TRUE(scan.ok());
  ASSERT_EQ(scan->events.size(), 1u);
  EXPECT_EQ(scan->events[0].xid, 79);
}

// Rotation (the file moved away and a new one written at the path) and a file truncated, then
// written past the old offset between two looks: the first line of the new text is not skipped.
TEST_F(FollowerFile, ReadsAReplacedOrRewrittenFileAgainFromItsStart) {
  Append(kXid13);
  KernelLogFollower f(path_);
  ASSERT_TRUE(f.Start().ok());
  const std::string rotated = path_ + ".1";
  ASSERT_EQ(std::rename(path_.c_str(), rotated.c_str()), 0);
  Append(kXid79);  // same length as before: only the inode tells
  Append(kXid79);
  auto after_rotation = f.ReadNew();
  std::filesystem::remove(rotated);
  ASSERT_TRUE(after_rotation.ok());
  EXPECT_EQ(after_rotation->events.size(), 2u);

  { std::ofstream truncate(path_, std::ios::trunc); }
  Append(kXid13);
  Append(kXid13);
  Append(kXid79);  // longer than what was read: the size alone does not tell
  auto after_rewrite = f.ReadNew();
  ASSERT_TRUE(after_rewrite.ok());
  EXPECT_EQ(after_rewrite->events.size(), 3u);
  auto again = f.ReadNew();
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->events.empty()) << "each line is read once";
}

// Rotation by rename: the lines the logger wrote to the old file after the last look, before it
// reopened the path, are read first, then the new file's.
TEST_F(FollowerFile, ReadsTheLinesARotatedFileGainedBeforeTheNewOne) {
  KernelLogFollower f(path_);
  ASSERT_TRUE(f.Start().ok());
  Append(kXid13);
  auto first = f.ReadNew();
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->events.size(), 1u);
  Append(kXid79);  // after the last look, into the file about to be rotated
  const std::string rotated = path_ + ".1";
  ASSERT_EQ(std::rename(path_.c_str(), rotated.c_str()), 0);
  Append(kXid13);  // the new file
  auto after = f.ReadNew();
  std::filesystem::remove(rotated);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->events.size(), 2u);
  EXPECT_EQ(after->events[0].xid, 79);
  EXPECT_EQ(after->events[1].xid, 13);
  auto again = f.ReadNew();
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->events.empty()) << "each line is read once";
}

// A pseudo-terminal's other end: a character device whose read waits for the next line, as
// /dev/kmsg's does, which tests can write to.
class Terminal : public ::testing::Test {
 protected:
  void SetUp() override {
    master_ = posix_openpt(O_RDWR | O_NOCTTY);
    // Every Linux the project builds on has pseudo-terminals (/dev/ptmx): none is a failure, not a
    // skip that would pass unseen.
    ASSERT_GE(master_, 0) << "posix_openpt: no pseudo-terminal, so a character device given as the kernel log "
                             "cannot be tested";
    ASSERT_EQ(grantpt(master_), 0);
    ASSERT_EQ(unlockpt(master_), 0);
    path_ = ptsname(master_);
    // Keep one end of the device open, so that its lines wait for a reader.
    slave_ = ::open(path_.c_str(), O_RDWR | O_NOCTTY);
    ASSERT_GE(slave_, 0);
  }
  void TearDown() override {
    if (slave_ >= 0) ::close(slave_);
    if (master_ >= 0) ::close(master_);
  }
  void Write(const std::string& text) { ASSERT_EQ(::write(master_, text.data(), text.size()), ssize_t(text.size())); }
  int master_ = -1, slave_ = -1;
  std::string path_;
};

// --kernel-log /dev/kmsg: a character device is read for what it holds, without waiting for more
// (read to its end, it would wait for ever), in `check` and in the daemon.
TEST_F(Terminal, ACharacterDeviceIsReadForWhatItHoldsWithoutWaiting) {
  Write(kXid79);
  auto read = std::async(std::launch::async, [&] { return ReadKernelLogFile(path_); });
  if (read.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ::close(master_);  // lets the waiting read end
    master_ = -1;
    FAIL() << "reading " << path_ << " waited for more";
  }
  auto scan = read.get();
  ASSERT_TRUE(scan.ok()) << scan.status().message();
  ASSERT_EQ(scan->events.size(), 1u);
  EXPECT_EQ(scan->events[0].xid, 79);

  KernelLogFollower f(path_);
  ASSERT_TRUE(f.Start().ok());
  EXPECT_TRUE(f.reading());
  EXPECT_EQ(f.source(), path_);
  Write(kXid13);
  auto next = f.ReadNew();
  ASSERT_TRUE(next.ok()) << next.status().message();
  ASSERT_EQ(next->events.size(), 1u);
  EXPECT_EQ(next->events[0].xid, 13);
  auto none = f.ReadNew();
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_TRUE(none->events.empty());
}

TEST(KernelLogFollower, MissingFileFailsAtStartWithItsPath) {
  KernelLogFollower f("/nonexistent/kern.log");
  Status s = f.Start();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent/kern.log"), std::string::npos) << s.message();
}

// The daemon waits for a file that does not exist yet (in a directory that does): not reading,
// ReadNew failing with its path; once it exists it is followed from the end it had then.
TEST(KernelLogFollower, AMissingFileIsWaitedForWhenAskedAndFollowedFromItsEnd) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("vw-follow-wait-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "kern.log").string();
  KernelLogFollower f(path);
  ASSERT_TRUE(f.Start(/*wait_for_missing_file=*/true).ok());
  EXPECT_FALSE(f.reading());
  EXPECT_EQ(f.source(), "");
  ASSERT_EQ(f.notes().size(), 1u);
  EXPECT_NE(f.notes()[0].find(path + " does not exist (yet)"), std::string::npos) << f.notes()[0];
  auto before = f.ReadNew();
  ASSERT_FALSE(before.ok());
  EXPECT_NE(before.status().message().find(path), std::string::npos);
  const std::string line =
      "[ 1936.5] NVRM: Xid (PCI:0000:3c:00): 79, pid=5200, name=python3, GPU has fallen off the bus.\n";
  std::ofstream(path) << line;  // what it holds when it appears: not counted
  auto first = f.ReadNew();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(f.reading());
  EXPECT_EQ(f.source(), path);
  EXPECT_TRUE(first->events.empty());
  std::ofstream(path, std::ios::app) << line;
  auto after = f.ReadNew();
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  ASSERT_EQ(after->events.size(), 1u);
  EXPECT_EQ(after->events[0].xid, 79);
  // A path whose directory does not exist is a typo, not a file to wait for.
  KernelLogFollower typo((dir / "no-such-dir" / "kern.log").string());
  EXPECT_FALSE(typo.Start(/*wait_for_missing_file=*/true).ok());
  std::filesystem::remove_all(dir);
}

TEST(KernelLogFollower, DirectoryFailsAtStartWithItsPathAndReason) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("vw-follow-dir-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  KernelLogFollower f(dir.string());
  Status s = f.Start();
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir.string()), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("directory"), std::string::npos) << s.message();
}

TEST(KernelLogFollower, NoneReadsNothingAndSaysSo) {
  KernelLogFollower f("none");
  ASSERT_TRUE(f.Start().ok());
  EXPECT_TRUE(f.source().empty());
  ASSERT_EQ(f.notes().size(), 1u);
  auto scan = f.ReadNew();
  ASSERT_TRUE(scan.ok());
  EXPECT_TRUE(scan->events.empty());
}

}  // namespace
}  // namespace vw::kernel
