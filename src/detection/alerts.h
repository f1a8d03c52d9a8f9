// AlertTracker: turns "this condition holds now" into alerts with a lifecycle, the way Prometheus
// does: a condition that appears is PENDING; once it has held for its rule's `for:` duration it is
// FIRING (notify); when it stops holding, a firing alert is RESOLVED (notify) and a pending one is
// dropped silently. Firing alerts are re-announced every resend_interval_s so a receiver
// (Alertmanager) keeps them open. One alert per dedup key: its name plus its identifying labels.
//
// The caller evaluates its rules (leak verdict, orphaned memory, zombie/stuck holder, stale GPU)
// at each tick and passes the conditions that hold; times are whatever clock the caller uses
// (wall clock live, trace time under --replay), in seconds.
// Threading: one thread (the sampler).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/finding.h"

namespace vw::detection {

enum class AlertState { kPending, kFiring, kResolved };
std::string_view AlertStateName(AlertState s);  // "pending", "firing", "resolved"

// A rule's condition holding for one instance now.
struct AlertCondition {
  std::string name;                                // alert name, e.g. "GpuMemoryLeak"
  std::map<std::string, std::string> labels;       // identify the instance (gpu, pid, hostname...)
  std::map<std::string, std::string> annotations;  // summary, description: refreshed every tick
  Severity severity = Severity::kWarning;
};

struct Alert {
  std::string key;  // dedup key: name{label=value,...} with labels sorted
  AlertCondition condition;
  AlertState state = AlertState::kPending;
  double active_since = 0;            // first tick the condition held
  std::optional<double> fired_at;     // when it went firing
  std::optional<double> resolved_at;  // when it resolved
  double last_notified = 0;
  // The last tick its condition held. For an alert restored after a restart and not seen again,
  // the restart's first Evaluate less how long its condition had been seen not to hold before the
  // restart: the time the daemon was down does not count as seen either way.
  double last_held = 0;
  // The highest severity it has fired at: a firing alert fires again only when it turns worse
  // than that, so a runway wobbling around --critical-runway pages once, not at every crossing.
  Severity fired_severity = Severity::kOk;
};

// A change worth telling the sinks about.
enum class AlertEventKind { kFiring, kResolved, kResend };
std::string_view AlertEventKindName(AlertEventKind k);  // "firing", "resolved", "resend"

struct AlertEvent {
  AlertEventKind kind = AlertEventKind::kFiring;
  double t = 0;  // when the tracker saw the change
  Alert alert;   // the alert after the change
};

// The default `for:` of the leak alerts (GpuMemoryLeak, GpuProcessMemoryLeak), in seconds: how
// long a leak verdict must hold before its alert fires. `watch --for` and the evaluation's
// vramwatch_alert column (`vw-evaluate --alert-for`) both start from it.
inline constexpr double kLeakAlertForSeconds = 600;

struct AlertConfig {
  double default_for_s = 300;                 // persistence before firing
  std::map<std::string, double> for_by_name;  // per-rule `for:` durations
  // Per rule: a firing alert whose condition stops holding resolves only once it has not held
  // for this long (Prometheus's keep_firing_for): a verdict that flickers for a check or two (a
  // steady leak called `settling` at one check) does not resolve it and page again. Seconds.
  std::map<std::string, double> keep_firing_for_by_name;
  double resend_interval_s = 60;  // 0: never re-announce
  // After a restart, how long (seconds from the first Evaluate) an alert restored as firing waits
  // for its condition to hold again before it resolves: a finding is found again only after the
  // daemon has looked for it (its grace, a process refresh), and an alert resolved meanwhile
  // would notify a resolve and then a new alert for a condition that never went away.
  double restore_wait_s = 0;
};

std::string AlertKey(const AlertCondition& c);

class AlertTracker {
 public:
  explicit AlertTracker(AlertConfig config = {}) : config_(std::move(config)) {}

  // `holding`: every condition that holds at `now`. Returns the notifications due, in key order.
  std::vector<AlertEvent> Evaluate(double now, const std::vector<AlertCondition>& holding);

  // Pending and firing alerts, in key order (restored ones still waiting for their condition too).
  std::vector<Alert> Active() const;
  size_t firing_count() const;

  // After a restart: an alert that was firing before is firing again as soon as its condition
  // holds, without waiting for `for:` again (the caller restores these from its store). While its
  // condition has not been seen again it stays firing (re-announced every resend_interval_s, as
  // any firing alert) for restore_wait_s from the first Evaluate, and until its condition has not
  // held for its rule's keep_firing_for, counting `unseen_s` (seconds: how long it had been seen
  // not to hold before the restart, what UnseenFor gave then) and the time since the first
  // Evaluate; it resolves after that. So a daemon restarting every few minutes resolves an alert
  // whose condition is gone, rather than starting its wait again at every restart.
  // Its summary ends with kRestoredSuffix until its condition holds again.
  void RestoreFiring(const AlertCondition& c, double active_since, double fired_at, double unseen_s = 0);
  static constexpr std::string_view kRestoredSuffix = " (as before the restart; not seen since)";

  // How long (seconds) a firing alert's condition has been seen not to hold at `now`: 0 while it
  // holds; for a restored one, with the time seen before the restart (see RestoreFiring). What a
  // caller stores to restore the alert with.
  static double UnseenFor(const Alert& a, double now);

 private:
  double ForOf(const std::string& name) const;
  double KeepFiringForOf(const std::string& name) const;
  // A firing alert last announced resend_interval_s ago or more is re-announced (a kResend event).
  void ResendIfDue(Alert& a, double now, std::vector<AlertEvent>& events) const;
  AlertConfig config_;
  std::map<std::string, Alert> active_;
  // Firing before a restart, not yet seen again. Until the first Evaluate their last_held is less
  // than 0: minus the time their condition had been seen gone (RestoreFiring's unseen_s).
  std::map<std::string, Alert> restored_;
  std::optional<double> restore_start_;  // the first Evaluate after RestoreFiring (seconds)
};

}  // namespace vw::detection
