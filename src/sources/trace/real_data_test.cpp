// Every real time-series capture in the shared data folder (read in place, never copied), parsed
// end to end. Expected numbers were taken from the files with grep/awk/iconv, not from this parser.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "sources/trace/trace_test_util.h"

namespace vw::trace {
namespace {

using namespace testing_util;

// "tests/data/..." is one of the project's own captures; anything else is in the shared folder.
std::string Real(const std::string& name) {
  if (name.rfind("tests/data/", 0) == 0) return std::string(VRAMWATCH_SOURCE_DIR) + "/" + name;
  return std::string(VRAMWATCH_SHARED_DATA) + "/" + name;
}

struct GpuExpect {
  const char* key;
  size_t samples;
  const char* first;  // ISO 8601 as printed with the file's zone flag
  const char* last;
  std::optional<uint64_t> first_used_mib;
  std::optional<uint64_t> last_used_mib;
  std::optional<uint64_t> total_mib;  // of the last sample
  std::optional<uint64_t> max_used_mib;
};

struct RealCase {
  const char* file;
  const char* columns;  // comma-separated --columns, "" for none
  std::optional<double> interval;
  TraceFormat format;
  std::vector<GpuExpect> gpus;
};

class RealTraces : public ::testing::TestWithParam<RealCase> {};

TEST_P(RealTraces, GpuCountSamplesSpanAndValues) {
  const RealCase& c = GetParam();
  const std::string path = Real(c.file);
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing; configure with -DVRAMWATCH_SHARED_DATA=<dir>";
  TraceOptions o;
  o.interval_s = c.interval;
  std::string cols = c.columns;
  for (size_t start = 0; !cols.empty() && start <= cols.size();) {
    size_t comma = cols.find(',', start);
    if (comma == std::string::npos) comma = cols.size();
    o.columns.push_back(cols.substr(start, comma - start));
    start = comma + 1;
  }
  ReadResult r = ReadTrace(path, o);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.format, c.format);
  EXPECT_EQ(r.skipped, 0u);
  std::map<std::string, size_t> per_gpu;
  for (const auto& rec : r.records) ++per_gpu[rec.gpu.key];
  ASSERT_EQ(per_gpu.size(), c.gpus.size());
  for (const GpuExpect& g : c.gpus) {
    SCOPED_TRACE(std::string(c.file) + " gpu " + g.key);
    std::vector<TraceRecord> recs = OfGpu(r.records, g.key);
    ASSERT_EQ(recs.size(), g.samples);
    EXPECT_EQ(Iso(recs.front().sample.t, r.has_zone), g.first);
    EXPECT_EQ(Iso(recs.back().sample.t, r.has_zone), g.last);
    EXPECT_EQ(MiB(recs.front().sample.used_bytes), g.first_used_mib);
    EXPECT_EQ(MiB(recs.back().sample.used_bytes), g.last_used_mib);
    EXPECT_EQ(MiB(recs.back().sample.total_bytes), g.total_mib);
    std::optional<uint64_t> max;
    for (const auto& rec : recs) {
      if (rec.sample.used_bytes) max = std::max(max.value_or(0), *MiB(rec.sample.used_bytes));
    }
    EXPECT_EQ(max, g.max_used_mib);
    for (size_t i = 1; i < recs.size(); ++i) {
      ASSERT_GE(recs[i].sample.t, recs[i - 1].sample.t) << "time goes backwards at sample " << i;
    }
  }
}

const RealCase kRealCases[] = {
    {"ts_balance-budget_multiphase_15s.csv",
     "",
     std::nullopt,
     TraceFormat::kQueryCsv,
     {{"0", 1639, "2026-02-02T01:07:37.100", "2026-02-02T07:57:08.704", 17092, 1047, std::nullopt, 71162}}},
    {"ts_openad_2gpu_plateau_1s.csv",
     "",
     std::nullopt,
     TraceFormat::kQueryCsv,
     {{"0", 473, "2024-11-23T12:23:29.950", "2024-11-23T12:31:28.635", 25073, 25073, 49140, 25073},
      {"1", 473, "2024-11-23T12:23:29.951", "2024-11-23T12:31:28.635", 15, 15, 49140, 15}}},
    {"ts_rpf_ramp_plateau_60s.csv",
     "",
     std::nullopt,
     TraceFormat::kQueryCsv,
     {{"0", 90, "2025-11-26T20:31:15Z", "2025-11-26T22:00:22Z", 1, 10904, 24576, 10904}}},
    {"ts_akshay_repeated_headers_1s.csv",
     "",
     std::nullopt,
     TraceFormat::kQueryCsv,
     {{"0", 224, "2023-06-22T18:56:56.252", "2023-06-22T19:00:45.023", 841, 604, 8192, 890}}},
    {"ts_landct_utf16le_bom.csv",
     "",
     std::nullopt,
     TraceFormat::kQueryCsv,
     {{"0", 434, "2026-08-01T03:59:40.361", "2026-08-01T04:06:58.068", 10549, 321, 11264, 10611}}},
    {"ts_vlmopt_rtx4090_bursts_1s.csv",
     "",
     std::nullopt,
     TraceFormat::kQueryCsv,
     {{"0", 2619, "2026-01-03T15:36:53.507", "2026-01-03T16:24:53.961", 1129, 1141, std::nullopt, 18141}}},
    {"ts_miris_ramp_plateau_release_1s.csv",
     "",
     std::nullopt,
     TraceFormat::kQueryCsv,
     {{"0", 107, "2025-06-13T00:27:52.195", "2025-06-13T00:29:38.248", 1, 1, 32768, 1094}}},
    {"ts_weightedretrain_slow_creep_1s.csv",
     "",
     std::nullopt,
     TraceFormat::kQueryCsv,
     {{"00000000:18:00.0", 254, "2023-03-06T09:53:44.773", "2023-03-06T09:57:57.995", 855, 1, 11264, 1021}}},
    {"ts_omoknuni_noheader_creep.log",
     "utilization.gpu,memory.used",
     1.0,
     TraceFormat::kQueryCsv,
     {{"0", 23646, "1970-01-01T00:00:00", "1970-01-01T06:34:05", 588, 7107, std::nullopt, 7828}}},
    {"ts_simaosantos_noheader_2gpu.log",
     "timestamp,index,utilization.gpu,utilization.memory,memory.used,memory.total",
     std::nullopt,
     TraceFormat::kQueryCsv,
     {{"0", 940, "2025-09-21T16:12:24.315", "2025-09-21T18:39:39.476", 4, 4, 24564, 10537},
      {"1", 940, "2025-09-21T16:12:24.318", "2025-09-21T18:39:39.479", 4, 4, 24564, 10417}}},
    {"ts_erag_table_series_22h.log",
     "",
     std::nullopt,
     TraceFormat::kSmiTable,
     {{"0", 1261, "2025-05-04T04:27:32", "2025-05-05T02:52:53", 1, 17014, 49152, 17014}}},
    {"ts_slurmmwe_table_series_l40s.log",
     "",
     std::nullopt,
     TraceFormat::kSmiTable,
     {{"0", 1575, "2024-10-29T19:00:23", "2024-10-29T19:15:16", 0, 11947, 46068, 11950}}},
    {"dmon_glsltest_pucvmet.log",
     "",
     1.0,
     TraceFormat::kDmon,
     {{"0", 10, "1970-01-01T00:00:00", "1970-01-01T00:00:09", 145, 145, std::nullopt, 145}}},
    {"dmon_mybiome_jpg_ofa_dash.log",
     "",
     2.0,
     TraceFormat::kDmon,
     {{"0", 27, "1970-01-01T00:00:00", "1970-01-01T00:00:52", std::nullopt, std::nullopt, std::nullopt, std::nullopt}}},
};

std::string CaseName(const ::testing::TestParamInfo<RealCase>& p) {
  std::string n = p.param.file;
  if (n.rfind("tests/data/", 0) == 0) n = n.substr(11);
  for (char& ch : n) {
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(SharedData, RealTraces, ::testing::ValuesIn(kRealCases), CaseName);

// The project's captures on an H200 with driver 580 (tests/data/SOURCES.md): its query CSV with
// every memory field, the dmon/pmon column sets of that driver, and its nvidia-smi table.
const RealCase kProjectCases[] = {
    {"tests/data/h200-driver580/query-gpu.csv",
     "",
     std::nullopt,
     TraceFormat::kQueryCsv,
     {{"0", 24, "2026-11-29T19:11:38.469", "2026-11-29T19:11:44.266", 1743, 2511, 143771, 2511}}},
    {"tests/data/h200-driver580/query-gpu-nounits.csv",
     "timestamp,index,memory.used,memory.total",
     std::nullopt,
     TraceFormat::kQueryCsv,
     {{"0", 12, "2026-11-29T19:11:44.540", "2026-11-29T19:11:50.043", 2511, 2575, 143771, 2575}}},
    {"tests/data/h200-driver580/dmon.log",
     "",
     std::nullopt,
     TraceFormat::kDmon,
     {{"0", 5, "2026-11-29T19:11:50", "2026-11-29T19:11:54", 2575, 2575, std::nullopt, 2575}}},
    {"tests/data/h200-driver580/pmon.log",
     "",
     std::nullopt,
     TraceFormat::kPmon,
     {{"0", 5, "2026-11-29T19:11:54", "2026-11-29T19:11:58", std::nullopt, std::nullopt, std::nullopt, std::nullopt}}},
    {"tests/data/h200-driver580/nvidia-smi-tables.log",
     "",
     std::nullopt,
     TraceFormat::kSmiTable,
     {{"0", 3, "2026-11-29T19:11:58", "2026-11-29T19:12:00", 2575, 2575, 143771, 2575}}},
};

INSTANTIATE_TEST_SUITE_P(ProjectCaptures, RealTraces, ::testing::ValuesIn(kProjectCases), CaseName);

// Driver 580's pmon: the holder with its fb MiB in every sample; its table: the same process.
TEST(RealTraces, H200Driver580ProcessColumns) {
  for (const char* file : {"tests/data/h200-driver580/pmon.log", "tests/data/h200-driver580/nvidia-smi-tables.log"}) {
    SCOPED_TRACE(file);
    ReadResult r = ReadTrace(Real(file), TraceOptions{});
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    ASSERT_FALSE(r.records.empty());
    for (const TraceRecord& rec : r.records) {
      ASSERT_TRUE(rec.sample.processes.has_value());
      ASSERT_EQ(rec.sample.processes->size(), 1u);
      const ProcessMemory& p = rec.sample.processes->front();
      EXPECT_EQ(p.pid, 1073);
      EXPECT_EQ(MiB(p.used_bytes), 2566u);
      EXPECT_THAT(p.command, ::testing::HasSubstr("gpu-smoke-hold"));
    }
  }
}

// Process tables of the two real table series: one python process or "No running processes found".
TEST(RealTraces, TableSeriesProcessLists) {
  struct Want {
    const char* file;
    size_t with_one;
    size_t with_none;
    int64_t last_pid;
    uint64_t last_mib;
  };
  for (const Want& w : {Want{"ts_erag_table_series_22h.log", 1194, 67, 3611303, 17010},
                        Want{"ts_slurmmwe_table_series_l40s.log", 1412, 163, 3796615, 11944}}) {
    SCOPED_TRACE(w.file);
    ReadResult r = ReadTrace(Real(w.file), {});
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    size_t one = 0, none = 0;
    const ProcessMemory* last = nullptr;
    for (const auto& rec : r.records) {
      ASSERT_TRUE(rec.sample.processes.has_value());
      if (rec.sample.processes->empty()) ++none;
      if (rec.sample.processes->size() == 1) {
        ++one;
        last = &rec.sample.processes->front();
      }
    }
    EXPECT_EQ(one, w.with_one);
    EXPECT_EQ(none, w.with_none);
    ASSERT_NE(last, nullptr);
    EXPECT_EQ(last->pid, w.last_pid);
    EXPECT_EQ(last->command, "python");
    EXPECT_EQ(last->type, "C");
    EXPECT_EQ(last->used_bytes, w.last_mib * kMiBBytes);
  }
}

// One section of an nvidia_gpu_exporter capture ("# load :: pmon (per-process monitor)"), written
// to a temporary file.
std::string CutSection(const std::string& capture, const std::string& title, const std::string& out_name) {
  std::ifstream in(Real(capture));
  std::string line, text;
  int state = 0, skip = 0;
  while (std::getline(in, line)) {
    if (state == 0 && line == title) {
      state = 1;
      skip = 2;  // "# $ command" and the "####" rule
      continue;
    }
    if (state == 1) {
      if (skip > 0) {
        --skip;
        continue;
      }
      if (line.rfind("####", 0) == 0) break;
      text += line + "\n";
    }
  }
  EXPECT_FALSE(text.empty()) << "section '" << title << "' not found in " << capture;
  return WriteTemp(out_name, text);
}

TEST(RealCaptures, H100MigTablesQueryCsvPmonAndDmon) {
  const std::string cap = "capture_h100_mig_590.txt";
  ReadResult idle = ReadTrace(CutSection(cap, "# idle :: nvidia-smi (default table)", "h100_idle_table.log"), {});
  ASSERT_TRUE(idle.status.ok()) << idle.status.ToString();
  ASSERT_EQ(idle.records.size(), 1u) << "the MIG devices table adds no GPUs";
  EXPECT_EQ(Iso(idle.records[0].sample.t), "2026-07-14T09:00:26");
  EXPECT_EQ(MiB(idle.records[0].sample.used_bytes), 59u);
  EXPECT_EQ(MiB(idle.records[0].sample.total_bytes), 81559u);
  EXPECT_FALSE(idle.records[0].sample.gpu_util_ratio.has_value());
  EXPECT_TRUE(idle.records[0].sample.processes->empty());

  ReadResult load = ReadTrace(CutSection(cap, "# load :: nvidia-smi (default table)", "h100_load_table.log"), {});
  ASSERT_TRUE(load.status.ok()) << load.status.ToString();
  ASSERT_EQ(load.records.size(), 1u);
  EXPECT_EQ(MiB(load.records[0].sample.used_bytes), 11125u);
  ASSERT_EQ(load.records[0].sample.processes->size(), 3u);
  EXPECT_EQ((*load.records[0].sample.processes)[2].pid, 21198);
  EXPECT_EQ((*load.records[0].sample.processes)[2].command, "./gpu_burn");
  EXPECT_EQ(MiB((*load.records[0].sample.processes)[2].used_bytes), 7484u);
  // Its MIG GPU instance (GI 2, the MIG devices table's first row): its room is the instance's.
  EXPECT_EQ((*load.records[0].sample.processes)[2].gpu_instance_id, 2u);
  EXPECT_EQ(MiB((*load.records[0].sample.processes)[2].instance_used_bytes), 11091u);
  EXPECT_EQ(MiB((*load.records[0].sample.processes)[2].instance_total_bytes), 40448u);

  ReadResult csv =
      ReadTrace(CutSection(cap, "# load :: query-gpu (csv, what the exporter parses)", "h100_load.csv"), {});
  ASSERT_TRUE(csv.status.ok()) << csv.status.ToString();
  ASSERT_EQ(csv.records.size(), 1u);
  const TraceRecord& q = csv.records[0];
  EXPECT_EQ(q.gpu.key, "0");
  EXPECT_EQ(q.gpu.uuid, "GPU-00000000-0000-0000-0000-000000000000");
  EXPECT_EQ(q.gpu.pci_bus_id, "00000000:00:09.0");
  EXPECT_EQ(Iso(q.sample.t), "2026-07-14T09:00:44.579");
  EXPECT_EQ(MiB(q.sample.used_bytes), 11125u);
  EXPECT_EQ(MiB(q.sample.free_bytes), 69956u);
  EXPECT_EQ(MiB(q.sample.reserved_bytes), 479u);
  EXPECT_FALSE(q.sample.gpu_util_ratio.has_value()) << "[N/A] under MIG";

  TraceOptions every1;
  every1.interval_s = 1;
  ReadResult pmon = ReadTrace(CutSection(cap, "# load :: pmon (per-process monitor)", "h100_load_pmon.log"), every1);
  ASSERT_TRUE(pmon.status.ok()) << pmon.status.ToString();
  ASSERT_EQ(pmon.records.size(), 5u);  // 15 rows = 5 instants of 3 processes
  for (const auto& rec : pmon.records) {
    ASSERT_EQ(rec.sample.processes->size(), 3u);
    EXPECT_EQ((*rec.sample.processes)[0].pid, 21180);
    EXPECT_EQ((*rec.sample.processes)[0].command, "memhog");
    EXPECT_FALSE((*rec.sample.processes)[0].sm_util_ratio.has_value());
  }
  EXPECT_EQ(pmon.records[4].sample.t, 4.0);

  ReadResult idle_pmon =
      ReadTrace(CutSection(cap, "# idle :: pmon (per-process monitor)", "h100_idle_pmon.log"), every1);
  ASSERT_TRUE(idle_pmon.status.ok()) << idle_pmon.status.ToString();
  ASSERT_EQ(idle_pmon.records.size(), 5u);
  EXPECT_TRUE(idle_pmon.records[0].sample.processes->empty());

  ReadResult dmon =
      ReadTrace(CutSection(cap, "# load :: dmon (per-device monitor, incl. PCIe rx/tx)", "h100_load_dmon.log"), every1);
  ASSERT_TRUE(dmon.status.ok()) << dmon.status.ToString();
  ASSERT_EQ(dmon.records.size(), 5u);
  EXPECT_FALSE(dmon.records[0].sample.used_bytes.has_value()) << "this dmon has no fb column";
  EXPECT_FALSE(dmon.records[0].sample.gpu_util_ratio.has_value()) << "sm is '-' under MIG";
}

TEST(RealCaptures, Windows2080WddmTableAndPmon) {
  const std::string cap = "capture_windows_2080s_610.txt";
  ReadResult load = ReadTrace(CutSection(cap, "# load :: nvidia-smi (default table)", "win_load_table.log"), {});
  ASSERT_TRUE(load.status.ok()) << load.status.ToString();
  ASSERT_EQ(load.records.size(), 1u);
  EXPECT_EQ(Iso(load.records[0].sample.t), "2026-06-24T10:17:56");
  EXPECT_EQ(MiB(load.records[0].sample.used_bytes), 1366u);
  EXPECT_EQ(MiB(load.records[0].sample.total_bytes), 8192u);
  EXPECT_DOUBLE_EQ(*load.records[0].sample.gpu_util_ratio, 0.07);
  ASSERT_EQ(load.records[0].sample.processes->size(), 21u);
  for (const auto& p : *load.records[0].sample.processes) EXPECT_FALSE(p.used_bytes.has_value()) << p.command;

  ReadResult idle = ReadTrace(CutSection(cap, "# idle :: nvidia-smi (default table)", "win_idle_table.log"), {});
  ASSERT_TRUE(idle.status.ok()) << idle.status.ToString();
  ASSERT_EQ(idle.records[0].sample.processes->size(), 19u);

  ReadResult csv =
      ReadTrace(CutSection(cap, "# idle :: query-gpu (csv, what the exporter parses)", "win_idle.csv"), {});
  ASSERT_TRUE(csv.status.ok()) << csv.status.ToString();
  ASSERT_EQ(csv.records.size(), 1u);
  EXPECT_EQ(MiB(csv.records[0].sample.used_bytes), 797u);
  EXPECT_EQ(MiB(csv.records[0].sample.reserved_bytes), 205u);
  EXPECT_EQ(csv.records[0].sample.gpu_util_ratio, 0.0);

  TraceOptions every1;
  every1.interval_s = 1;
  ReadResult pmon = ReadTrace(CutSection(cap, "# load :: pmon (per-process monitor)", "win_load_pmon.log"), every1);
  ASSERT_TRUE(pmon.status.ok()) << pmon.status.ToString();
  ASSERT_EQ(pmon.records.size(), 5u);  // 105 rows = 5 instants of 21 processes
  for (const auto& rec : pmon.records) EXPECT_EQ(rec.sample.processes->size(), 21u);
  auto ff = std::find_if(pmon.records[0].sample.processes->begin(), pmon.records[0].sample.processes->end(),
                         [](const ProcessMemory& p) { return p.pid == 13820; });
  ASSERT_NE(ff, pmon.records[0].sample.processes->end());
  EXPECT_EQ(ff->command, "ffmpeg.exe");
  EXPECT_DOUBLE_EQ(*ff->sm_util_ratio, 0.07);
}

}  // namespace
}  // namespace vw::trace
