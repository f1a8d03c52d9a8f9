#include "sources/trace/compact_sample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace vw::trace {
namespace {

// Every combination of present and missing values, with values at the edges of their ranges.
TEST(CompactSample, RoundTripsEveryFieldPresentOrMissing) {
  const uint64_t kMax = std::numeric_limits<uint64_t>::max();
  struct Case {
    double t;
    uint64_t used, total, free, reserved;
    double util;
  };
  const std::vector<Case> cases = {
      {0.0, 0, 0, 0, 0, 0.0},
      {1.7e9 + 0.125, 20045ull << 20, 81559ull << 20, 61514ull << 20, 512ull << 20, 0.87},
      {-5.5, kMax, kMax - 1, 1, kMax, 1.0},
      {std::nextafter(1.0, 2.0), 1, 2, 3, 4, std::nextafter(0.0, 1.0)},
  };
  for (const Case& c : cases) {
    for (unsigned mask = 0; mask < 32; ++mask) {
      SCOPED_TRACE(testing::Message() << "t " << c.t << " mask " << mask);
      MemorySample in;
      in.t = c.t;
      if (mask & 1) in.used_bytes = c.used;
      if (mask & 2) in.total_bytes = c.total;
      if (mask & 4) in.free_bytes = c.free;
      if (mask & 8) in.reserved_bytes = c.reserved;
      if (mask & 16) in.gpu_util_ratio = c.util;
      CompactSample packed;
      // Values left from an earlier sample must not leak into a missing field.
      packed.used_bytes = packed.total_bytes = packed.free_bytes = packed.reserved_bytes = 77;
      packed.gpu_util_ratio = 0.5;
      packed.present = 0xFF;
      ToCompact(in, 7, &packed);
      EXPECT_EQ(packed.gpu, 7u);
      MemorySample out;
      out.used_bytes = out.total_bytes = out.free_bytes = out.reserved_bytes = 99;
      out.gpu_util_ratio = 0.25;
      out.processes.emplace();
      FromCompact(packed, &out);
      EXPECT_EQ(out.t, in.t);
      EXPECT_EQ(out.used_bytes, in.used_bytes);
      EXPECT_EQ(out.total_bytes, in.total_bytes);
      EXPECT_EQ(out.free_bytes, in.free_bytes);
      EXPECT_EQ(out.reserved_bytes, in.reserved_bytes);
      EXPECT_EQ(out.gpu_util_ratio, in.gpu_util_ratio);
      EXPECT_FALSE(out.processes.has_value());
    }
  }
}

GpuIdentity Gpu(std::string key, std::optional<int> index, std::string uuid, std::string bus = "",
                std::string name = "") {
  GpuIdentity g;
  g.key = std::move(key);
  g.index = index;
  g.uuid = std::move(uuid);
  g.pci_bus_id = std::move(bus);
  g.name = std::move(name);
  return g;
}

// Identities that differ from the base in one field only, in every place of a string (first,
// middle, last byte, the last 8 bytes that are compared first, one byte longer or shorter).
TEST(CompactSample, SameGpuTellsApartADifferenceInAnyField) {
  const GpuIdentity base =
      Gpu("3", 3, "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f03", "00000000:3B:00.0", "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(SameGpu(base, base));
  struct Case {
    const char* what;
    GpuIdentity other;
  };
  std::vector<Case> cases;
  auto changed = [&](const char* what, auto change) {
    GpuIdentity g = base;
    change(g);
    cases.push_back({what, g});
  };
  changed("key", [](GpuIdentity& g) { g.key = "4"; });
  changed("key longer", [](GpuIdentity& g) { g.key = "33"; });
  changed("index value", [](GpuIdentity& g) { g.index = 4; });
  changed("index missing", [](GpuIdentity& g) { g.index.reset(); });
  changed("uuid first byte", [](GpuIdentity& g) { g.uuid[0] = 'X'; });
  changed("uuid byte 9", [](GpuIdentity& g) { g.uuid[9] = 'X'; });
  changed("uuid byte 31", [](GpuIdentity& g) { g.uuid[31] = 'X'; });
  changed("uuid last byte", [](GpuIdentity& g) { g.uuid.back() = '4'; });
  changed("uuid shorter", [](GpuIdentity& g) { g.uuid.pop_back(); });
  changed("uuid empty", [](GpuIdentity& g) { g.uuid.clear(); });
  changed("bus id", [](GpuIdentity& g) { g.pci_bus_id[13] = 'C'; });
  changed("name", [](GpuIdentity& g) { g.name = "NVIDIA H100 80GB HBM2"; });
  changed("name empty", [](GpuIdentity& g) { g.name.clear(); });
  for (const Case& c : cases) {
    EXPECT_FALSE(SameGpu(base, c.other)) << c.what;
    EXPECT_FALSE(SameGpu(c.other, base)) << c.what;
  }
  // Strings of 8 to 17 bytes that differ only in the bytes the word compare covers last.
  for (size_t n = 8; n <= 17; ++n) {
    for (size_t at = 0; at < n; ++at) {
      GpuIdentity a = Gpu(std::string(n, 'a'), 1, "");
      GpuIdentity b = a;
      b.key[at] = 'b';
      EXPECT_FALSE(SameGpu(a, b)) << "length " << n << " at " << at;
    }
  }
}

TEST(GpuTable, InternsRepeatingGpusOnceAndKeepsFirstSeenOrder) {
  GpuTable table;
  std::vector<GpuIdentity> gpus;
  for (int i = 0; i < 8; ++i) {
    gpus.push_back(Gpu(std::to_string(i), i, "GPU-aaaa-" + std::to_string(i)));
  }
  // Round robin, then out of order, then a GPU twice in a row.
  const std::vector<int> order = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 5, 2, 7, 0, 0, 3, 3, 6};
  for (int i : order) EXPECT_EQ(table.Intern(gpus[static_cast<size_t>(i)]), static_cast<uint32_t>(i)) << i;
  ASSERT_EQ(table.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_TRUE(SameGpu(table[i], gpus[i])) << i;
  EXPECT_EQ(table.data(), &table[0]);
}

TEST(GpuTable, ClearStartsAnEmptyTableThatReusesItsEntries) {
  GpuTable table;
  const GpuIdentity a = Gpu("GPU-long-uuid-0000000000000000000000000000", std::nullopt, "GPU-long-uuid-00");
  const GpuIdentity b = Gpu("1", 1, "");
  EXPECT_EQ(table.Intern(a), 0u);
  EXPECT_EQ(table.Intern(b), 1u);
  table.Clear();
  EXPECT_EQ(table.size(), 0u);
  // The old entries must not be found after Clear(): b is entry 0 now, with b's identity.
  EXPECT_EQ(table.Intern(b), 0u);
  EXPECT_TRUE(SameGpu(table[0], b));
  EXPECT_EQ(table.Intern(a), 1u);
  EXPECT_TRUE(SameGpu(table[1], a));
  EXPECT_EQ(table.size(), 2u);
}

TEST(GpuTable, ManyDistinctGpusStayCorrectBeyondTheSearchedEntries) {
  GpuTable table;
  const size_t n = GpuTable::kSearched * 3;
  std::vector<GpuIdentity> gpus;
  for (size_t i = 0; i < n; ++i) gpus.push_back(Gpu(std::to_string(i), static_cast<int>(i), ""));
  // Every identity the table hands back must be the one given, even when it appends a duplicate.
  for (size_t round = 0; round < 3; ++round) {
    for (size_t i = 0; i < n; ++i) {
      const size_t pick = (i * 7 + round) % n;
      const uint32_t id = table.Intern(gpus[pick]);
      ASSERT_LT(id, table.size());
      EXPECT_TRUE(SameGpu(table[id], gpus[pick])) << round << " " << i;
    }
  }
  // Round robin over more GPUs than are searched still finds each one after the last hit.
  GpuTable cycle;
  for (size_t i = 0; i < n; ++i) cycle.Intern(gpus[i]);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(cycle.Intern(gpus[i]), static_cast<uint32_t>(i));
  EXPECT_EQ(cycle.size(), n);
}

}  // namespace
}  // namespace vw::trace
