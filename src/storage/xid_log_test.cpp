#include "storage/xid_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "storage/history_store.h"

namespace vw::storage {
namespace {

namespace fs = std::filesystem;

std::string TempDb() {
  char tmpl[] = "/tmp/vw_xidlog_XXXXXX";
  std::string dir = mkdtemp(tmpl);
  return dir + "/h.db";
}

StoredXid Event(const std::string& boot, const std::string& gpu, int xid, double seen) {
  StoredXid e;
  e.boot_id = boot;
  e.gpu = gpu;
  e.xid = xid;
  e.seen_s = seen;
  e.pci_bus_id = "00000000:3C:00.0";
  e.pid = 5200;
  e.process_name = "python3";
  e.message = "GPU has fallen off the bus.";
  e.line = "[ 1936.5] NVRM: Xid (PCI:0000:3c:00): 79, pid=5200, name=python3, GPU has fallen off the bus.";
  return e;
}

TEST(XidLog, CountsAndKeptEventsSurviveReopeningTheDatabase) {
  const std::string db = TempDb();
  {
    auto h = HistoryStore::Open(db);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    (*h)->xids().Count("boot-a", "1", 79);
    (*h)->xids().Count("boot-a", "0", 13);
    (*h)->xids().Count("boot-a", "0", 13);
    StoredXid e = Event("boot-a", "1", 79, 1000.5);
    e.caused_by_xid = 48;
    (*h)->xids().Keep(e);
    ASSERT_TRUE((*h)->Flush().ok());
    // A second batch adds to the stored counts.
    (*h)->xids().Count("boot-a", "1", 79);
    ASSERT_TRUE((*h)->Flush().ok());
  }
  auto h = HistoryStore::Open(db);
  ASSERT_TRUE(h.ok());
  auto loaded = (*h)->xids().Load("boot-a");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((loaded->counts[{"1", 79}]), 2u);
  EXPECT_EQ((loaded->counts[{"0", 13}]), 2u);
  ASSERT_EQ(loaded->events.size(), 1u);
  const StoredXid& e = loaded->events[0];
  EXPECT_EQ(e.gpu, "1");
  EXPECT_EQ(e.xid, 79);
  EXPECT_DOUBLE_EQ(e.seen_s, 1000.5);
  EXPECT_EQ(e.pci_bus_id, "00000000:3C:00.0");
  EXPECT_EQ(e.pid, 5200);
  EXPECT_EQ(e.process_name, "python3");
  EXPECT_EQ(e.caused_by_xid, 48);
  EXPECT_EQ(e.line.substr(0, 9), "[ 1936.5]");
  fs::remove_all(fs::path(db).parent_path());
}

TEST(XidLog, AnotherBootSeesNothingAndForgettingOtherBootsDeletesTheirRows) {
  const std::string db = TempDb();
  auto h = HistoryStore::Open(db);
  ASSERT_TRUE(h.ok());
  (*h)->xids().Count("old-boot", "1", 79);
  (*h)->xids().Keep(Event("old-boot", "1", 79, 10));
  (*h)->xids().Count("new-boot", "0", 48);
  (*h)->xids().Keep(Event("new-boot", "0", 48, 20));
  ASSERT_TRUE((*h)->Flush().ok());
  auto fresh = (*h)->xids().Load("new-boot");
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->counts.size(), 1u);
  EXPECT_EQ((fresh->counts[{"0", 48}]), 1u);
  ASSERT_EQ(fresh->events.size(), 1u);
  EXPECT_EQ(fresh->events[0].xid, 48);
  ASSERT_TRUE((*h)->xids().ForgetOtherBoots("new-boot").ok());
  auto old = (*h)->xids().Load("old-boot");
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(old->counts.empty());
  EXPECT_TRUE(old->events.empty());
  EXPECT_EQ((*h)->xids().Load("new-boot")->events.size(), 1u);
  fs::remove_all(fs::path(db).parent_path());
}

TEST(XidLog, PendingEventsAreLoadedBeforeTheFlush) {
  const std::string db = TempDb();
  auto h = HistoryStore::Open(db);
  ASSERT_TRUE(h.ok());
  (*h)->xids().Count("", "1", 79);
  (*h)->xids().Keep(Event("", "1", 79, 5));
  auto loaded = (*h)->xids().Load("");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ((loaded->counts[{"1", 79}]), 1u);
  EXPECT_EQ(loaded->events.size(), 1u);
  fs::remove_all(fs::path(db).parent_path());
}

}  // namespace
}  // namespace vw::storage
