#include "detection/alerts.h"

#include <gtest/gtest.h>

namespace vw::detection {
namespace {

AlertCondition Leak(const std::string& gpu, const std::string& rate = "10 MiB/h") {
  AlertCondition c;
  c.name = "GpuMemoryLeak";
  c.labels = {{"gpu", gpu}, {"hostname", "node-7"}};
  c.annotations = {{"summary", "leaking " + rate}};
  c.severity = Severity::kCritical;
  return c;
}

TEST(AlertTracker, ConditionMustHoldForItsDurationBeforeFiring) {
  AlertConfig cfg;
  cfg.for_by_name["GpuMemoryLeak"] = 600;
  cfg.resend_interval_s = 0;
  AlertTracker t(cfg);
  EXPECT_TRUE(t.Evaluate(1000, {Leak("0")}).empty());
  ASSERT_EQ(t.Active().size(), 1u);
  EXPECT_EQ(t.Active()[0].state, AlertState::kPending);
  EXPECT_TRUE(t.Evaluate(1599, {Leak("0")}).empty());
  auto ev = t.Evaluate(1600, {Leak("0")});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AlertEventKind::kFiring);
  EXPECT_DOUBLE_EQ(ev[0].alert.active_since, 1000);
  EXPECT_DOUBLE_EQ(*ev[0].alert.fired_at, 1600);
  EXPECT_EQ(t.firing_count(), 1u);
  EXPECT_TRUE(t.Evaluate(1700, {Leak("0")}).empty());  // no repeat without resend
}

// A firing leak whose runway falls under --critical-runway pages at once as critical (with no
// resend, as under --replay, it was never said at all); easing back to a warning waits.
TEST(AlertTracker, AFiringAlertThatTurnsWorseFiresAgainAtItsNewSeverity) {
  AlertConfig cfg;
  cfg.default_for_s = 60;
  cfg.resend_interval_s = 0;
  AlertTracker t(cfg);
  AlertCondition warning = Leak("0");
  warning.severity = Severity::kWarning;
  t.Evaluate(0, {warning});
  ASSERT_EQ(t.Evaluate(60, {warning}).size(), 1u);
  EXPECT_TRUE(t.Evaluate(120, {warning}).empty());
  auto ev = t.Evaluate(180, {Leak("0")});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AlertEventKind::kFiring);
  EXPECT_EQ(ev[0].alert.condition.severity, Severity::kCritical);
  EXPECT_DOUBLE_EQ(ev[0].alert.active_since, 0);  // the same alert, not a new one
  EXPECT_TRUE(t.Evaluate(240, {Leak("0")}).empty());
  EXPECT_TRUE(t.Evaluate(300, {warning}).empty());
  EXPECT_TRUE(t.Evaluate(360, {Leak("0")}).empty()) << "a runway wobbling around the level pages once";
  EXPECT_TRUE(t.Evaluate(420, {}).size() == 1u);  // resolved
  t.Evaluate(480, {warning});
  EXPECT_EQ(t.Evaluate(540, {warning}).size(), 1u);  // a new alert fires at its own severity
  ASSERT_EQ(t.Evaluate(600, {Leak("0")}).size(), 1u) << "and turns critical once again";
}

TEST(AlertTracker, PendingThatStopsHoldingIsDroppedWithoutNotice) {
  AlertConfig cfg;
  cfg.default_for_s = 300;
  AlertTracker t(cfg);
  t.Evaluate(0, {Leak("0")});
  EXPECT_TRUE(t.Evaluate(100, {}).empty());
  EXPECT_TRUE(t.Active().empty());
  // The clock restarts when it comes back.
  t.Evaluate(200, {Leak("0")});
  EXPECT_TRUE(t.Evaluate(450, {Leak("0")}).empty());
  EXPECT_EQ(t.Evaluate(500, {Leak("0")}).size(), 1u);
}

TEST(AlertTracker, FiringThatStopsHoldingResolvesOnce) {
  AlertConfig cfg;
  cfg.default_for_s = 0;
  cfg.resend_interval_s = 0;
  AlertTracker t(cfg);
  ASSERT_EQ(t.Evaluate(10, {Leak("0")}).size(), 1u);
  auto ev = t.Evaluate(20, {});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AlertEventKind::kResolved);
  EXPECT_EQ(ev[0].alert.state, AlertState::kResolved);
  EXPECT_DOUBLE_EQ(*ev[0].alert.resolved_at, 20);
  EXPECT_TRUE(t.Evaluate(30, {}).empty());
}

TEST(AlertTracker, InstancesAreKeptApartByLabelsAndDeduplicatedWithinATick) {
  AlertConfig cfg;
  cfg.default_for_s = 0;
  AlertTracker t(cfg);
  auto ev = t.Evaluate(0, {Leak("0"), Leak("1"), Leak("0", "other text")});
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].alert.key, "GpuMemoryLeak{gpu=0,hostname=node-7}");
  EXPECT_EQ(ev[1].alert.key, "GpuMemoryLeak{gpu=1,hostname=node-7}");
  EXPECT_EQ(t.Active().size(), 2u);
}

TEST(AlertTracker, FiringAlertsAreReannouncedWithFreshAnnotations) {
  AlertConfig cfg;
  cfg.default_for_s = 0;
  cfg.resend_interval_s = 60;
  AlertTracker t(cfg);
  t.Evaluate(0, {Leak("0", "10 MiB/h")});
  EXPECT_TRUE(t.Evaluate(59, {Leak("0", "11 MiB/h")}).empty());
  auto ev = t.Evaluate(60, {Leak("0", "12 MiB/h")});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AlertEventKind::kResend);
  EXPECT_EQ(ev[0].alert.condition.annotations.at("summary"), "leaking 12 MiB/h");
}

TEST(AlertTracker, RestoredFiringAlertSkipsForAndResolvesIfGone) {
  AlertConfig cfg;
  cfg.default_for_s = 3600;
  cfg.resend_interval_s = 0;
  AlertTracker a(cfg);
  a.RestoreFiring(Leak("0"), 100, 3700);
  EXPECT_TRUE(a.Evaluate(5000, {Leak("0")}).empty());  // still firing, no new notice
  EXPECT_EQ(a.firing_count(), 1u);
  AlertTracker b(cfg);
  b.RestoreFiring(Leak("1"), 100, 3700);
  auto ev = b.Evaluate(5000, {});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AlertEventKind::kResolved);
}

// keep_firing_for: a firing alert whose condition is gone for a check or two goes on firing, with
// no notice; gone for longer, it resolves once; a pending one is dropped at once as before.
TEST(AlertTracker, KeepFiringForOutlastsAFlickerAndResolvesAfterIt) {
  AlertConfig cfg;
  cfg.for_by_name["GpuMemoryLeak"] = 600;
  cfg.keep_firing_for_by_name["GpuMemoryLeak"] = 600;
  cfg.resend_interval_s = 0;
  AlertTracker t(cfg);
  EXPECT_TRUE(t.Evaluate(0, {Leak("0")}).empty());
  auto ev = t.Evaluate(600, {Leak("0")});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AlertEventKind::kFiring);
  EXPECT_TRUE(t.Evaluate(700, {}).empty()) << "gone for one check: still firing";
  EXPECT_EQ(t.firing_count(), 1u);
  EXPECT_TRUE(t.Evaluate(800, {Leak("0", "11 MiB/h")}).empty()) << "back: firing on, no new notice";
  EXPECT_TRUE(t.Evaluate(1000, {}).empty());
  EXPECT_TRUE(t.Evaluate(1399, {}).empty());
  ev = t.Evaluate(1400, {});
  ASSERT_EQ(ev.size(), 1u) << "gone for 600 s since it last held at 800";
  EXPECT_EQ(ev[0].kind, AlertEventKind::kResolved);
  EXPECT_EQ(ev[0].alert.condition.annotations.at("summary"), "leaking 11 MiB/h") << "what it last said";
  EXPECT_EQ(t.firing_count(), 0u);
  // Kept firing, it is re-announced like any firing alert (a receiver closes one it is not told of).
  AlertConfig resend = cfg;
  resend.resend_interval_s = 60;
  AlertTracker r(resend);
  r.Evaluate(0, {Leak("0")});
  ASSERT_EQ(r.Evaluate(600, {Leak("0")}).size(), 1u);
  EXPECT_TRUE(r.Evaluate(630, {}).empty());
  ev = r.Evaluate(660, {});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AlertEventKind::kResend);
  // A pending alert is not kept.
  EXPECT_TRUE(t.Evaluate(2000, {Leak("1")}).empty());
  EXPECT_TRUE(t.Evaluate(2100, {}).empty());
  EXPECT_TRUE(t.Active().empty());
}

// After a restart a finding is found again only once the daemon has looked (its grace, a process
// refresh): a restored alert waits restore_wait_s for its condition, firing and silent, and goes
// on firing when it comes back; only one that never comes back resolves, once.
TEST(AlertTracker, RestoredAlertWaitsForItsConditionBeforeResolving) {
  AlertConfig cfg;
  cfg.default_for_s = 60;
  cfg.resend_interval_s = 0;
  cfg.restore_wait_s = 30;
  AlertTracker a(cfg);
  a.RestoreFiring(Leak("0"), 100, 200);
  a.RestoreFiring(Leak("1"), 100, 200);
  EXPECT_TRUE(a.Evaluate(1000, {}).empty()) << "nothing is resolved before the wait is over";
  EXPECT_EQ(a.firing_count(), 2u);
  ASSERT_EQ(a.Active().size(), 2u);
  EXPECT_EQ(a.Active()[0].state, AlertState::kFiring);
  // Until its condition is seen again, its words (a runway, a rate) are from before the restart.
  EXPECT_EQ(a.Active()[0].condition.annotations.at("summary"),
            "leaking 10 MiB/h (as before the restart; not seen since)");
  EXPECT_TRUE(a.Evaluate(1020, {Leak("0")}).empty()) << "GPU 0's condition is back: firing on, no notice";
  EXPECT_EQ(a.Active()[0].condition.annotations.at("summary"), "leaking 10 MiB/h") << "its own words again";
  auto ev = a.Evaluate(1030, {Leak("0")});
  ASSERT_EQ(ev.size(), 1u) << "GPU 1's never came back";
  EXPECT_EQ(ev[0].kind, AlertEventKind::kResolved);
  EXPECT_EQ(ev[0].alert.condition.labels.at("gpu"), "1");
  EXPECT_EQ(a.firing_count(), 1u);
  EXPECT_TRUE(a.Evaluate(1040, {Leak("0")}).empty());
  // Its condition coming back later is a new alert, with its `for:`.
  EXPECT_TRUE(a.Evaluate(1050, {Leak("0"), Leak("1")}).empty());
  ev = a.Evaluate(1110, {Leak("0"), Leak("1")});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AlertEventKind::kFiring);
  EXPECT_EQ(ev[0].alert.condition.labels.at("gpu"), "1");
}

// A restored leak alert waits its rule's keep_firing_for (10 minutes) when that is longer than the
// restore wait: a process whose engine needs its re-fed samples assessed again does not page a
// resolve 22 s after a restart. It is re-announced meanwhile, as any firing alert.
TEST(AlertTracker, ARestoredAlertWaitsItsKeepFiringFor) {
  AlertConfig cfg;
  cfg.resend_interval_s = 60;
  cfg.restore_wait_s = 22;
  cfg.keep_firing_for_by_name["GpuMemoryLeak"] = 600;
  AlertTracker a(cfg);
  a.RestoreFiring(Leak("0"), 100, 200);
  auto ev = a.Evaluate(1000, {});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AlertEventKind::kResend) << "firing since before the restart";
  EXPECT_TRUE(a.Evaluate(1030, {}).empty()) << "past the restore wait, within keep_firing_for";
  ev = a.Evaluate(1061, {});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AlertEventKind::kResend);
  EXPECT_EQ(a.firing_count(), 1u);
  ev = a.Evaluate(1600, {});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AlertEventKind::kResolved);
  EXPECT_EQ(a.firing_count(), 0u);
}

// The time a restored alert's condition had been seen not to hold before the restart counts
// towards its keep_firing_for (the downtime does not): a daemon restarting every five minutes
// resolves a leak alert whose verdict is gone after the 10 minutes of looking, where each restart
// used to start the wait again (and it fired for ever).
TEST(AlertTracker, ARestoredAlertCountsTheTimeItsConditionWasSeenGoneBeforeTheRestart) {
  AlertConfig cfg;
  cfg.resend_interval_s = 0;
  cfg.restore_wait_s = 22;
  cfg.keep_firing_for_by_name["GpuMemoryLeak"] = 600;
  // First run: the condition holds, then is gone for five minutes, when the daemon crashes.
  AlertTracker first(cfg);
  first.RestoreFiring(Leak("0"), 100, 200);
  EXPECT_TRUE(first.Evaluate(1000, {Leak("0")}).empty());
  EXPECT_TRUE(first.Evaluate(1300, {}).empty());
  ASSERT_EQ(first.Active().size(), 1u);
  EXPECT_DOUBLE_EQ(AlertTracker::UnseenFor(first.Active()[0], 1000), 0);
  const double unseen = AlertTracker::UnseenFor(first.Active()[0], 1300);
  EXPECT_DOUBLE_EQ(unseen, 300);
  // Down for an hour; the second run goes on from 300 s, not from 0 and not from an hour.
  AlertTracker second(cfg);
  second.RestoreFiring(Leak("0"), 100, 200, unseen);
  EXPECT_TRUE(second.Evaluate(5000, {}).empty()) << "the downtime is not time seen without the condition";
  ASSERT_EQ(second.Active().size(), 1u);
  EXPECT_DOUBLE_EQ(AlertTracker::UnseenFor(second.Active()[0], 5000), 300);
  EXPECT_TRUE(second.Evaluate(5299, {}).empty());
  auto ev = second.Evaluate(5300, {});
  ASSERT_EQ(ev.size(), 1u) << "300 s before the restart and 300 s after: keep_firing_for is over";
  EXPECT_EQ(ev[0].kind, AlertEventKind::kResolved);
  // Seen gone for longer than keep_firing_for before the restart: the restore wait alone.
  AlertTracker third(cfg);
  third.RestoreFiring(Leak("0"), 100, 200, 900);
  EXPECT_TRUE(third.Evaluate(8000, {}).empty()) << "the daemon looks for restore_wait_s first";
  ev = third.Evaluate(8022, {});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AlertEventKind::kResolved);
}

}  // namespace
}  // namespace vw::detection
