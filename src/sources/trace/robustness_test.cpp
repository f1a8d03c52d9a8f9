// Every reader must survive any byte sequence: seeded random bytes, random mutations of valid files
// and every truncation of a valid file, in strict and lenient mode, with detection and with each
// format forced. The outcome is records or an error Status, never a crash, a hang or a nonsense value.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "sources/trace/trace_test_util.h"

namespace vw::trace {
namespace {

using namespace testing_util;

constexpr size_t kMaxRecords = 200000;

struct Sample {
  const char* name;
  TraceFormat format;
  std::string text;
};

std::string Utf16Le(const std::string& s) {
  std::string out = "\xFF\xFE";
  for (char c : s) {
    out.push_back(c);
    out.push_back('\0');
  }
  return out;
}

std::vector<Sample> ValidSamples() {
  const std::string csv =
      "timestamp, index, uuid, memory.used [MiB], memory.total [MiB], utilization.gpu [%]\n"
      "2026/07/14 08:12:38.696, 0, GPU-a, 100 MiB, 81559 MiB, 9 %\n"
      "2026/07/14 08:12:38.697, 1, GPU-b, [N/A], 81559 MiB, [Not Supported]\n"
      "2025-09-21 16:12:24\n----\n"
      "2026/07/14 08:12:39.696, 0, GPU-a, 101 MiB, 81559 MiB, 10 %\n";
  return {
      {"csv", TraceFormat::kQueryCsv, csv},
      {"csv_utf16", TraceFormat::kQueryCsv, Utf16Le(csv)},
      {"values", TraceFormat::kValues, "4321\n4322 MiB\nN/A\n\n4400\n"},
      {"dmon", TraceFormat::kDmon,
       "#Date       Time        gpu     fb   bar1     sm\n#YYYYMMDD   HH:MM:SS    Idx     MB     MB      %\n"
       " 20240104   13:54:35      0    239      3      6\n 20240104   13:54:35      1      -      3      -\n"
       " 20240104   13:54:36      0    240      3      7\n"},
      {"pmon", TraceFormat::kPmon,
       "# gpu        pid  type    sm   mem   enc   dec    fb   command\n"
       "# Idx          #   C/G     %     %     %     %    MB   name\n"
       "    0       4242     G     7     3     -     -    64   Xorg\n"
       "    0         11     C    50    20     1     2    12   cuda app\n"
       "    0       4242     G     8     3     -     -    65   Xorg\n"},
      {"table", TraceFormat::kSmiTable,
       "==== Sun May  4 04:27:32 AM EDT 2025 ====\n"
       "Tue Oct 29 19:00:23 2024       \n"
       "+-----------------------------------------------------------------------------------------+\n"
       "| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |\n"
       "|-----------------------------------------+------------------------+----------------------+\n"
       "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
       "|=========================================+========================+======================|\n"
       "|   0  NVIDIA L40S                    On  |   00000000:4A:00.0 Off |                    0 |\n"
       "| N/A   27C    P8             32W /  350W |       3MiB /  46068MiB |      0%      Default |\n"
       "+-----------------------------------------+------------------------+----------------------+\n"
       "\n"
       "+-----------------------------------------------------------------------------------------+\n"
       "| Processes:                                                                              |\n"
       "|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |\n"
       "|=========================================================================================|\n"
       "|    0   N/A  N/A   3796615      C   python                                      11944MiB |\n"
       "+-----------------------------------------------------------------------------------------+\n"},
      {"recording", TraceFormat::kRecording,
       "{\"schema\":\"vramwatch.record/1\"}\n"
       "{\"t\":\"2026-07-14T08:12:38Z\",\"gpu\":\"0\",\"used_bytes\":1048576,\"util\":0.5,"
       "\"processes\":[{\"pid\":1,\"type\":\"C\",\"command\":\"x\",\"used_bytes\":null,\"sm_util\":0.1}]}\n"
       "{\"t\":\"2026-07-14T08:12:39Z\",\"gpu\":\"0\",\"used_bytes\":null}\n"},
  };
}

// Reads `text` in every mode; checks the outcome is sane. Returns how many runs gave records.
int ReadEveryWay(const std::string& text, TraceFormat format, const std::string& what) {
  const std::string path = WriteTemp("robust.trace", text);
  int with_records = 0;
  for (TraceFormat f : {TraceFormat::kAuto, format}) {
    for (bool lenient : {false, true}) {
      TraceOptions o;
      o.format = f;
      o.lenient = lenient;
      o.interval_s = 1;
      ReadResult r = ReadTrace(path, o, kMaxRecords);
      EXPECT_LT(r.records.size(), kMaxRecords) << what;
      if (!r.status.ok()) {
        EXPECT_FALSE(r.status.message().empty()) << what;
      } else {
        EXPECT_FALSE(r.records.empty()) << what << ": ok without records must be an error instead";
      }
      for (const auto& rec : r.records) {
        EXPECT_TRUE(std::isfinite(rec.sample.t)) << what;
        if (rec.sample.gpu_util_ratio) {
          EXPECT_GE(*rec.sample.gpu_util_ratio, 0.0) << what;
          EXPECT_LE(*rec.sample.gpu_util_ratio, 1.0) << what;
        }
      }
      EXPECT_LE(r.examples.size(), 10u);
      if (!r.records.empty()) ++with_records;
    }
  }
  return with_records;
}

TEST(Robustness, ValidSamplesParseInEveryMode) {
  for (const Sample& s : ValidSamples()) {
    EXPECT_EQ(ReadEveryWay(s.text, s.format, s.name), 4) << s.name;
  }
}

TEST(Robustness, EveryTruncationPrefix) {
  for (const Sample& s : ValidSamples()) {
    for (size_t n = 0; n <= s.text.size(); ++n) {
      ReadEveryWay(s.text.substr(0, n), s.format, std::string(s.name) + " cut at " + std::to_string(n));
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(Robustness, RandomMutationsOfValidFiles) {
  std::mt19937 rng(20260714);
  for (const Sample& s : ValidSamples()) {
    for (int i = 0; i < 150; ++i) {
      std::string t = s.text;
      const int edits = 1 + static_cast<int>(rng() % 6);
      for (int e = 0; e < edits && !t.empty(); ++e) {
        const size_t at = rng() % t.size();
        switch (rng() % 5) {
          case 0: t[at] = static_cast<char>(rng() & 0xFF); break;
          case 1: t.insert(at, 1, "0123456789,.-[]% \n\r\x00|#{}\"MiB"[rng() % 27]); break;
          case 2: t.erase(at, 1 + rng() % 20); break;
          case 3: t.insert(at, t.substr(rng() % t.size(), 1 + rng() % 40)); break;
          case 4: t[at] = '\n'; break;
        }
      }
      ReadEveryWay(t, s.format, std::string(s.name) + " mutation " + std::to_string(i));
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(Robustness, SeededRandomBytes) {
  std::mt19937 rng(7);
  const TraceFormat formats[] = {TraceFormat::kQueryCsv, TraceFormat::kValues,   TraceFormat::kDmon,
                                 TraceFormat::kPmon,     TraceFormat::kSmiTable, TraceFormat::kRecording};
  for (int i = 0; i < 120; ++i) {
    std::string t(rng() % 3000, '\0');
    const bool texty = i % 2 == 0;  // half plain bytes, half from a text-like alphabet
    for (char& c : t) {
      c = texty ? " \n0123456789,:/.-|+=#%[]NAMiBgpu"[rng() % 33] : static_cast<char>(rng() & 0xFF);
    }
    if (i % 10 == 3) t = "\xFF\xFE" + t;  // claims UTF-16LE
    ReadEveryWay(t, formats[static_cast<size_t>(i) % 6], "random " + std::to_string(i));
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(Robustness, HugeLineIsRejectedNotBuffered) {
  std::string t = "timestamp, memory.used [MiB]\n" + std::string(3 << 20, '7') + "\n2026/07/14 08:12:38.696, 1 MiB\n";
  TraceOptions o;
  o.lenient = true;
  ReadResult r = ReadText(t, o, "huge.csv");
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.skipped, 1u);
  o.lenient = false;
  r = ReadText(t, o, "huge.csv");
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("huge.csv:2:1: expected a line shorter than"), std::string::npos)
      << r.status.message();
}

}  // namespace
}  // namespace vw::trace
