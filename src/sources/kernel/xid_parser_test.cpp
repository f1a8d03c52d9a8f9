#include "sources/kernel/xid_parser.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "sources/kernel/kernel_log_reader.h"
#include "sources/kernel/xid_catalog.h"

namespace vw::kernel {
namespace {

TEST(NormalizePciBusId, AcceptsKernelAndNvmlSpellings) {
  struct Case {
    const char* in;
    const char* out;
  } cases[] = {
      {"PCI:0000:3b:00", "00000000:3B:00.0"},
      {"0000:3b:00", "00000000:3B:00.0"},
      {"0000:3b:00.0", "00000000:3B:00.0"},
      {"00000000:3B:00.0", "00000000:3B:00.0"},
      {"3b:00.0", "00000000:3B:00.0"},
      {"PCI:0019:01:00", "00000019:01:00.0"},
      {"0000:b3:00.1", "00000000:B3:00.1"},
      {"zz:00.0", ""},
      {"0000:3b", ""},
      {"", ""},
  };
  for (const auto& c : cases) EXPECT_EQ(NormalizePciBusId(c.in), c.out) << c.in;
}

struct XidCase {
  std::string line;
  int xid;
  std::string pci;
  std::optional<int64_t> pid;
  std::string name;
  std::string message;
  std::optional<int> caused_by;
  std::optional<double> monotonic;
  std::string wall;
  std::optional<unsigned> gi, ci;
};

TEST(ParseXidLine, ReadsEveryDriverAndLogToolSpelling) {
  const XidCase cases[] = {
      // 515-565 form with a known process, dmesg prefix.
      {"[ 5012.337120] NVRM: Xid (PCI:0000:3b:00): 31, pid=24816, name=python3, Ch 00000010, intr 00000000. MMU "
       "Fault: ENGINE GRAPHICS faulted @ 0x7f00_00000000",
       31,
       "00000000:3B:00.0",
       24816,
       "python3",
       "Ch 00000010, intr 00000000. MMU Fault: ENGINE GRAPHICS faulted @ "
       "0x7f00_00000000",
       {},
       5012.337120,
       "",
       {},
       {}},
      // unknown process spelled '<unknown>' (quoted pid, unquoted name), dmesg --ctime prefix.
      {"[Mon Mar  3 10:20:30 2025] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM "
       "Warp Exception",
       13,
       "00000000:CB:00.0",
       {},
       "",
       "Graphics SM Warp Exception",
       {},
       {},
       "Mon Mar  3 10:20:30 2025",
       {},
       {}},
      // 570+ unknown process: no pid/name at all; journald prefix; fallen off the bus.
      {"Mar 03 10:20:30 node7 kernel: NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
       79,
       "00000000:2B:00.0",
       {},
       "",
       "GPU has fallen off the bus.",
       {},
       {},
       "Mar 03 10:20:30",
       {},
       {}},
      // pre-515: pid without name.
      {"NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.",
       63,
       "00000000:10:1C.0",
       1896,
       "",
       "Row Remapper: New row marked for remapping, reset gpu to activate.",
       {},
       {},
       "",
       {},
       {}},
      // pid=0 with no name (2021 Xid 79).
      {"NVRM: Xid (PCI:0000:10:00): 79, pid=0, GPU has fallen off the bus.",
       79,
       "00000000:10:00.0",
       0,
       "",
       "GPU has fallen off the bus.",
       {},
       {},
       "",
       {},
       {}},
      // very old form without "PCI:".
      {"NVRM: Xid (0000:01:00): 3, 0001 00000000 0000a097 00001b0c 00001000 00000000",
       3,
       "00000000:01:00.0",
       {},
       "",
       "0001 00000000 0000a097 00001b0c 00001000 00000000",
       {},
       {},
       "",
       {},
       {}},
      // 570.124+: caused by previous Xid; syslog prefix with dmesg time.
      {"Jun 01 08:00:00 gpu01 kernel: [123.5] NVRM: Xid (PCI:0000:dc:00): 45, pid=77001, name=python3, Ch "
       "00000001 caused by previous Xid 149",
       45,
       "00000000:DC:00.0",
       77001,
       "python3",
       "Ch 00000001",
       149,
       123.5,
       "Jun 01 08:00:00",
       {},
       {}},
      // rsyslog RFC 3339 and journalctl -o short-iso stamps are kept whole.
      {"2026-11-27T10:00:00.123456+00:00 gpu01 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the "
       "bus.",
       79,
       "00000000:3B:00.0",
       0,
       "",
       "GPU has fallen off the bus.",
       {},
       {},
       "2026-11-27T10:00:00.123456+00:00",
       {},
       {}},
      // dmesg --time-format=iso: no host, a comma before the fraction.
      {"2026-11-27T10:00:00,123456+01:00 NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.",
       79,
       "00000000:3B:00.0",
       0,
       "",
       "GPU has fallen off the bus.",
       {},
       {},
       "2026-11-27T10:00:00.123456+01:00",
       {},
       {}},
      {"2026-11-27T10:00:00+0100 gpu01 kernel: [ 55.0] NVRM: Xid (PCI:0000:3b:00): 13, Graphics Exception",
       13,
       "00000000:3B:00.0",
       {},
       "",
       "Graphics Exception",
       {},
       55.0,
       "2026-11-27T10:00:00+0100",
       {},
       {}},
      // MIG attribution with GPU-I and GPU-CI; kmsg record prefix (µs).
      {"4,2210,9876543210,-;NVRM: Xid (PCI:0000:9b:00 GPU-I:02 GPU-CI:01): 94, pid=5150, name=vllm, Contained "
       "ECC error",
       94,
       "00000000:9B:00.0",
       5150,
       "vllm",
       "Contained ECC error",
       {},
       9876.543210,
       "",
       2u,
       1u},
      // MIG with GPU-I only, non-zero PCI domain.
      {"NVRM: Xid (PCI:0019:01:00 GPU-I:07): 31, pid=9, name=a.out, MMU Fault",
       31,
       "00000019:01:00.0",
       9,
       "a.out",
       "MMU Fault",
       {},
       {},
       "",
       7u,
       {}},
  };
  for (const auto& c : cases) {
    auto e = ParseXidLine(c.line);
    ASSERT_TRUE(e.has_value()) << c.line;
    EXPECT_EQ(e->xid, c.xid) << c.line;
    EXPECT_EQ(e->pci_bus_id, c.pci) << c.line;
    EXPECT_EQ(e->pid, c.pid) << c.line;
    EXPECT_EQ(e->process_name, c.name) << c.line;
    EXPECT_EQ(e->message, c.message) << c.line;
    EXPECT_EQ(e->caused_by_xid, c.caused_by) << c.line;
    if (c.monotonic) {
      ASSERT_TRUE(e->monotonic_s.has_value()) << c.line;
      EXPECT_NEAR(*e->monotonic_s, *c.monotonic, 1e-6) << c.line;
    } else {
      EXPECT_FALSE(e->monotonic_s.has_value()) << c.line;
    }
    EXPECT_EQ(e->wall_clock, c.wall) << c.line;
    EXPECT_EQ(e->gpu_instance, c.gi) << c.line;
    EXPECT_EQ(e->compute_instance, c.ci) << c.line;
  }
}

TEST(ParseXidLine, RejectsNonXidDriverLines) {
  const char* lines[] = {
      "[  127.849897] NVRM: GPU6 _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with booting GSP",
      "[    2.329368] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.71.05  Release Build",
      "NVRM: The NVIDIA GPU 0000:b3:00.0",
      "NVRM: Xid (PCI:0000:3b:00) 79 missing colon",
      "NVRM: Xid (PCI:zz:00): 79, bad address",
      "NVRM: Xid (PCI:0000:3b:00): abc, not a number",
      "NVRM: Xid (PCI:0000:3b:00): -5, a code is never negative",
      "NVRM: Xid (PCI:0000:3b:00): 99999999999, beyond any code",
      // Cut inside the code: a 79 cut to 7, a 119 cut to 11; every driver writes ", " after it.
      "[    5.0] NVRM: Xid (PCI:0000:3b:00): 7",
      "[    5.0] NVRM: Xid (PCI:0000:3b:00): 11",
      "",
  };
  for (const char* l : lines) EXPECT_FALSE(ParseXidLine(l).has_value()) << l;
}

// A negative PID (which the driver never writes) is missing, not a process.
TEST(ParseXidLine, ANegativePidIsMissing) {
  auto e = ParseXidLine("NVRM: Xid (PCI:0000:3b:00): 31, pid=-1, name=x, MMU Fault");
  ASSERT_TRUE(e.has_value());
  EXPECT_FALSE(e->pid.has_value());
  EXPECT_EQ(e->process_name, "x");
}

// A line cut inside its PID: the code stands, the PID is missing (12 may be the start of 1234).
TEST(ParseXidLine, APidTheLineWasCutInIsMissing) {
  auto e = ParseXidLine("NVRM: Xid (PCI:0000:3b:00): 79, pid=12");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->xid, 79);
  EXPECT_FALSE(e->pid.has_value());
}

// A line that names an Xid but cannot be read is counted, and the first is kept with its line
// number, so that the reader can say so instead of dropping it in silence.
TEST(ScanKernelLog, CountsXidLinesItCannotRead) {
  std::string log =
      "[ 10.0] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=x, DBE\n"
      "[ 10.1] usb 1-1: new device\n"
      "[ 10.2] NVRM: Xid (PCI:0000:3b:0\n"
      "[ 10.3] NVRM: Xid (PCI:0000:3b:00): -5, bad\n"
      "[ 10.4] NVRM: Xid (PCI:0000:3b:00): 31, pid=2, name=y, MMU Fault\n";
  KernelLogScan scan = ScanKernelLog(log);
  ASSERT_EQ(scan.events.size(), 2u);
  EXPECT_EQ(scan.unreadable_xid_lines, 2u);
  EXPECT_EQ(scan.first_unreadable_line, 3u);
  EXPECT_EQ(scan.first_unreadable, "[ 10.2] NVRM: Xid (PCI:0000:3b:0");
  EXPECT_EQ(UnreadableXidNote(scan, "/var/log/kern.log", true),
            "/var/log/kern.log: 2 Xid lines could not be read and were left out (the first, line 3: "
            "\"[ 10.2] NVRM: Xid (PCI:0000:3b:0\"); expected \"NVRM: Xid (PCI:<bus id>): <code>, ...\"");
  EXPECT_EQ(UnreadableXidNote(scan, "/dev/kmsg", false),
            "/dev/kmsg: 2 Xid lines could not be read and were left out (the first: "
            "\"[ 10.2] NVRM: Xid (PCI:0000:3b:0\"); expected \"NVRM: Xid (PCI:<bus id>): <code>, ...\"");
  EXPECT_EQ(UnreadableXidNote(ScanKernelLog("[ 1.0] NVRM: Xid (PCI:0000:3b:00): 48, DBE\n"), "f", true), "");
}

TEST(ScanKernelLog, MapsPciToUuidAndKeepsEventsInOrder) {
  std::string log =
      "[ 10.0] NVRM: GPU at PCI:0000:3b:00: GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f60\r\n"
      "[ 10.1] NVRM: GPU Board Serial Number: 0\n"
      "[ 10.2] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=x, An uncorrectable double bit error\n"
      "[ 11.0] usb 1-1: new device\n"
      "[ 12.0] NVRM: Xid (PCI:0000:3b:00): 45, pid='<unknown>', name=<unknown>, Ch 00000008\n";
  KernelLogScan scan = ScanKernelLog(log);
  EXPECT_EQ(scan.lines, 5u);
  ASSERT_EQ(scan.events.size(), 2u);
  EXPECT_EQ(scan.events[0].xid, 48);
  EXPECT_EQ(scan.events[1].xid, 45);
  ASSERT_EQ(scan.uuid_by_pci.count("00000000:3B:00.0"), 1u);
  EXPECT_EQ(scan.uuid_by_pci.at("00000000:3B:00.0"), "GPU-5b8c1c1e-0d1a-4f5e-9a43-1b2c3d4e5f60");
}

// Every Xid line quoted in the real-capture notes must parse, with the code that follows the
// PCI tuple.
TEST(ScanKernelLog, ParsesEveryXidLineOfTheRealCaptures) {
  std::ifstream in(std::string(VRAMWATCH_SHARED_DATA) + "/snippets.md");
  ASSERT_TRUE(in.good()) << "real captures not found at " << VRAMWATCH_SHARED_DATA;
  std::stringstream text;
  text << in.rdbuf();
  size_t expected = 0;
  std::string line;
  std::istringstream lines(text.str());
  while (std::getline(lines, line)) {
    // Prose mentions Xid lines inside backticks; count only lines that start as log output.
    size_t at = line.find("NVRM: Xid (");
    if (at == std::string::npos || line.find('`') != std::string::npos) continue;
    ++expected;
    auto e = ParseXidLine(line);
    ASSERT_TRUE(e.has_value()) << line;
    EXPECT_GT(e->xid, 0) << line;
    EXPECT_FALSE(e->pci_bus_id.empty()) << line;
  }
  KernelLogScan scan = ScanKernelLog(text.str());
  EXPECT_GE(expected, 40u);
  EXPECT_GE(scan.uuid_by_pci.size(), 4u);
}

TEST(DropOlderThan, KeepsRecentUntimedAndAlwaysKeptCodes) {
  KernelLogScan scan = ScanKernelLog(
      "[ 100.0] NVRM: Xid (PCI:0000:01:00): 13, old app fault\n"
      "[ 150.0] NVRM: Xid (PCI:0000:01:00): 48, old double-bit error\n"
      "NVRM: Xid (PCI:0000:01:00): 31, no time\n"
      "[ 9000.0] NVRM: Xid (PCI:0000:01:00): 13, recent app fault\n");
  size_t dropped = DropOlderThan(scan, 10000.0, 3600.0, [](const XidEvent& e) { return e.xid == 48; });
  EXPECT_EQ(dropped, 1u);
  ASSERT_EQ(scan.events.size(), 3u);
  EXPECT_EQ(scan.events[0].xid, 48);
  EXPECT_EQ(scan.events[1].xid, 31);
  EXPECT_EQ(scan.events[2].message, "recent app fault");
}

TEST(XidCatalog, HardwareSetPointsAtADifferentIncident) {
  for (int code : {48, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140, 171, 172}) {
    const XidInfo* info = LookupXid(code);
    ASSERT_NE(info, nullptr) << code;
    EXPECT_TRUE(info->hardware()) << code;
    EXPECT_NE(info->action.find("Rule out hardware"), std::string_view::npos) << code;
  }
  for (int code : {13, 31, 43, 45}) {
    ASSERT_NE(LookupXid(code), nullptr) << code;
    EXPECT_FALSE(LookupXid(code)->hardware()) << code;
  }
  EXPECT_EQ(LookupXid(79)->mnemonic, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS");
  // The micro-controller's codes by their names in the driver's error list: 61 a breakpoint or
  // warning, 62 a halt that needs a reset.
  ASSERT_NE(LookupXid(61), nullptr);
  EXPECT_EQ(LookupXid(61)->mnemonic, "PMU_BREAKPOINT");
  EXPECT_FALSE(LookupXid(61)->hardware());
  EXPECT_EQ(LookupXid(62)->mnemonic, "PMU_HALT_ERROR");
  EXPECT_EQ(LookupXid(4242), nullptr);
}

TEST(ReadKmsg, ReadsRecordsUntilEndWithoutBlocking) {
  std::string path = testing::TempDir() + "/kmsg-fixture-" + std::to_string(::getpid());
  {
    std::ofstream out(path);
    out << "6,100,5000000,-;NVRM: GPU at PCI:0000:01:00: GPU-aaaa\n"
           "4,101,5500000,-;NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.\n"
           " SUBSYSTEM=pci\n";
  }
  auto scan = ReadKmsg(path);
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  ASSERT_EQ(scan->events.size(), 1u);
  EXPECT_NEAR(*scan->events[0].monotonic_s, 5.5, 1e-9);
  EXPECT_EQ(scan->uuid_by_pci.at("00000000:01:00.0"), "GPU-aaaa");
}

TEST(ReadKernelLogFile, MissingFileIsANotFoundNamingThePath) {
  auto r = ReadKernelLogFile("/nonexistent/kern.log");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/kern.log"), std::string::npos);
}

// Xid 154 names the recovery action the GPU needs: a reset or reboot stays true until done (a
// hardware incident, kept for the whole boot), a drain is a warning, "None" is information.
TEST(ClassOfLine, Xid154FollowsTheRecoveryActionItNames) {
  struct Case {
    const char* message;
    std::optional<XidClass> expected;
  };
  for (const Case& c : std::vector<Case>{
           {"GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)", XidClass::kHardware},
           {"GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)", XidClass::kHardware},
           {"GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)", XidClass::kHardware},
           {"GPU recovery action changed from 0x0 (None) to 0x3 (Drain P2P)", XidClass::kApplication},
           {"GPU recovery action changed from 0x2 (Node Reboot Required) to 0x0 (None)", XidClass::kInformational},
           {"something this build does not know", XidClass::kApplication}}) {
    EXPECT_EQ(ClassOfLine(154, c.message), c.expected) << c.message;
  }
  EXPECT_EQ(ClassOfLine(79, "GPU has fallen off the bus."), XidClass::kHardware);
  EXPECT_EQ(ClassOfLine(45, "Ch 00000008"), XidClass::kInformational);
  EXPECT_EQ(ClassOfLine(9999, "x"), std::nullopt);
  // NVML's event API reports an Xid it does not know as 999: named so, and its next step is the
  // kernel log, not NVIDIA's catalog.
  const XidInfo* unknown = LookupXid(999);
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->meaning, "an Xid NVML's event API does not know");
  EXPECT_NE(unknown->action.find("kernel log"), std::string_view::npos);
  EXPECT_FALSE(unknown->hardware());

  // A day-old "reboot required" is kept past --xid-max-age; a day-old drain is not.
  KernelLogScan scan = ScanKernelLog(
      "[ 100.0] NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot "
      "Required)\n"
      "[ 100.5] NVRM: Xid (PCI:0000:3c:00): 154, GPU recovery action changed from 0x0 (None) to 0x3 (Drain P2P)\n");
  ASSERT_EQ(scan.events.size(), 2u);
  EXPECT_EQ(DropOlderThan(scan, 100000.0, 3600.0, [](const XidEvent& e) { return StaysUntilReset(e.xid, e.message); }),
            1u);
  ASSERT_EQ(scan.events.size(), 1u);
  EXPECT_EQ(scan.events[0].pci_bus_id, "00000000:3B:00.0");
}

}  // namespace
}  // namespace vw::kernel
