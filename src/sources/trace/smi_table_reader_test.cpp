#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sources/trace/trace_test_util.h"

namespace vw::trace {
namespace {

using ::testing::HasSubstr;
using namespace testing_util;

// Driver 550-style table (new header), two GPUs, processes on GPU 1 only.
const char* kTable550 =
    "Tue Oct 29 19:00:23 2024       \n"
    "+-----------------------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |\n"
    "|-----------------------------------------+------------------------+----------------------+\n"
    "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
    "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
    "|                                         |                        |               MIG M. |\n"
    "|=========================================+========================+======================|\n"
    "|   0  NVIDIA L40S                    On  |   00000000:4A:00.0 Off |                    0 |\n"
    "| N/A   27C    P8             32W /  350W |       3MiB /  46068MiB |      0%      Default |\n"
    "|                                         |                        |                  N/A |\n"
    "+-----------------------------------------+------------------------+----------------------+\n"
    "|   1  NVIDIA L40S                    On  |   00000000:61:00.0 Off |                    0 |\n"
    "| N/A   56C    P0            164W /  350W |   11948MiB /  46068MiB |     97%      Default |\n"
    "|                                         |                        |                  N/A |\n"
    "+-----------------------------------------+------------------------+----------------------+\n"
    "                                                                                         \n"
    "+-----------------------------------------------------------------------------------------+\n"
    "| Processes:                                                                              |\n"
    "|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |\n"
    "|        ID   ID                                                               Usage      |\n"
    "|=========================================================================================|\n"
    "|    1   N/A  N/A   3796615      C   python                                      11944MiB |\n"
    "|    1   N/A  N/A   3796616      G   /usr/lib/xorg/Xorg                              N/A  |\n"
    "+-----------------------------------------------------------------------------------------+\n";

// Driver 390-era layout inside a container: no GI/CI columns, no MIG M. line.
const char* kTable390 =
    "+-----------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 390.48                 Driver Version: 390.59                    |\n"
    "|-------------------------------+----------------------+----------------------+\n"
    "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
    "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n"
    "|===============================+======================+======================|\n"
    "|   0  Tesla M40 24GB      On   | 00000000:02:00.0 Off |                    0 |\n"
    "| N/A   37C    P0   113W / 250W |    814MiB / 22945MiB |     78%      Default |\n"
    "+-------------------------------+----------------------+----------------------+\n"
    "                                                                               \n"
    "+-----------------------------------------------------------------------------+\n"
    "| Processes:                                                       GPU Memory |\n"
    "|  GPU       PID   Type   Process name                             Usage      |\n"
    "|=============================================================================|\n"
    "|    0     28290    C   python                                        1012MiB |\n"
    "+-----------------------------------------------------------------------------+\n";

// Windows 610 layout: KMD Version header, Driver-Model column, N/A process memory, C+G types.
const char* kTableWindows =
    "Wed Jun 24 10:17:41 2026       \n"
    "+-----------------------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 610.62                 KMD Version: 610.62        CUDA UMD Version: 13.3     |\n"
    "+-----------------------------------------+------------------------+----------------------+\n"
    "| GPU  Name                  Driver-Model | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
    "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
    "|                                         |                        |               MIG M. |\n"
    "|=========================================+========================+======================|\n"
    "|   0  NVIDIA GeForce RTX 2080 ...  WDDM  |   00000000:0C:00.0  On |                  N/A |\n"
    "| 38%   39C    P8             37W /  250W |     797MiB /   8192MiB |      0%      Default |\n"
    "|                                         |                        |                  N/A |\n"
    "+-----------------------------------------+------------------------+----------------------+\n"
    "\n"
    "+-----------------------------------------------------------------------------------------+\n"
    "| Processes:                                                                              |\n"
    "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |\n"
    "|        ID   ID                                                               Usage      |\n"
    "|=========================================================================================|\n"
    "|    0   N/A  N/A            2140    C+G   C:\\Windows\\System32\\dwm.exe           N/A      |\n"
    "|    0   N/A  N/A           15964    C+G   ...IA App\\CEF\\NVIDIA Overlay.exe      N/A      |\n"
    "+-----------------------------------------------------------------------------------------+\n";

// MIG enabled: GPU-Util N/A, a MIG devices table (each GPU instance's memory), processes with GI/CI
// numbers.
const char* kTableMig =
    "Tue Jul 14 09:00:43 2026       \n"
    "+-----------------------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 590.48.01              Driver Version: 590.48.01      CUDA Version: 13.1     |\n"
    "+-----------------------------------------+------------------------+----------------------+\n"
    "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
    "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
    "|                                         |                        |               MIG M. |\n"
    "|=========================================+========================+======================|\n"
    "|   0  NVIDIA H100 80GB HBM3          On  |   00000000:00:09.0 Off |                   On |\n"
    "| N/A   52C    P0            432W /  700W |   11125MiB /  81559MiB |     N/A      Default |\n"
    "|                                         |                        |              Enabled |\n"
    "+-----------------------------------------+------------------------+----------------------+\n"
    "\n"
    "+-----------------------------------------------------------------------------------------+\n"
    "| MIG devices:                                                                            |\n"
    "+------------------+----------------------------------+-----------+-----------------------+\n"
    "| GPU  GI  CI  MIG |              Shared Memory-Usage |        Vol|        Shared         |\n"
    "|      ID  ID  Dev |                Shared BAR1-Usage | SM     Unc| CE ENC  DEC  OFA  JPG |\n"
    "|                  |                                  |        ECC|                       |\n"
    "|==================+==================================+===========+=======================|\n"
    "|  0    2   0   0  |           11091MiB / 40448MiB    | 60      0 |  3   0    3    0    3 |\n"
    "|                  |               0MiB / 24739MiB    |           |                       |\n"
    "+------------------+----------------------------------+-----------+-----------------------+\n"
    "\n"
    "+-----------------------------------------------------------------------------------------+\n"
    "| Processes:                                                                              |\n"
    "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |\n"
    "|        ID   ID                                                               Usage      |\n"
    "|=========================================================================================|\n"
    "|    0    2    0            21180      C   /root/tools/memhog                     2296MiB |\n"
    "|    0    2    0            21198      C   ./gpu_burn                             7484MiB |\n"
    "+-----------------------------------------------------------------------------------------+\n";

const char* kNoProcesses =
    "+-----------------------------------------------------------------------------------------+\n"
    "| Processes:                                                                              |\n"
    "|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |\n"
    "|        ID   ID                                                               Usage      |\n"
    "|=========================================================================================|\n"
    "|  No running processes found                                                             |\n"
    "+-----------------------------------------------------------------------------------------+\n";

// The GPU part of a 565 table with the given used MiB, for building series.
std::string Table565(int used_mib) {
  return std::string(
             "+-----------------------------------------------------------------------------------------+\n"
             "| NVIDIA-SMI 565.57.01              Driver Version: 565.57.01      CUDA Version: 12.7     |\n"
             "|-----------------------------------------+------------------------+----------------------+\n"
             "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
             "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
             "|                                         |                        |               MIG M. |\n"
             "|=========================================+========================+======================|\n"
             "|   0  Quadro RTX 8000                On  |   00000000:1D:00.0 Off |                  Off |\n") +
         "| 33%   31C    P8             31W /  260W |   " + std::to_string(used_mib) +
         "MiB /  49152MiB |      0%      Default |\n"
         "|                                         |                        |                  N/A |\n"
         "+-----------------------------------------+------------------------+----------------------+\n"
         "                                                                                         \n" +
         kNoProcesses;
}

TEST(SmiTableReader, NewLayoutTwoGpusWithProcesses) {
  ReadResult r = ReadText(kTable550, {}, "t550.log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.format, TraceFormat::kSmiTable);
  ASSERT_EQ(r.records.size(), 2u);
  const TraceRecord& g0 = r.records[0];
  const TraceRecord& g1 = r.records[1];
  EXPECT_EQ(g0.gpu.key, "0");
  EXPECT_EQ(g0.gpu.name, "NVIDIA L40S");
  EXPECT_EQ(g0.gpu.pci_bus_id, "00000000:4A:00.0");
  EXPECT_EQ(Iso(g0.sample.t), "2024-10-29T19:00:23");
  EXPECT_EQ(g0.sample.used_bytes, 3 * kMiBBytes);
  EXPECT_EQ(g0.sample.total_bytes, 46068 * kMiBBytes);
  EXPECT_EQ(g0.sample.gpu_util_ratio, 0.0);
  ASSERT_TRUE(g0.sample.processes.has_value());
  EXPECT_TRUE(g0.sample.processes->empty());
  EXPECT_EQ(g1.sample.used_bytes, 11948 * kMiBBytes);
  EXPECT_DOUBLE_EQ(*g1.sample.gpu_util_ratio, 0.97);
  ASSERT_EQ(g1.sample.processes->size(), 2u);
  EXPECT_EQ((*g1.sample.processes)[0].pid, 3796615);
  EXPECT_EQ((*g1.sample.processes)[0].type, "C");
  EXPECT_EQ((*g1.sample.processes)[0].command, "python");
  EXPECT_EQ((*g1.sample.processes)[0].used_bytes, 11944 * kMiBBytes);
  EXPECT_EQ((*g1.sample.processes)[1].command, "/usr/lib/xorg/Xorg");
  EXPECT_FALSE((*g1.sample.processes)[1].used_bytes.has_value());
}

TEST(SmiTableReader, OldLayoutWithoutGiCiColumns) {
  TraceOptions o;
  o.interval_s = 2;
  ReadResult r = ReadText(kTable390, o, "t390.log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].gpu.name, "Tesla M40 24GB");
  EXPECT_EQ(r.records[0].sample.used_bytes, 814 * kMiBBytes);
  EXPECT_DOUBLE_EQ(*r.records[0].sample.gpu_util_ratio, 0.78);
  ASSERT_EQ(r.records[0].sample.processes->size(), 1u);
  EXPECT_EQ((*r.records[0].sample.processes)[0].pid, 28290);
  EXPECT_EQ((*r.records[0].sample.processes)[0].used_bytes, 1012 * kMiBBytes);
  EXPECT_TRUE(r.synthetic);
}

TEST(SmiTableReader, WindowsKmdLayoutAndNaProcessMemory) {
  ReadResult r = ReadText(kTableWindows, {}, "twin.log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].gpu.name, "NVIDIA GeForce RTX 2080 ...");
  EXPECT_EQ(r.records[0].sample.used_bytes, 797 * kMiBBytes);
  ASSERT_EQ(r.records[0].sample.processes->size(), 2u);
  const ProcessMemory& p = (*r.records[0].sample.processes)[1];
  EXPECT_EQ(p.type, "C+G");
  EXPECT_EQ(p.command, "...IA App\\CEF\\NVIDIA Overlay.exe");
  EXPECT_FALSE(p.used_bytes.has_value());
}

// nvidia-smi prints ERR! in a cell it could not read (a failing GPU, just when its trace matters):
// missing, as N/A is, not an error that stops the whole file.
TEST(SmiTableReader, ErrInACellIsMissing) {
  std::string text = kTable550;
  const std::string util = "     97%      Default";
  ASSERT_NE(text.find(util), std::string::npos);
  text.replace(text.find(util), util.size(), "    ERR!      Default");
  ReadResult r = ReadText(text, {}, "terr.log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[1].sample.used_bytes, 11948 * kMiBBytes);
  EXPECT_FALSE(r.records[1].sample.gpu_util_ratio.has_value());
}

TEST(SmiTableReader, MigTableGivesEachProcessItsInstanceAndUtilNaIsMissing) {
  ReadResult r = ReadText(kTableMig, {}, "tmig.log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 1u) << "MIG device rows are not GPUs";
  EXPECT_EQ(r.records[0].sample.used_bytes, 11125 * kMiBBytes);
  EXPECT_EQ(r.records[0].sample.total_bytes, 81559 * kMiBBytes) << "the GPU is the card, not an instance";
  EXPECT_FALSE(r.records[0].sample.gpu_util_ratio.has_value());
  ASSERT_EQ(r.records[0].sample.processes->size(), 2u);
  const ProcessMemory& p = (*r.records[0].sample.processes)[1];
  EXPECT_EQ(p.pid, 21198);
  EXPECT_EQ(p.gpu_instance_id, 2u);
  EXPECT_EQ(p.instance_used_bytes, 11091 * kMiBBytes);
  EXPECT_EQ(p.instance_total_bytes, 40448 * kMiBBytes) << "the first row's memory, not the BAR1 line below it";
}

// Two GPU instances, the first with two compute instances, and a process on each; a process
// whose GI has no row keeps no instance memory. nvidia-smi prints a GPU instance's memory once:
// the rows of its further compute instances leave that cell blank (it spans them).
TEST(SmiTableReader, MigInstancesAreMatchedByGpuInstanceId) {
  std::string text = kTableMig;
  const std::string first_row_end =
      "|                  |               0MiB / 24739MiB    |           |                       |\n"
      "+------------------+----------------------------------+-----------+-----------------------+\n";
  ASSERT_NE(text.find(first_row_end), std::string::npos);
  text.replace(text.find(first_row_end), first_row_end.size(),
               "|                  |               0MiB / 24739MiB    |           |                       |\n"
               "+------------------+                                  +-----------+-----------------------+\n"
               "|  0    2   1   1  |                                  | 60      0 |  3   0    3    0    3 |\n"
               "|                  |                                  |           |                       |\n"
               "+------------------+----------------------------------+-----------+-----------------------+\n"
               "|  0    9   0   2  |             512MiB /  9984MiB    | 16      0 |  1   0    1    0    1 |\n"
               "|                  |               0MiB /  6184MiB    |           |                       |\n"
               "+------------------+----------------------------------+-----------+-----------------------+\n");
  const std::string last_proc =
      "|    0    2    0            21198      C   ./gpu_burn                             7484MiB |\n";
  ASSERT_NE(text.find(last_proc), std::string::npos);
  text.insert(text.find(last_proc) + last_proc.size(),
              "|    0    2    1            21199      C   ./gpu_burn                              100MiB |\n"
              "|    0    9    0            30001      C   python serve.py                         500MiB |\n"
              "|    0   11    0            30002      C   python other.py                          10MiB |\n");
  ReadResult r = ReadText(text, {}, "tmig2.log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 1u);
  const std::vector<ProcessMemory>& procs = *r.records[0].sample.processes;
  ASSERT_EQ(procs.size(), 5u);
  EXPECT_EQ(procs[0].instance_total_bytes, 40448 * kMiBBytes);
  EXPECT_EQ(procs[2].pid, 21199);
  EXPECT_EQ(procs[2].instance_used_bytes, 11091 * kMiBBytes) << "compute instance 1 shares GI 2's memory";
  EXPECT_EQ(procs[2].instance_total_bytes, 40448 * kMiBBytes);
  EXPECT_EQ(procs[3].gpu_instance_id, 9u);
  EXPECT_EQ(procs[3].instance_used_bytes, 512 * kMiBBytes);
  EXPECT_EQ(procs[3].instance_total_bytes, 9984 * kMiBBytes);
  EXPECT_EQ(procs[4].gpu_instance_id, 11u);
  EXPECT_FALSE(procs[4].instance_total_bytes.has_value()) << "no MIG row for GI 11";
}

// A MIG devices table with no devices, and one whose memory reads N/A: the file reads, and the
// processes carry no instance memory (their room is the card's).
TEST(SmiTableReader, MigTableWithoutDevicesOrMemoryLeavesTheInstanceUnknown) {
  std::string text = kTableMig;
  const std::string mem = "11091MiB / 40448MiB";
  ASSERT_NE(text.find(mem), std::string::npos);
  text.replace(text.find(mem), mem.size(), "     N/A /      N/A");
  ReadResult na = ReadText(text, {}, "tna.log");
  ASSERT_TRUE(na.status.ok()) << na.status.ToString();
  const ProcessMemory& p = (*na.records[0].sample.processes)[0];
  EXPECT_EQ(p.gpu_instance_id, 2u);
  EXPECT_FALSE(p.instance_used_bytes.has_value());
  EXPECT_FALSE(p.instance_total_bytes.has_value());

  std::string none = kTableMig;
  const size_t from = none.find("|  0    2   0   0  |");
  const size_t to = none.find("\n\n", from);
  ASSERT_NE(from, std::string::npos);
  none.replace(from, to - from,
               "|  No MIG devices found                                                                   |\n"
               "+-----------------------------------------------------------------------------------------+");
  ReadResult empty = ReadText(none, {}, "tnone.log");
  ASSERT_TRUE(empty.status.ok()) << empty.status.ToString();
  ASSERT_EQ(empty.records.size(), 1u);
  EXPECT_FALSE((*empty.records[0].sample.processes)[0].instance_total_bytes.has_value());
}

TEST(SmiTableReader, MigDeviceRowWithoutItsIdsIsAnErrorNamingTheLine) {
  std::string text = kTableMig;
  const std::string row = "|  0    2   0   0  |";
  ASSERT_NE(text.find(row), std::string::npos);
  text.replace(text.find(row), row.size(), "|  0    x   0   0  |");
  ReadResult r = ReadText(text, {}, "tbad.log");
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("tbad.log:21:"), std::string::npos) << r.status.message();
  EXPECT_NE(r.status.message().find("a MIG device row"), std::string::npos) << r.status.message();
}

// A GPU without MIG lists processes with GI and CI as N/A: they carry no instance.
TEST(SmiTableReader, GiColumnNaIsNoInstance) {
  std::string text = kTableMig;
  const std::string row = "|    0    2    0            21180";
  ASSERT_NE(text.find(row), std::string::npos);
  text.replace(text.find(row), row.size(), "|    0  N/A  N/A            21180");
  ReadResult r = ReadText(text, {}, "tna.log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  const ProcessMemory& p = (*r.records[0].sample.processes)[0];
  EXPECT_EQ(p.pid, 21180);
  EXPECT_FALSE(p.gpu_instance_id.has_value());
  EXPECT_FALSE(p.instance_total_bytes.has_value());
}

TEST(SmiTableReader, SeriesWithDateBannersAndBackToBack) {
  // `==== date ====` banners, a bare `date` line, and tables back to back with their own clock line.
  std::string text = "==== Sun May  4 04:27:32 AM EDT 2025 ====\n" + Table565(1) +
                     "==== Sun May  4 04:27:55 PM EDT 2025 ====\n" + Table565(488) +
                     "Mon May  5 02:52:53 2025       \n" + Table565(17014);
  ReadResult r = ReadText(text, {}, "series.log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(Iso(r.records[0].sample.t), "2025-05-04T04:27:32");
  EXPECT_EQ(Iso(r.records[1].sample.t), "2025-05-04T16:27:55");
  EXPECT_EQ(Iso(r.records[2].sample.t), "2025-05-05T02:52:53");
  EXPECT_EQ(r.records[2].sample.used_bytes, 17014 * kMiBBytes);
  EXPECT_TRUE(r.records[0].sample.processes->empty());
}

TEST(SmiTableReader, TablesWithoutClockNeedInterval) {
  ReadResult r = ReadText(Table565(5) + Table565(6), {}, "noclock.log");
  ASSERT_FALSE(r.status.ok());
  EXPECT_THAT(r.status.message(), HasSubstr("these nvidia-smi tables carry no time"));
  EXPECT_THAT(r.status.message(), HasSubstr("--interval"));
  TraceOptions o;
  o.interval_s = 3;
  r = ReadText(Table565(5) + Table565(6), o, "noclock.log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[1].sample.t, 3.0);
}

TEST(SmiTableReader, WatchHeaderGivesTheTime) {
  std::string text = "Every 2.0s: nvidia-smi                    node1: Tue Oct 29 19:00:23 2024\n\n" + Table565(7);
  ReadResult r = ReadText(text, {}, "watch.log");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(Iso(r.records[0].sample.t), "2024-10-29T19:00:23");
}

struct TableErrorCase {
  const char* name;
  std::string text;
  const char* message;
};

class SmiTableErrors : public ::testing::TestWithParam<TableErrorCase> {};

TEST_P(SmiTableErrors, NameLineColumnAndExpectation) {
  TraceOptions o;
  o.interval_s = 1;
  ReadResult r = ReadText(GetParam().text, o, "tbl.log");
  ASSERT_FALSE(r.status.ok());
  EXPECT_THAT(r.status.message(), HasSubstr(GetParam().message));
}

const TableErrorCase kTableErrors[] = {
    {"stray_text", Table565(1) + "hello there\n",
     "tbl.log:20:1: expected an nvidia-smi table line or a date line, got "
     "'hello there'"},
    {"bad_gpu_row",
     "+-----+\n| NVIDIA-SMI 565.57.01   Driver Version: 565.57.01 |\n|====+====+====|\n|  X  Quadro  On | 0000 | Off "
     "|\n",
     "tbl.log:4:4: expected a GPU row"},
    {"bad_process_pid", std::string(kTable390).replace(std::string(kTable390).find("28290"), 5, "2829x"),
     "tbl.log:15:12: expected a PID, got '2829x'"},
    {"bad_util", std::string(kTable390).replace(std::string(kTable390).find("78%"), 3, "7x%"),
     "tbl.log:8:62: expected GPU-Util as a percentage or N/A, got '7x%'"},
};

INSTANTIATE_TEST_SUITE_P(Errors, SmiTableErrors, ::testing::ValuesIn(kTableErrors),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace vw::trace
