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
  for (const std::string flag :
       {"--listen", "--webhook", "--duration", "--process-interval", "--timeout", "--init-timeout", "--nvml-lib",
        "--proc-root", "--passwd", "--kube-logs", "--external-url"}) {
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
  f.db = "history.db";
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

// Alerts link back to the daemon where Alertmanager's users can follow the link: the --listen
// address, not the host name (a daemon on 127.0.0.1 is not served at http://node-7:9490/), the
// host name only for a wildcard address, and --external-url (behind a proxy) over both.
TEST(GeneratorUrl, IsTheListenAddressTheHostNameForAWildcardOrTheExternalUrl) {
  EXPECT_EQ(GeneratorUrl("", "127.0.0.1", 9490, "node-7"), "http://127.0.0.1:9490/");
  EXPECT_EQ(GeneratorUrl("", "10.0.0.7", 9490, "node-7"), "http://10.0.0.7:9490/");
  EXPECT_EQ(GeneratorUrl("", "::1", 9490, "node-7"), "http://[::1]:9490/");
  EXPECT_EQ(GeneratorUrl("", "0.0.0.0", 9490, "node-7"), "http://node-7:9490/");
  EXPECT_EQ(GeneratorUrl("", "::", 9490, "node-7"), "http://node-7:9490/");
  EXPECT_EQ(GeneratorUrl("https://gpu.example.org/node-7/", "127.0.0.1", 9490, "node-7"),
            "https://gpu.example.org/node-7/");
}

TEST(ResolveWatchFlags, ExternalUrlMustBeHttpAndGoWithAWebhook) {
  WatchFlags f;
  f.external_url = "gpu.example.org";
  f.webhook = "http://am:9093";
  auto bad = ResolveWatchFlags(f);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "--external-url: expected an http:// or https:// URL, got 'gpu.example.org'");
  f.external_url = "https://gpu.example.org/";
  EXPECT_TRUE(ResolveWatchFlags(f).ok());
  f.webhook.clear();
  auto alone = ResolveWatchFlags(f);
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().message().find("no effect without --webhook"), std::string::npos);
}

// The trace flags say how to read a --replay file: given without it, even at their defaults
// (`--speed max`, `--format auto`), they are a usage error.
TEST(ResolveWatchFlags, ATraceFlagGivenWithoutReplayIsAnErrorEvenAtItsDefault) {
  for (const std::string flag : {"--speed", "--format", "--columns", "--total", "--lenient"}) {
    WatchFlags f;
    f.given.insert(flag);
    auto s = ResolveWatchFlags(f);
    ASSERT_FALSE(s.ok()) << flag;
    EXPECT_NE(s.status().message().find("they need --replay"), std::string::npos) << s.status().message();
  }
  EXPECT_TRUE(ResolveWatchFlags(WatchFlags{}).ok());
}

// `--db ''` is a usage error, not history turned off without a word.
TEST(ResolveWatchFlags, AnEmptyDbIsAUsageError) {
  WatchFlags f;
  f.given.insert("--db");
  auto s = ResolveWatchFlags(f);
  ASSERT_FALSE(s.ok()) << "an empty --db was taken as no history";
  EXPECT_EQ(s.status().message().rfind("--db: an empty file name", 0), 0u) << s.status().message();
}

// The daemon's history: a cap makes room for the newest samples, and its writes wait for another
// program's write lock only briefly, on the sampling thread (they waited 2 s each).
TEST(ResolveWatchFlags, TheDaemonsHistoryMakesRoomAtItsCapAndWaitsBrieflyForALock) {
  auto s = ResolveWatchFlags(WatchFlags{});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s->history.make_room_at_cap);
  EXPECT_GE(s->history.write_busy_timeout_ms, 0);
  EXPECT_LE(s->history.write_busy_timeout_ms, 250);
}

}  // namespace
}  // namespace vw::cli
