#include "sources/trace/process_rows.h"

#include <gtest/gtest.h>

namespace vw::trace {
namespace {

ProcessMemory Row(int64_t pid, uint64_t used, std::optional<unsigned> gi, const char* command = "python") {
  ProcessMemory p;
  p.pid = pid;
  p.command = command;
  p.used_bytes = used;
  p.gpu_instance_id = gi;
  if (gi) {
    p.instance_used_bytes = 100 * *gi;
    p.instance_total_bytes = 1000 * *gi;
  }
  return p;
}

TEST(OnePerPid, WithoutARepeatedPidTheListItself) {
  std::vector<ProcessMemory> listed = {Row(1, 10, 2), Row(2, 20, 9)};
  std::vector<int64_t> pids;
  std::vector<ProcessMemory> merged;
  EXPECT_EQ(&OnePerPid(listed, &pids, &merged), &listed);
}

TEST(OnePerPid, APidOnTwoInstancesIsTheSumOnNeither) {
  std::vector<ProcessMemory> listed = {Row(7, 10, 2, "first"), Row(8, 5, 9), Row(7, 30, 9, "second"), Row(8, 6, 9)};
  std::vector<int64_t> pids;
  std::vector<ProcessMemory> merged;
  const std::vector<ProcessMemory>& one = OnePerPid(listed, &pids, &merged);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[0].pid, 7);
  EXPECT_EQ(one[0].command, "first");
  EXPECT_EQ(one[0].used_bytes, 40u);
  EXPECT_FALSE(one[0].gpu_instance_id.has_value()) << "rows on GI 2 and GI 9";
  EXPECT_FALSE(one[0].instance_total_bytes.has_value());
  EXPECT_FALSE(one[0].instance_used_bytes.has_value());
  EXPECT_EQ(one[1].pid, 8);
  EXPECT_EQ(one[1].used_bytes, 11u);
  EXPECT_EQ(one[1].gpu_instance_id, 9u) << "both rows on GI 9 (two compute instances)";
  EXPECT_EQ(one[1].instance_total_bytes, 9000u);
}

}  // namespace
}  // namespace vw::trace
