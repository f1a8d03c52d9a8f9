#include "sources/trace/framework_log.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace vw::trace {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;

FrameworkLog Parse(const std::string& text) {
  auto log = ParseFrameworkLog(text, "train.log");
  EXPECT_TRUE(log.ok()) << log.status().message();
  return log.ok() ? *log : FrameworkLog{};
}

// The shapes training scripts print, one per case: the values read and the unit applied.
TEST(ParseFrameworkLog, ReadsEachSpellingWithItsUnit) {
  struct Case {
    std::string line;
    std::optional<uint64_t> allocated, reserved;
  };
  const Case cases[] = {
      {"torch.cuda.memory_allocated(0) 318986240", 318986240, std::nullopt},
      {"torch.cuda.memory_reserved() = 759169024", std::nullopt, 759169024},
      {"Mem memory (MB) | allocated: 20.5 | max allocated: 21.9 | reserved: 26.0 | max reserved: 26.0",
       static_cast<uint64_t>(20.5 * kMiB), 26 * kMiB},
      {"Memory usage (cuda): alloc cur 1.5GB alloc peak 10.7GB reserved cur 11.25GB reserved peak 11.3GB",
       static_cast<uint64_t>(1.5 * 1024 * kMiB), static_cast<uint64_t>(11.25 * 1024 * kMiB)},
      {"step 40 allocated=512 MiB reserved=2 GiB", 512 * kMiB, 2048 * kMiB},
      {"[rank0] memory (GB): allocated 1.25, reserved 2.5", 1280 * kMiB, 2560 * kMiB},
      {"| Allocated memory      | 727515 KiB |  27916 MiB |   4121 GiB |   4120 GiB |", 727515 * 1024ull, std::nullopt},
      {"| GPU reserved memory   |   12420 MB |   12420 MB |   16924 MB |    4504 MB |", std::nullopt, 12420 * kMiB},
  };
  for (const Case& c : cases) {
    FrameworkLog log = Parse(c.line + "\n");
    ASSERT_EQ(log.steps.size(), 1u) << c.line;
    EXPECT_EQ(log.steps[0].allocated_bytes, c.allocated) << c.line;
    EXPECT_EQ(log.steps[0].reserved_bytes, c.reserved) << c.line;
    EXPECT_EQ(log.steps[0].device, 0) << c.line;
  }
}

// Sizes above 2^63 bytes and below the 1.8e19 limit are read as written (rounding through a signed
// 64-bit integer made every one of them 2^63).
TEST(ParseFrameworkLog, SizesPastTwoToTheSixtyThirdKeepTheirValue) {
  FrameworkLog log = Parse("allocated: 12000000000000000000 B reserved: 17000000000000000000 B\n");
  ASSERT_EQ(log.steps.size(), 1u);
  EXPECT_EQ(log.steps[0].allocated_bytes, 12000000000000000000ull);
  EXPECT_EQ(log.steps[0].reserved_bytes, 17000000000000000000ull);
}

// Long lines of many devices, values or "memory" words (up to the 64 KiB a line is read to) give
// the same steps as short ones; the parser's cost on them is measured in BM_FrameworkLogLongLines.
TEST(ParseFrameworkLog, LongLinesOfRepeatedNamesReadAsShortOnesDo) {
  std::string devices;
  while (devices.size() < 60000) devices += "cuda:0 ";
  FrameworkLog log = Parse(devices + "cuda:1 allocated: 1 GiB reserved: 2 GiB\n");
  ASSERT_EQ(log.steps.size(), 1u);
  EXPECT_EQ(log.steps[0].device, 1);
  EXPECT_EQ(log.steps[0].allocated_bytes, 1024 * kMiB);

  std::string values = "rank 3 | ";
  for (int i = 0; i < 1500; ++i) values += "allocated: 1 GiB reserved: 2 GiB ";
  log = Parse(values + "\n");
  ASSERT_EQ(log.steps.size(), 1u);
  EXPECT_EQ(log.steps[0].device, 3);
  EXPECT_EQ(log.steps[0].reserved_bytes, 2048 * kMiB);

  // A device named after many values without one is still found for the value after it.
  std::string late = "step 7 ";
  for (int i = 0; i < 1500; ++i) late += "allocated: 1 GiB reserved: 2 GiB ";
  log = Parse(late + "device 2: allocated: 3 GiB reserved: 4 GiB\n");
  bool device2 = false;
  for (const auto& s : log.steps) device2 |= s.device == 2 && s.allocated_bytes == 3 * 1024 * kMiB;
  EXPECT_TRUE(device2);
}

// torch.cuda.memory_stats() printed: only the current figures, not the bytes ever allocated.
TEST(ParseFrameworkLog, MemoryStatsKeysGiveTheCurrentFigures) {
  FrameworkLog log = Parse(
      "{'active.all.current': 212, 'allocated_bytes.all.allocated': 99999999999, 'allocated_bytes.all.current': "
      "318986240, 'allocated_bytes.all.peak': 685223936, 'allocation.all.current': 212, 'num_alloc_retries': 0, "
      "'reserved_bytes.all.current': 759169024, 'reserved_bytes.all.freed': 1}\n"
      "{\"allocated_bytes.all.current\": 319000000, \"reserved_bytes.all.current\": 759169024}\n");
  ASSERT_EQ(log.steps.size(), 2u);
  EXPECT_EQ(log.steps[0].allocated_bytes, 318986240u);
  EXPECT_EQ(log.steps[0].reserved_bytes, 759169024u);
  EXPECT_EQ(log.steps[1].allocated_bytes, 319000000u);
}

// A logger's metrics file: rows log a few metrics each, the memory columns as floats.
TEST(ParseFrameworkLog, MetricsCsvColumnsNamedByTheirMemoryStatsKeys) {
  const std::string csv =
      "step,epoch,DeviceStats/allocated_bytes.all.current,DeviceStats/reserved_bytes.all.current,train_loss\n"
      "0,0,318986240.0,759169024.0,\n"
      "1,0,,,0.51\n"
      "2,0,3.2e+08,7.6e+08,\n";
  EXPECT_TRUE(IsFrameworkLogHead(csv, true));
  FrameworkLog log = Parse(csv);
  ASSERT_EQ(log.steps.size(), 2u) << "a row without memory values is no step";
  EXPECT_EQ(log.steps[0].line, 2u);
  EXPECT_EQ(log.steps[0].allocated_bytes, 318986240u);
  EXPECT_EQ(log.steps[1].reserved_bytes, 760000000u);
  auto bad = ParseFrameworkLog("step,memory_allocated\n0,12\n1,lots\n", "m.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("m.csv:3: column 2 (allocated): expected a whole number of bytes, got 'lots'"),
            std::string::npos)
      << bad.status().message();
}

TEST(ParseFrameworkLog, MaximaAndPeaksAreNotRead) {
  const char* lines[] = {"torch.cuda.max_memory_allocated(0) 685223936", "max allocated: 21.9 (MB)",
                         "alloc peak 10.7GB", "torch.cuda.max_memory_reserved(1) 608174080",
                         "peak memory allocated: 3 GiB"};
  for (const char* line : lines) {
    auto log = ParseFrameworkLog(std::string(line) + "\n", "t.log");
    ASSERT_FALSE(log.ok()) << line << ": a log of maxima only has no value to judge";
    EXPECT_NE(log.status().message().find("no PyTorch memory value"), std::string::npos) << log.status().message();
  }
}

// Each iteration prints its devices' values on lines of their own, and the driver's figure
// beside them; a device's step ends when its value comes again.
TEST(ParseFrameworkLog, StepsPerDeviceWithTheDriverFigure) {
  FrameworkLog log = Parse(
      "Iter 1\n"
      "torch.cuda.memory_allocated(0) 1048576\n"
      "torch.cuda.memory_reserved(0) 2097152\n"
      "nvidia-smi GPU-0 memory (MB) 900\n"
      "torch.cuda.memory_allocated(1) 4194304\n"
      "Iter 2\n"
      "torch.cuda.memory_allocated(0) 1048576\n"
      "torch.cuda.memory_reserved(0) 2097152\n"
      "nvidia-smi GPU-0 memory (MB) 902\n"
      "torch.cuda.memory_allocated(1) 5242880\n");
  ASSERT_EQ(log.steps.size(), 4u);
  EXPECT_EQ(log.steps[0].device, 0);
  EXPECT_EQ(log.steps[0].line, 2u);
  EXPECT_EQ(log.steps[0].driver_used_bytes, 900 * kMiB);
  EXPECT_EQ(log.steps[1].device, 1);
  EXPECT_EQ(log.steps[1].allocated_bytes, 4 * kMiB);
  EXPECT_EQ(log.steps[2].device, 0);
  EXPECT_EQ(log.steps[2].driver_used_bytes, 902 * kMiB);
  EXPECT_EQ(log.steps[3].allocated_bytes, 5 * kMiB);
  EXPECT_EQ(log.lines, 10u);
  EXPECT_EQ(log.lines_read, 8u);
}

// The values of one line are one step, whatever order it names them in.
TEST(ParseFrameworkLog, OneLineIsOneStepInAnyOrder) {
  FrameworkLog log = Parse(
      "reserved: 30 allocated: 10 (MB)\n"
      "reserved: 31 allocated: 11 (MB)\n"
      "reserved: 32 allocated: 12 (MB)\n");
  ASSERT_EQ(log.steps.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(log.steps[i].reserved_bytes, (30 + i) * kMiB) << i;
    EXPECT_EQ(log.steps[i].allocated_bytes, (10 + i) * kMiB) << i;
  }
}

TEST(ParseFrameworkLog, SummaryTablesTakeTheirDeviceAndCurrentUsage) {
  FrameworkLog log = Parse(
      "|===========================================================================|\n"
      "|                  PyTorch CUDA memory summary, device ID 1                 |\n"
      "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |\n"
      "| Allocated memory      |    1062 MB |    4877 MB |   89299 MB |   88237 MB |\n"
      "|       from large pool |    1048 MB |    4865 MB |   89263 MB |   88215 MB |\n"
      "| GPU reserved memory   |   12420 MB |   12420 MB |   16924 MB |    4504 MB |\n"
      "|===========================================================================|\n"
      "after the table: allocated: 7 MiB\n");
  ASSERT_EQ(log.steps.size(), 2u);
  EXPECT_EQ(log.steps[0].device, 1);
  EXPECT_EQ(log.steps[0].allocated_bytes, 1062 * kMiB);
  EXPECT_EQ(log.steps[0].reserved_bytes, 12420 * kMiB);
  EXPECT_EQ(log.steps[1].device, 0) << "outside the table, a line without a device is device 0's";
}

TEST(ParseFrameworkLog, CudaDeviceInTheLineNamesTheDevice) {
  FrameworkLog log = Parse("cuda:3 allocated: 10 MiB reserved: 20 MiB\n");
  ASSERT_EQ(log.steps.size(), 1u);
  EXPECT_EQ(log.steps[0].device, 3);
}

// The expressions are tried only where a key, a unit or a device can begin: a key inside a word
// is no key, the word before a key still marks a maximum, and a device or unit counts only as a
// whole word (and a device only before its value).
TEST(ParseFrameworkLog, KeysUnitsAndDevicesCountOnlyAsWholeWords) {
  FrameworkLog a = Parse("unallocated 4096 preallocated: 8192 reserved 2048 gpu2 allocated 1 KiB\n");
  ASSERT_EQ(a.steps.size(), 2u) << "device 0's reserved, device 2's allocated";
  EXPECT_EQ(a.steps[0].device, 0);
  EXPECT_FALSE(a.steps[0].allocated_bytes.has_value()) << "neither 4096 nor 8192 is an allocated value";
  EXPECT_EQ(a.steps[0].reserved_bytes, 2048u);
  EXPECT_EQ(a.steps[1].device, 2) << "the device named before the value";
  EXPECT_EQ(a.steps[1].allocated_bytes, 1024u);

  // (A unit on the line's other values would be 5's: here only the peak, which is not read, has one.)
  FrameworkLog b = Parse("peak_gpu_memory_allocated: 9 GiB memory_allocated: 3221225472 in GBs reserved 5\n");
  ASSERT_EQ(b.steps.size(), 1u);
  EXPECT_EQ(b.steps[0].allocated_bytes, 3 * 1024 * kMiB) << "the peak is left out";
  EXPECT_FALSE(b.steps[0].reserved_bytes.has_value()) << "'in GBs' names no unit, so 5 is a count";

  FrameworkLog c = Parse("step 3 (gib) allocated 2 reserved 4 cuda:1gpu 7\n");
  ASSERT_EQ(c.steps.size(), 1u);
  EXPECT_EQ(c.steps[0].allocated_bytes, 2 * 1024 * kMiB) << "the unit the line names";
  EXPECT_EQ(c.steps[0].reserved_bytes, 4 * 1024 * kMiB);
  EXPECT_EQ(c.steps[0].device, 0) << "a device after the values is not theirs";
}

// "1234,5 MB" is a decimal comma: the number stopped at the comma and was read as 1234 bytes. It
// is left out and reported with its place; a thousands separator ("1,234,567") still reads.
TEST(ParseFrameworkLog, ADecimalCommaIsLeftOutAndReported) {
  FrameworkLog log = Parse("step 1 allocated: 1234,5 MB reserved: 4096,25 MB\nstep 2 allocated: 1,234,567\n");
  ASSERT_EQ(log.steps.size(), 1u);
  EXPECT_EQ(log.steps[0].allocated_bytes, 1234567u);
  EXPECT_FALSE(log.steps[0].reserved_bytes.has_value());
  EXPECT_EQ(log.skipped, 2u);
  ASSERT_FALSE(log.skipped_examples.empty());
  EXPECT_EQ(log.skipped_examples[0], "train.log:1: 'allocated: 1234,5 MB' has a decimal comma (write a decimal point)");

  const std::string only_commas = "step 0 allocated: 1234,5 MB\nstep 1 allocated: 1244,5 MB\n";
  EXPECT_TRUE(LooksLikeFrameworkLog(only_commas)) << "a log, whose values cannot be read: the parser says why";
  auto none = ParseFrameworkLog(only_commas, "c.log");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("decimal comma"), std::string::npos) << none.status().message();
}

// A fraction with no unit anywhere is MB or GB left unsaid: not read, and reported with its place;
// a log of nothing else says why it has no value.
TEST(ParseFrameworkLog, AFractionWithoutAUnitIsLeftOutAndReported) {
  auto log = ParseFrameworkLog("allocated: 20 MiB\nallocated: 20.4 reserved: 26.0\n", "train.log");
  ASSERT_TRUE(log.ok()) << log.status().message();
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_EQ(log->skipped, 2u);
  ASSERT_FALSE(log->skipped_examples.empty());
  EXPECT_NE(log->skipped_examples[0].find("train.log:2: 'allocated: 20.4' has no unit"), std::string::npos)
      << log->skipped_examples[0];
  auto none = ParseFrameworkLog("allocated: 20.4\n", "train.log");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("train.log:1: 'allocated: 20.4' has no unit"), std::string::npos)
      << none.status().message();
}

// Numbers as people print them, and the devices their calls and lines name.
TEST(ParseFrameworkLog, NumberSpellingsAndDevices) {
  struct Case {
    std::string line;
    int device;
    uint64_t allocated;
  };
  const Case cases[] = {
      {"allocated: 1,234 MB", 0, 1234 * kMiB},
      {"memory_allocated: 3.18986240e+08", 0, 318986240},
      {"allocated 1.5G", 0, 1536 * kMiB},
      {"allocated: 2 G", 0, 2048 * kMiB},
      {"torch.cuda.memory_allocated('cuda:1') 123456789", 1, 123456789},
      {"torch.cuda.memory_allocated(device=2) 123456789", 2, 123456789},
      {"[GPU 3] allocated 5 GiB", 3, 5120 * kMiB},
  };
  for (const Case& c : cases) {
    FrameworkLog log = Parse(c.line + "\n");
    ASSERT_EQ(log.steps.size(), 1u) << c.line;
    EXPECT_EQ(log.steps[0].device, c.device) << c.line;
    EXPECT_EQ(log.steps[0].allocated_bytes, c.allocated) << c.line;
  }
  FrameworkLog two = Parse("mem cuda:0 allocated 1.0 GB reserved 2.0 GB | cuda:1 allocated 3.0 GB reserved 4.0 GB\n");
  ASSERT_EQ(two.steps.size(), 2u) << "each value takes the device named before it";
  EXPECT_EQ(two.steps[0].device, 0);
  EXPECT_EQ(two.steps[1].device, 1);
  EXPECT_EQ(two.steps[1].reserved_bytes, 4096 * kMiB);
}

// Words that are not memory figures: counts, durations, peaks named first.
TEST(ParseFrameworkLog, CountsAndPeaksInSentencesAreNotValues) {
  auto log = ParseFrameworkLog(
      "DataLoader allocated 4 workers\npre-allocated 2 streams\npeak GPU memory allocated: 9.0 GB\n"
      "allocated: 100 MiB\n",
      "t.log");
  ASSERT_TRUE(log.ok()) << log.status().message();
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_EQ(log->steps[0].allocated_bytes, 100 * kMiB);
}

// nvidia-smi's figure and PyTorch's on one line: all three are read.
TEST(ParseFrameworkLog, DriverFigureAndPytorchsOnOneLine) {
  FrameworkLog log = Parse("step 1 allocated 1.2 GiB reserved 2.0 GiB nvidia-smi GPU 0 memory 3000 MiB\n");
  ASSERT_EQ(log.steps.size(), 1u);
  EXPECT_EQ(log.steps[0].driver_used_bytes, 3000 * kMiB);
  EXPECT_EQ(log.steps[0].reserved_bytes, 2048 * kMiB);
  EXPECT_TRUE(log.steps[0].allocated_bytes.has_value());
}

TEST(ParseFrameworkLog, LenientSkipsALineWithABadValue) {
  EXPECT_FALSE(ParseFrameworkLog("allocated: -5 MiB\nallocated: 7 MiB\n", "t.log").ok());
  auto log = ParseFrameworkLog("allocated: -5 MiB\nallocated: 7 MiB\n", "t.log", true);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->skipped, 1u);
  EXPECT_EQ(log->steps.size(), 1u);
}

// A logger's header runs to many KiB: its rows are still read.
TEST(ParseFrameworkLog, ALongCsvHeaderIsRead) {
  std::string header = "step";
  for (int i = 0; i < 300; ++i) header += ",DeviceStatsMonitor.on_train_batch_end/metric_" + std::to_string(i);
  header += ",DeviceStatsMonitor.on_train_batch_end/allocated_bytes.all.current\n";
  std::string row = "1";
  for (int i = 0; i < 300; ++i) row += ",";
  row += ",318986240.0\n";
  ASSERT_GT(header.size(), 8192u);
  EXPECT_TRUE(IsFrameworkLogHead(header + row, true));
  FrameworkLog log = Parse(header + row);
  ASSERT_EQ(log.steps.size(), 1u);
  EXPECT_EQ(log.steps[0].allocated_bytes, 318986240u);
}

TEST(ParseFrameworkLog, ANegativeSizeIsAnError) {
  auto log = ParseFrameworkLog("allocated: -5 MiB\n", "train.log");
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("train.log:1:"), std::string::npos) << log.status().message();
  EXPECT_NE(log.status().message().find("negative"), std::string::npos) << log.status().message();
}

TEST(ParseFrameworkLog, WordsThatOnlyContainTheKeysAreNotValues) {
  auto log = ParseFrameworkLog("preallocated 4 buffers\nunreserved: 3 MiB\n", "t.log");
  EXPECT_FALSE(log.ok());
}

// Odd input is read or refused, never a crash: huge device numbers, very long lines.
TEST(ParseFrameworkLog, OddLinesAreReadOrRefusedWithoutACrash) {
  auto huge = ParseFrameworkLog(
      "torch.cuda.memory_allocated(99999999999999999999) 5\ncuda:99999999999999 allocated: 1 MiB\n"
      "nvidia-smi GPU-99999999999999999 memory 3 MiB\n",
      "t.log");
  ASSERT_TRUE(huge.ok()) << huge.status().message();
  for (const FrameworkStep& s : huge->steps) EXPECT_EQ(s.device, 0);
  std::string long_line = "allocated: 5 MiB" + std::string(200000, ' ') + "reserved: 9 MiB\n";
  auto log = ParseFrameworkLog(long_line + "allocated" + std::string(100000, ' ') + "\n", "t.log");
  ASSERT_TRUE(log.ok()) << log.status().message();
  ASSERT_EQ(log->steps.size(), 1u);
  EXPECT_EQ(log->steps[0].allocated_bytes, 5 * kMiB);
  EXPECT_FALSE(log->steps[0].reserved_bytes) << "past the first 4 KiB of a line nothing is read";
}

// torchrun prefixes each rank's lines ("[rank1]:"); loggers write "rank 0 |" or "Device 1:". Each
// names its own series, as "cuda:N" does, instead of all going to device 0.
TEST(ParseFrameworkLog, RankAndDevicePrefixesNameTheDevice) {
  const char* logs[] = {
      "[rank0]: step 0 allocated: 2.00 GB reserved: 4.00 GB\n[rank1]: step 0 allocated: 3.00 GB reserved: 6.00 GB\n",
      "rank 0 | step 0 | allocated: 2.00 GB reserved: 4.00 GB\nrank 1 | step 0 | allocated: 3.00 GB reserved: "
      "6.00 GB\n",
      "Device 0: step 0 allocated: 2.00 GB reserved: 4.00 GB\nDevice 1: step 0 allocated: 3.00 GB reserved: 6.00 GB\n",
  };
  for (const char* text : logs) {
    FrameworkLog log = Parse(text);
    ASSERT_EQ(log.steps.size(), 2u) << text;
    EXPECT_EQ(log.steps[0].device, 0) << text;
    EXPECT_EQ(log.steps[0].allocated_bytes, 2048 * kMiB) << text;
    EXPECT_EQ(log.steps[1].device, 1) << text;
    EXPECT_EQ(log.steps[1].reserved_bytes, 6144 * kMiB) << text;
  }
  FrameworkLog smi = Parse("[rank1]: nvidia-smi memory 3000 MiB allocated: 1 GiB\n");
  ASSERT_EQ(smi.steps.size(), 1u);
  EXPECT_EQ(smi.steps[0].device, 1) << "the driver's figure goes with the rank too";
  EXPECT_EQ(smi.steps[0].driver_used_bytes, 3000 * kMiB);
}

// Other loggers name the rank as a key and value or out of the world size: Lightning's "[rank: 1]",
// "rank=1", "local_rank=1", "global_rank: 1", "rank 1 of 8", "[Rank 1/8]". Before, these lines all
// went to device 0, so two ranks' figures made one series, and a growing rank was not found.
TEST(ParseFrameworkLog, RankKeysAndWorldSizesNameTheRank) {
  const char* forms[] = {"[rank: {}] ",   "rank={} ",     "local_rank={}, ", "global_rank : {} ",
                         "rank {} of 8 ", "[Rank {}/8] ", "LOCAL_RANK={} "};
  for (const char* form : forms) {
    std::string text;
    for (int r = 0; r < 2; ++r) {
      text += fmt::format(fmt::runtime(form), r) +
              fmt::format("step 0 cuda:0 allocated: {}.00 GB reserved: 4.00 GB\n", r + 2);
    }
    FrameworkLog log = Parse(text);
    ASSERT_EQ(log.steps.size(), 2u) << text;
    EXPECT_EQ(log.steps[0].device, 0) << text;
    EXPECT_EQ(log.steps[1].device, 1) << text;
    EXPECT_EQ(log.steps[1].allocated_bytes, 3072 * kMiB) << text;
  }
  // Not a rank: prose with a number after "rank", or a key whose value is not a number.
  for (const char* text :
       {"rank 1 tensors allocated: 2 GiB\n", "rank=first allocated: 2 GiB\n", "ranking 1 of 8 allocated: 2 GiB\n",
        "rank 1 of eight allocated: 2 GiB\n", "free on device: 1.5 GB allocated: 2 GiB\n"}) {
    FrameworkLog log = Parse(text);
    ASSERT_EQ(log.steps.size(), 1u) << text;
    EXPECT_EQ(log.steps[0].device, 0) << text;
  }
}

// torchrun ranks with one GPU each all call it cuda:0: the rank, named first, is the series.
TEST(ParseFrameworkLog, ARankThatCallsItsGpuCuda0IsStillItsOwnSeries) {
  FrameworkLog log = Parse(
      "[rank0]: step 0 cuda:0 allocated: 2.00 GB reserved: 4.00 GB\n"
      "[rank1]: step 0 cuda:0 allocated: 3.00 GB reserved: 6.00 GB\n");
  ASSERT_EQ(log.steps.size(), 2u);
  EXPECT_EQ(log.steps[0].device, 0);
  EXPECT_EQ(log.steps[1].device, 1);
  EXPECT_EQ(log.steps[1].allocated_bytes, 3072 * kMiB);
  FrameworkLog device = Parse("Device 1: cuda:0 allocated: 1 GiB\n");
  ASSERT_EQ(device.steps.size(), 1u);
  EXPECT_EQ(device.steps[0].device, 0) << "a 'Device N:' prefix is not a rank: the device named after it wins";
}

// "allocated: 40%" is a share, not a size: left out and reported, never given the MB of the line.
TEST(ParseFrameworkLog, APercentageIsNotAMemorySize) {
  FrameworkLog log = Parse("allocated: 40% reserved: 4096 MB\n");
  ASSERT_EQ(log.steps.size(), 1u);
  EXPECT_FALSE(log.steps[0].allocated_bytes.has_value());
  EXPECT_EQ(log.steps[0].reserved_bytes, 4096 * kMiB);
  ASSERT_FALSE(log.skipped_examples.empty());
  EXPECT_NE(log.skipped_examples[0].find("is a percentage, not a memory size"), std::string::npos)
      << log.skipped_examples[0];
}

// A metrics CSV logs the maxima beside the current values: a max_/peak_ column is never the value.
TEST(ParseFrameworkLog, MetricsCsvMaximaColumnsAreNotTheValues) {
  FrameworkLog log = Parse(
      "step,memory_allocated,max_memory_allocated,memory_reserved,max_memory_reserved\n"
      "0,2147483648,3221225472,6442450944,7516192768\n");
  ASSERT_EQ(log.steps.size(), 1u);
  EXPECT_EQ(log.steps[0].allocated_bytes, 2147483648u);
  EXPECT_EQ(log.steps[0].reserved_bytes, 6442450944u);
  FrameworkLog peak = Parse("step,peak_allocated_bytes.all.current,allocated_bytes.all.current\n0,99999999,1048576\n");
  ASSERT_EQ(peak.steps.size(), 1u);
  EXPECT_EQ(peak.steps[0].allocated_bytes, 1048576u);
}

// dict(torch.cuda.memory_stats()) printed runs to about 5 KiB, reserved_bytes.all.current near its
// end: the line is read whole. A line longer than what is read says so.
TEST(ParseFrameworkLog, ALongMemoryStatsLineIsReadWhole) {
  std::string line = "{";
  for (int i = 0; line.size() < 5000; ++i) line += "'active_bytes.pool_" + std::to_string(i) + ".freed': 123456, ";
  line += "'allocated_bytes.all.current': 4294967296, 'reserved_bytes.all.current': 10737418240}\n";
  FrameworkLog log = Parse(line);
  ASSERT_EQ(log.steps.size(), 1u);
  EXPECT_EQ(log.steps[0].allocated_bytes, 4294967296u);
  EXPECT_EQ(log.steps[0].reserved_bytes, 10737418240u);
  const std::string cut = "allocated: 1 GiB " + std::string(70 * 1024, '.') + " reserved: 2 GiB\n";
  FrameworkLog c = Parse(cut);
  EXPECT_EQ(c.skipped, 1u);
  ASSERT_EQ(c.skipped_examples.size(), 1u);
  EXPECT_EQ(c.skipped_examples[0], "train.log:1: the line is 71 KiB long; only its first 64 KiB are read");
}

// Python 3.11 and older print memory_stats() as an OrderedDict of tuples.
TEST(ParseFrameworkLog, MemoryStatsAsAnOrderedDictIsRead) {
  const std::string text =
      "OrderedDict([('active.all.current', 1523), ('allocated_bytes.all.current', 4294967296), "
      "('allocated_bytes.all.peak', 8589934592), ('reserved_bytes.all.current', 10737418240)])\n";
  EXPECT_TRUE(IsFrameworkLogHead(text, true));
  FrameworkLog log = Parse(text);
  ASSERT_EQ(log.steps.size(), 1u);
  EXPECT_EQ(log.steps[0].allocated_bytes, 4294967296u);
  EXPECT_EQ(log.steps[0].reserved_bytes, 10737418240u);
}

// A number without a unit takes the unit the line gives it elsewhere, never bytes by default.
TEST(ParseFrameworkLog, ABareNumberTakesTheUnitOfItsLine) {
  struct Case {
    std::string line;
    std::optional<uint64_t> allocated, reserved;
  };
  const Case cases[] = {
      {"step 3: allocated: 2048 MB reserved: 4096", 2048 * kMiB, 4096 * kMiB},
      {"mem allocated/reserved: 2048/4096 MB", 2048 * kMiB, 4096 * kMiB},
      {"Allocated 2048 / 81920 MiB", 2048 * kMiB, std::nullopt},
      {"torch.cuda.memory_allocated(0) 318986240 reserved 759169024", 318986240, 759169024},
  };
  for (const Case& c : cases) {
    FrameworkLog log = Parse(c.line + "\n");
    ASSERT_EQ(log.steps.size(), 1u) << c.line;
    EXPECT_EQ(log.steps[0].allocated_bytes, c.allocated) << c.line;
    EXPECT_EQ(log.steps[0].reserved_bytes, c.reserved) << c.line;
  }
}

// Reserved memory holds the allocated memory: a step that says otherwise read a figure wrong, and
// neither is kept; the report names the line.
TEST(ParseFrameworkLog, AllocatedAboveReservedIsReportedAsAMisread) {
  FrameworkLog log = Parse("allocated: 2 GiB reserved: 1 GiB\nallocated: 1 GiB reserved: 2 GiB\n");
  ASSERT_EQ(log.steps.size(), 1u);
  EXPECT_EQ(log.steps[0].line, 2u);
  EXPECT_EQ(log.skipped, 1u);
  ASSERT_EQ(log.skipped_examples.size(), 1u);
  EXPECT_EQ(log.skipped_examples[0],
            "train.log:1: allocated 2.0 GiB is more than reserved 1.0 GiB, which holds it: one of them is misread (a "
            "number printed without its unit?); neither is read");
  // Every step misread: the error says so, not that no value was found.
  auto all = ParseFrameworkLog("allocated: 2 GiB reserved: 1 GiB\n", "train.log");
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.status().message().find("every step's PyTorch values were dropped as misread (1 of them)"),
            std::string::npos)
      << all.status().message();
  EXPECT_NE(all.status().message().find("train.log:1: allocated 2.0 GiB is more than reserved"), std::string::npos)
      << all.status().message();
}

// nvidia-smi's used memory, not its total, and not a percentage.
TEST(ParseFrameworkLog, TheDriverFigureIsTheUsedMemory) {
  struct Case {
    std::string line;
    uint64_t driver;
  };
  const Case cases[] = {
      {"nvidia-smi GPU 0 memory.total 81559 MiB memory.used 35000 MiB | allocated: 20 GiB", 35000 * kMiB},
      {"nvidia-smi GPU 0 memory 45% (35000 MiB) | allocated: 20 GiB", 35000 * kMiB},
      {"nvidia-smi GPU 0 memory 45.5 % used 35000 MiB | allocated: 20 GiB", 35000 * kMiB},
      {"nvidia-smi memory.free 46559 MiB memory 35000 MiB allocated: 20 GiB", 35000 * kMiB},
      {"nvidia-smi memory 35000 MiB used, 46559 MiB free | allocated: 20 GiB", 35000 * kMiB},
  };
  for (const Case& c : cases) {
    FrameworkLog log = Parse(c.line + "\n");
    ASSERT_EQ(log.steps.size(), 1u) << c.line;
    EXPECT_EQ(log.steps[0].driver_used_bytes, c.driver) << c.line;
  }
  // A figure the words after it call free or total is not the used memory: none is read, rather
  // than the wrong one.
  for (const char* line : {"nvidia-smi memory: 75559 MiB free, 6000 MiB used | allocated: 2 GiB",
                           "nvidia-smi: memory 81559 MiB total, 6000 MiB used | allocated: 2 GiB"}) {
    FrameworkLog log = Parse(std::string(line) + "\n");
    ASSERT_EQ(log.steps.size(), 1u) << line;
    EXPECT_FALSE(log.steps[0].driver_used_bytes.has_value()) << line;
  }
}

// A unit in brackets after the key is the value's unit, not a device.
TEST(ParseFrameworkLog, AUnitInBracketsAfterTheKeyIsTheUnit) {
  FrameworkLog a = Parse("Memory Allocated (GB): 1.5, Reserved (GB): 3.0\n");
  ASSERT_EQ(a.steps.size(), 1u);
  EXPECT_EQ(a.steps[0].allocated_bytes, 1536 * kMiB);
  EXPECT_EQ(a.steps[0].reserved_bytes, 3072 * kMiB);
  FrameworkLog b = Parse("allocated [MB]: 1500.5 reserved (GiB): 2\n");
  ASSERT_EQ(b.steps.size(), 1u);
  EXPECT_EQ(b.steps[0].allocated_bytes, static_cast<uint64_t>(1500.5 * kMiB));
  EXPECT_EQ(b.steps[0].reserved_bytes, 2048 * kMiB);
}

TEST(IsFrameworkLogHead, TakesTrainingLogsAndNeverATrace) {
  EXPECT_TRUE(IsFrameworkLogHead("epoch 1\nMem memory (MB) | allocated: 20.4 | reserved: 26.0\n", true));
  EXPECT_TRUE(IsFrameworkLogHead("torch.cuda.memory_reserved(1) 608174080\n", true));
  EXPECT_TRUE(IsFrameworkLogHead("|   PyTorch CUDA memory summary, device ID 0   |\n", false));
  EXPECT_TRUE(IsFrameworkLogHead("|=====================|\n|   PyTorch CUDA memory summary, device ID 0   |\n", false))
      << "a summary table opens like an nvidia-smi table; its title tells them apart";
  EXPECT_FALSE(
      IsFrameworkLogHead("+-----------------+\n| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15 |\n", false));
  // nvidia-smi's own fields name reserved memory: a --query-gpu CSV is a trace.
  EXPECT_FALSE(IsFrameworkLogHead(
      "timestamp, index, memory.used [MiB], memory.reserved [MiB]\n2026/03/14 10:00:00.000, 0, 1024 MiB, 479 MiB\n",
      true));
  EXPECT_FALSE(IsFrameworkLogHead("1024\n1030\n", true));
  EXPECT_FALSE(IsFrameworkLogHead("loss 0.31 lr 0.001\n", true));
  EXPECT_FALSE(IsFrameworkLogHead("nvidia-smi GPU-0 memory (MB) 2796\n", true)) << "the driver's view alone";
  // nvidia-smi -q names FB memory "Reserved": not PyTorch's.
  EXPECT_FALSE(IsFrameworkLogHead(
      "==============NVSMI LOG==============\n\nFB Memory Usage\n    Total : 81559 MiB\n    Reserved : 408 MiB\n"
      "    Used : 1000 MiB\n",
      true));
  // memory_stats() as JSON on the first line: a log, not a recording.
  EXPECT_TRUE(
      IsFrameworkLogHead("{\"allocated_bytes.all.current\": 318986240, \"reserved_bytes.all.current\": 1}\n", true));
}

}  // namespace
}  // namespace vw::trace
