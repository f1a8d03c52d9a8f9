#include "cli/watch_flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vw::cli {
namespace {

WatchFlags Replay(const std::vector<std::string>& given) {
  WatchFlags f;
  f.replay = "run.jsonl";
  f.given.insert(given.begin(), given.end());
  f.given.insert("--replay");
  return f;
}

// A flag of the live daemon alone does nothing with --replay: given there, it is a usage error
// naming it, as the trace flags are without --replay.
TEST(ResolveWatchFlags, ALiveOnlyFlagGivenWithReplayIsAnErrorNamingIt) {
  for (const std::string flag : {"--listen", "--webhook", "--duration", "--process-interval", "--timeout", "--nvml-lib",
                                 "--proc-root", "--passwd", "--kube-logs"}) {
    auto s = ResolveWatchFlags(Replay({flag}));
    ASSERT_FALSE(s.ok()) << flag;
    EXPECT_EQ(s.status().message().rfind(flag + " has no effect with --replay (", 0), 0u) << s.status().message();
  }
}

// Flags a replay uses, and the live-only ones left at their defaults, are accepted.
TEST(ResolveWatchFlags, FlagsAReplayUsesAreAcceptedWithIt) {
  auto none = ResolveWatchFlags(Replay({}));
  EXPECT_TRUE(none.ok()) << none.status().message();
  WatchFlags f = Replay({"--db",
                         "--db-max-size",
                         "--raw-retention",
                         "--aggregate-retention",
                         "--process-retention",
                         "--alert-log",
                         "--kernel-log",
                         "--for",
                         "--finding-for",
                         "--critical-runway",
                         "--label",
                         "--grace",
                         "--orphan-threshold",
                         "--hostname",
                         "--interval",
                         "--speed",
                         "--format",
                         "--columns",
                         "--total",
                         "--quiet"});
  f.db_max_size = "1GiB";
  f.raw_retention = "2d";
  auto s = ResolveWatchFlags(f);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->history.db.max_size_bytes, 1ull << 30);
  EXPECT_EQ(s->history.raw_retention_s, 2 * 86400.0);
}

// Without --replay the live flags are the daemon's own.
TEST(ResolveWatchFlags, LiveFlagsAreAcceptedWithoutReplay) {
  WatchFlags f;
  f.duration = "2s";
  f.given = {"--listen", "--webhook", "--duration", "--timeout", "--proc-root"};
  auto s = ResolveWatchFlags(f);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->duration_s, 2.0);
}

// The trace flags say how to read a --replay file: given without it, even at their defaults
// (`--speed max`, `--format auto`), they are a usage error.
TEST(ResolveWatchFlags, ATraceFlagGivenWithoutReplayIsAnErrorEvenAtItsDefault) {
  for (const std::string flag : {"--speed", "--format", "--columns", "--total"}) {
    WatchFlags f;
    f.given.insert(flag);
    auto s = ResolveWatchFlags(f);
    ASSERT_FALSE(s.ok()) << flag;
    EXPECT_NE(s.status().message().find("they need --replay"), std::string::npos) << s.status().message();
  }
  EXPECT_TRUE(ResolveWatchFlags(WatchFlags{}).ok());
}

}  // namespace
}  // namespace vw::cli
