#include "storage/gpu_identity.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "storage/history_store.h"

namespace vw::storage {
namespace {

TEST(GpuIdentities, PendingOnesAreReadBackAndSurviveAReopen) {
  char tmpl[] = "/tmp/vw_gpu_identity_XXXXXX";
  std::string dir = mkdtemp(tmpl);
  const std::string path = dir + "/h.db";
  {
    auto store = HistoryStore::Open(path);
    ASSERT_TRUE(store.ok());
    (*store)->gpu_identities().Put("0", {"GPU-aaaa", 100});
    (*store)->gpu_identities().Put("1", {"GPU-bbbb", 100});
    auto pending = (*store)->gpu_identities().All();  // pending is visible before the flush
    ASSERT_TRUE(pending.ok());
    ASSERT_EQ(pending->size(), 2u);
    EXPECT_EQ(pending->at("1").uuid, "GPU-bbbb");
    ASSERT_TRUE((*store)->Flush().ok());
  }
  auto store = HistoryStore::Open(path);
  ASSERT_TRUE(store.ok());
  // A replaced card: the key's identity and its start change, the other key keeps its own.
  (*store)->gpu_identities().Put("0", {"GPU-cccc", 5000});
  ASSERT_TRUE((*store)->Flush().ok());
  auto all = (*store)->gpu_identities().All();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ(all->at("0").uuid, "GPU-cccc");
  EXPECT_DOUBLE_EQ(all->at("0").since_s, 5000);
  EXPECT_EQ(all->at("1").uuid, "GPU-bbbb");
  EXPECT_DOUBLE_EQ(all->at("1").since_s, 100);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vw::storage
