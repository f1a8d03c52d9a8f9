#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>

#include "sources/trace/recording_writer.h"
#include "sources/trace/trace_test_util.h"

namespace vw::trace {
namespace {

using ::testing::HasSubstr;
using namespace testing_util;

TraceRecord Sample(double t, const std::string& key, std::optional<uint64_t> used) {
  TraceRecord r;
  r.gpu.key = key;
  r.gpu.index = std::stoi(key);
  r.gpu.uuid = "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f6" + key;
  r.gpu.pci_bus_id = "00000000:3B:00.0";
  r.gpu.name = "NVIDIA H100 80GB HBM3";
  r.sample.t = t;
  r.sample.used_bytes = used;
  r.sample.total_bytes = 81559 * kMiBBytes;
  return r;
}

TEST(Recording, WriterOutputReadsBackExactly) {
  const std::string path = TempPath("rec.jsonl");
  {
    RecordingHeader h;
    h.started = 1784016758.0;
    h.host = "node1";
    h.source = "nvml";
    h.interval_s = 1.0;
    auto w = RecordingWriter::Create(path, h);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    TraceRecord a = Sample(1784016758.25, "0", 12 * kMiBBytes);
    a.sample.gpu_util_ratio = 0.93;
    a.sample.reserved_bytes = 479 * kMiBBytes;
    a.sample.processes = std::vector<ProcessMemory>{{4242, "python", "C", 10 * kMiBBytes, 0.9},
                                                    {77, "Xorg", "G", std::nullopt, std::nullopt}};
    ASSERT_TRUE((*w)->Write(a).ok());
    ASSERT_TRUE((*w)->Write(Sample(1784016759.25, "1", std::nullopt)).ok());
    EXPECT_EQ((*w)->records_written(), 2u);
    ASSERT_TRUE((*w)->Close().ok());
    EXPECT_FALSE((*w)->Write(a).ok()) << "writing after Close fails";
  }
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  EXPECT_THAT(first, HasSubstr("\"schema\":\"vramwatch.record/1\""));
  EXPECT_THAT(first, HasSubstr("\"started\":\"2026-07-14T08:12:38Z\""));

  ReadResult r = ReadTrace(path, {});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.format, TraceFormat::kRecording);
  EXPECT_TRUE(r.has_zone);
  ASSERT_EQ(r.records.size(), 2u);
  const TraceRecord& a = r.records[0];
  EXPECT_EQ(a.gpu.key, "0");
  EXPECT_EQ(a.gpu.index, 0);
  EXPECT_EQ(a.gpu.uuid, "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f60");
  EXPECT_EQ(a.gpu.name, "NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(a.sample.t, 1784016758.25);
  EXPECT_EQ(a.sample.used_bytes, 12 * kMiBBytes);
  EXPECT_EQ(a.sample.reserved_bytes, 479 * kMiBBytes);
  EXPECT_FALSE(a.sample.free_bytes.has_value());
  EXPECT_DOUBLE_EQ(*a.sample.gpu_util_ratio, 0.93);
  ASSERT_TRUE(a.sample.processes.has_value());
  ASSERT_EQ(a.sample.processes->size(), 2u);
  EXPECT_EQ((*a.sample.processes)[0].pid, 4242);
  EXPECT_EQ((*a.sample.processes)[0].command, "python");
  EXPECT_EQ((*a.sample.processes)[0].used_bytes, 10 * kMiBBytes);
  EXPECT_FALSE((*a.sample.processes)[1].used_bytes.has_value());
  const TraceRecord& b = r.records[1];
  EXPECT_FALSE(b.sample.used_bytes.has_value()) << "null reads back as missing, not 0";
  EXPECT_FALSE(b.sample.processes.has_value()) << "no processes key means the source listed none";
}

TEST(Recording, RecordLineHasNullsForMissingValues) {
  std::string line = RecordingRecordLine(Sample(0, "2", std::nullopt));
  EXPECT_THAT(line, HasSubstr("\"used_bytes\":null"));
  EXPECT_THAT(line, HasSubstr("\"util\":null"));
  EXPECT_THAT(line, HasSubstr("\"t\":\"1970-01-01T00:00:00Z\""));
  EXPECT_THAT(line, ::testing::Not(HasSubstr("processes")));
}

TEST(Recording, UnknownCommandIsWrittenAsNullAndReadsBackEmpty) {
  TraceRecord r = Sample(0, "0", 12 * kMiBBytes);
  r.sample.processes = std::vector<ProcessMemory>{{4242, "", "C", 10 * kMiBBytes, 0.9}};
  const std::string line = RecordingRecordLine(r);
  EXPECT_THAT(line, HasSubstr("\"command\":null"));
  EXPECT_THAT(line, ::testing::Not(HasSubstr("\"command\":\"\"")));
  const std::string path = TempPath("null-command.jsonl");
  std::ofstream(path) << RecordingHeaderLine({0, "node1", "nvml", 1.0}) << "\n" << line << "\n";
  ReadResult back = ReadTrace(path, {});
  ASSERT_TRUE(back.status.ok()) << back.status.ToString();
  ASSERT_EQ(back.records.size(), 1u);
  ASSERT_TRUE(back.records[0].sample.processes.has_value());
  ASSERT_EQ(back.records[0].sample.processes->size(), 1u);
  EXPECT_EQ((*back.records[0].sample.processes)[0].pid, 4242);
  EXPECT_EQ((*back.records[0].sample.processes)[0].command, "") << "null reads back as no command";
}

// A GPU whose identity could not be read yet, and a process whose type NVML did not give, are
// written null (missing), never "".
TEST(Recording, UnknownIdentityAndTypeAreWrittenAsNull) {
  TraceRecord r = Sample(0, "1", std::nullopt);
  r.gpu.uuid.clear();
  r.gpu.name.clear();
  r.gpu.pci_bus_id.clear();
  r.sample.processes = std::vector<ProcessMemory>{{4242, "mps-client", "", 10 * kMiBBytes, std::nullopt},
                                                  {4243, "both", "C+M", kMiBBytes, std::nullopt}};
  const std::string line = RecordingRecordLine(r);
  EXPECT_THAT(line, HasSubstr("\"uuid\":null"));
  EXPECT_THAT(line, HasSubstr("\"name\":null"));
  EXPECT_THAT(line, HasSubstr("\"pci_bus_id\":null"));
  EXPECT_THAT(line, HasSubstr("\"type\":null"));
  EXPECT_THAT(line, HasSubstr("\"type\":\"C+M\""));
  EXPECT_THAT(line, ::testing::Not(HasSubstr("\"\"")));
}

// `record > a.jsonl; record >> a.jsonl`: the second header is a new segment of the same host's
// samples, and both recordings' records are read.
TEST(Recording, AnAppendedRecordingOfTheSameHostReadsOn) {
  const std::string text = RecordingHeaderLine({0, "node1", "nvml", 1.0}) + "\n" +
                           RecordingRecordLine(Sample(10, "0", kMiBBytes)) + "\n" +
                           RecordingHeaderLine({100, "node1", "nvml", 2.0}) + "\n" +
                           RecordingRecordLine(Sample(110, "0", 2 * kMiBBytes)) + "\n";
  ReadResult r = ReadText(text, {}, "a.jsonl");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[1].sample.used_bytes, 2 * kMiBBytes);
}

// The keys come in the order docs/formats.md shows: the header starts with "schema", a record with
// "t", then "gpu" (`grep '^{"t"'` finds every record; they were sorted, "free_bytes" first).
TEST(Recording, KeysComeInTheDocumentedOrder) {
  const std::string header = RecordingHeaderLine({0, "node1", "nvml", 1.0});
  EXPECT_EQ(header.rfind("{\"schema\":\"vramwatch.record/1\",\"started\":", 0), 0u) << header;
  TraceRecord r = Sample(10, "0", kMiBBytes);
  r.sample.processes = std::vector<ProcessMemory>{{4242, "python", "C", 10 * kMiBBytes, 0.9}};
  const std::string line = RecordingRecordLine(r);
  EXPECT_EQ(line.rfind("{\"t\":", 0), 0u) << line;
  EXPECT_LT(line.find("\"gpu\":"), line.find("\"used_bytes\":")) << line;
  EXPECT_LT(line.find("\"used_bytes\":"), line.find("\"processes\":")) << line;
  EXPECT_NE(line.find("[{\"pid\":4242,"), std::string::npos) << line;
}

// logrotate's copytruncate copies the file and cuts it to nothing while `record` writes on. Written
// at its own offset, the next record left the cut file that many NUL bytes then records, which
// nothing could read; in append mode, with the header written again, the cut file is a recording.
TEST(Recording, AFileCutWhileRecordingGetsItsHeaderAgainAndReadsBack) {
  const std::string path = TempPath("rotated.jsonl");
  auto w = RecordingWriter::Create(path, {0, "node1", "nvml", 1.0});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->Write(Sample(10, "0", kMiBBytes)).ok());
  ASSERT_TRUE((*w)->Write(Sample(11, "0", kMiBBytes)).ok());
  ASSERT_EQ(truncate(path.c_str(), 0), 0);
  ASSERT_TRUE((*w)->Write(Sample(12, "0", 2 * kMiBBytes)).ok());
  ASSERT_TRUE((*w)->Write(Sample(13, "0", 3 * kMiBBytes)).ok());
  ASSERT_TRUE((*w)->Close().ok());
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find('\0'), std::string::npos);
  EXPECT_EQ(text.rfind("{\"", 0), 0u) << text;
  ReadResult r = ReadTrace(path, {});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[0].sample.used_bytes, 2 * kMiBBytes);
  EXPECT_EQ(r.records[1].sample.used_bytes, 3 * kMiBBytes);
}

// A process on a MIG GPU instance keeps its instance and the instance's memory through a
// recording; a process without one gets no such fields.
TEST(Recording, MigInstanceOfAProcessReadsBack) {
  TraceRecord r = Sample(0, "0", 12 * kMiBBytes);
  ProcessMemory on_mig{4242, "python", "C", 10 * kMiBBytes, std::nullopt};
  on_mig.gpu_instance_id = 9;
  on_mig.instance_used_bytes = 11 * kMiBBytes;
  on_mig.instance_total_bytes = 9984 * kMiBBytes;
  r.sample.processes = std::vector<ProcessMemory>{on_mig, {77, "Xorg", "G", kMiBBytes, std::nullopt}};
  const std::string line = RecordingRecordLine(r);
  EXPECT_THAT(line, HasSubstr("\"gpu_instance_id\":9"));
  EXPECT_EQ(line.find("gpu_instance_id"), line.rfind("gpu_instance_id")) << "only the MIG process has one";
  const std::string path = TempPath("mig.jsonl");
  std::ofstream(path) << RecordingHeaderLine({0, "node1", "nvml", 1.0}) << "\n" << line << "\n";
  ReadResult back = ReadTrace(path, {});
  ASSERT_TRUE(back.status.ok()) << back.status.ToString();
  ASSERT_EQ(back.records.size(), 1u);
  const std::vector<ProcessMemory>& ps = *back.records[0].sample.processes;
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].gpu_instance_id, 9u);
  EXPECT_EQ(ps[0].instance_used_bytes, 11 * kMiBBytes);
  EXPECT_EQ(ps[0].instance_total_bytes, 9984 * kMiBBytes);
  EXPECT_FALSE(ps[1].gpu_instance_id.has_value());
  EXPECT_FALSE(ps[1].instance_total_bytes.has_value());
}

struct RecErrorCase {
  const char* name;
  std::string text;
  const char* message;
};

class RecordingErrors : public ::testing::TestWithParam<RecErrorCase> {};

TEST_P(RecordingErrors, NameLineColumnAndExpectation) {
  ReadResult r = ReadText(GetParam().text, {}, "r.jsonl");
  ASSERT_FALSE(r.status.ok());
  EXPECT_THAT(r.status.message(), HasSubstr(GetParam().message));
}

const std::string kHeader = "{\"schema\":\"vramwatch.record/1\"}\n";

const RecErrorCase kRecordingErrors[] = {
    {"no_header", "{\"t\":\"2026-07-14T08:12:38Z\",\"gpu\":\"0\"}\n",
     "r.jsonl:1:1: expected the recording header {\"schema\":\"vramwatch.record/1\",...} as the first line"},
    {"other_schema", "{\"schema\":\"vramwatch.record/9\"}\n", "r.jsonl:1:2: unsupported recording schema"},
    {"broken_json", kHeader + "{\"t\":\"2026-07-14T08:12:38Z\",\"gpu\":\"0\",}\n",
     "r.jsonl:2:39: expected a JSON object"},
    {"negative_bytes", kHeader + "{\"t\":\"2026-07-14T08:12:38Z\",\"gpu\":\"0\",\"used_bytes\":-5}\n",
     "r.jsonl:2:39: expected \"used_bytes\" as a number of bytes or null, got '-5'"},
    {"bad_time", kHeader + "{\"t\":\"soon\",\"gpu\":\"0\"}\n", "r.jsonl:2:2: expected \"t\" as an ISO 8601 time"},
    {"time_past_9999", kHeader + "{\"t\":1.7e20,\"gpu\":\"0\"}\n",
     "r.jsonl:2:2: expected \"t\" as epoch seconds before the year 10000, got '1.7e+20'"},
    {"no_gpu", kHeader + "{\"t\":\"2026-07-14T08:12:38Z\"}\n", "r.jsonl:2:1: expected \"gpu\" as a string key"},
    {"util_over_one", kHeader + "{\"t\":\"2026-07-14T08:12:38Z\",\"gpu\":\"0\",\"util\":93}\n",
     "expected \"util\" as a ratio 0..1 or null"},
    {"not_an_object", kHeader + "[1,2]\n", "r.jsonl:2:1: expected a JSON object"},
    {"not_utf8", kHeader + "{\"t\":\"2026-07-14T08:12:38Z\",\"gpu\":\"caf\xe9\"}\n",
     "r.jsonl:2:40: expected a JSON object in UTF-8 (this string holds bytes that are not UTF-8 text)"},
    {"lone_surrogate", kHeader + "{\"t\":\"2026-07-14T08:12:38Z\",\"gpu\":\"\\ud800\"}\n",
     "expected a JSON object in UTF-8 (this string holds bytes that are not UTF-8 text)"},
    // Times with a zone, then one without (the recording machine's local time): not one clock.
    {"mixed_zones",
     kHeader + "{\"t\":\"2026-07-14T08:12:38Z\",\"gpu\":\"0\"}\n{\"t\":\"2026-07-14T08:12:39\",\"gpu\":\"0\"}\n",
     "r.jsonl:3:1: this timestamp carries no time zone and those of the rows before it (from line 2) do"},
    {"negative_gpu_instance",
     kHeader + "{\"t\":\"2026-07-14T08:12:38Z\",\"gpu\":\"0\",\"processes\":[{\"pid\":1,\"gpu_instance_id\":-1}]}\n",
     "expected process \"gpu_instance_id\" as a MIG GPU instance id or null"},
    {"instance_total_as_text",
     kHeader + "{\"t\":\"2026-07-14T08:12:38Z\",\"gpu\":\"0\",\"processes\":[{\"pid\":1,\"instance_total_bytes\":"
               "\"10G\"}]}\n",
     "expected process \"instance_used_bytes\" and \"instance_total_bytes\" in bytes or null"},
    {"second_recording_of_another_host",
     "{\"schema\":\"vramwatch.record/1\",\"host\":\"a\"}\n{\"t\":\"2026-07-14T08:12:38Z\",\"gpu\":\"0\"}\n"
     "{\"schema\":\"vramwatch.record/1\",\"host\":\"b\"}\n",
     "r.jsonl:3:32: a second recording's header, from host 'b' where the first recording is from 'a': samples of two "
     "hosts are not one GPU's; split the file there (`head -n 2 FILE` and `tail -n +3 FILE`)"},
    {"second_recording_of_another_format", kHeader + "{\"schema\":\"vramwatch.record/2\"}\n",
     "r.jsonl:2:2: a second recording's header, in format 'vramwatch.record/2' where the first recording is in "
     "'vramwatch.record/1': split the file there (`head -n 1 FILE` and `tail -n +2 FILE`)"},
    {"number_too_large", kHeader + "{\"t\":\"2026-07-14T08:12:38Z\",\"gpu\":\"0\",\"used_bytes\":47e6854285}\n",
     "r.jsonl:2:1: expected a JSON object whose numbers fit a double"},
};

INSTANTIATE_TEST_SUITE_P(Errors, RecordingErrors, ::testing::ValuesIn(kRecordingErrors),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace vw::trace
