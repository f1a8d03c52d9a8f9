#include "detection/alerts.h"

#include <algorithm>
#include <set>

namespace vw::detection {

std::string_view AlertStateName(AlertState s) {
  switch (s) {
    case AlertState::kPending: return "pending";
    case AlertState::kFiring: return "firing";
    case AlertState::kResolved: return "resolved";
  }
  return "pending";
}

std::string_view AlertEventKindName(AlertEventKind k) {
  switch (k) {
    case AlertEventKind::kFiring: return "firing";
    case AlertEventKind::kResolved: return "resolved";
    case AlertEventKind::kResend: return "resend";
  }
  return "firing";
}

std::string AlertKey(const AlertCondition& c) {
  std::string k = c.name + "{";
  bool first = true;
  for (const auto& [name, value] : c.labels) {  // std::map: sorted
    if (!first) k += ',';
    first = false;
    k += name;
    k += '=';
    k += value;
  }
  k += '}';
  return k;
}

double AlertTracker::ForOf(const std::string& name) const {
  auto it = config_.for_by_name.find(name);
  return it != config_.for_by_name.end() ? it->second : config_.default_for_s;
}

double AlertTracker::KeepFiringForOf(const std::string& name) const {
  auto it = config_.keep_firing_for_by_name.find(name);
  return it != config_.keep_firing_for_by_name.end() ? it->second : 0;
}

void AlertTracker::ResendIfDue(Alert& a, double now, std::vector<AlertEvent>& events) const {
  if (config_.resend_interval_s <= 0 || now - a.last_notified < config_.resend_interval_s) return;
  a.last_notified = now;
  events.push_back({AlertEventKind::kResend, now, a});
}

void AlertTracker::RestoreFiring(const AlertCondition& c, double active_since, double fired_at, double unseen_s) {
  Alert a;
  a.key = AlertKey(c);
  a.condition = c;
  a.state = AlertState::kFiring;
  a.active_since = active_since;
  a.fired_at = fired_at;
  a.last_notified = fired_at;
  a.fired_severity = c.severity;
  a.last_held = -std::max(0.0, unseen_s);  // relative to the first Evaluate, which adds its time
  // Until its condition is seen again, what it says (a runway, a rate) is from before the restart:
  // its re-announcements say so (once its condition holds, they carry the condition's own words).
  if (auto s = a.condition.annotations.find("summary"); s != a.condition.annotations.end()) {
    if (!s->second.ends_with(kRestoredSuffix)) s->second += kRestoredSuffix;
  }
  restored_[a.key] = a;
}

double AlertTracker::UnseenFor(const Alert& a, double now) {
  return std::max(0.0, now - a.last_held);
}

std::vector<AlertEvent> AlertTracker::Evaluate(double now, const std::vector<AlertCondition>& holding) {
  std::vector<AlertEvent> events;
  std::set<std::string> seen;
  for (const AlertCondition& c : holding) {
    std::string key = AlertKey(c);
    if (!seen.insert(key).second) continue;  // duplicates in one tick count once
    auto it = active_.find(key);
    if (it == active_.end()) {
      Alert a;
      if (auto r = restored_.find(key); r != restored_.end()) {
        a = r->second;
        restored_.erase(r);
      } else {
        a.key = key;
        a.state = AlertState::kPending;
        a.active_since = now;
      }
      it = active_.emplace(key, std::move(a)).first;
    }
    Alert& a = it->second;
    a.condition = c;  // annotations refresh (current rate, runway)
    a.last_held = now;
    if (a.state == AlertState::kPending && now - a.active_since >= ForOf(c.name)) {
      a.state = AlertState::kFiring;
      a.fired_at = now;
      a.last_notified = now;
      a.fired_severity = c.severity;
      events.push_back({AlertEventKind::kFiring, now, a});
    } else if (a.state == AlertState::kFiring && c.severity > a.fired_severity) {
      // Worse than it ever fired (a leak's runway fell under --critical-runway): it fires again
      // at once at the new severity, not at the next resend (never, under --replay).
      a.last_notified = now;
      a.fired_severity = c.severity;
      events.push_back({AlertEventKind::kFiring, now, a});
    } else if (a.state == AlertState::kFiring) {
      ResendIfDue(a, now, events);
    }
  }
  for (auto it = active_.begin(); it != active_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    Alert& kept = it->second;
    if (kept.state == AlertState::kFiring && now - kept.last_held < KeepFiringForOf(kept.condition.name)) {
      // Kept firing (its condition may be back at the next check), and re-announced like any
      // firing alert, or a receiver that was not told would close it at its endsAt.
      ResendIfDue(kept, now, events);
      ++it;
      continue;
    }
    if (it->second.state == AlertState::kFiring) {
      Alert a = it->second;
      a.state = AlertState::kResolved;
      a.resolved_at = now;
      events.push_back({AlertEventKind::kResolved, now, a});
    }
    it = active_.erase(it);
  }
  // Alerts restored from before a restart whose condition has not held again are resolved once
  // restore_wait_s has passed since the first Evaluate and their condition has not held for their
  // rule's keep_firing_for (before the restart and since); until then they are re-announced like
  // any firing alert.
  if (!restored_.empty() && !restore_start_) {
    restore_start_ = now;
    for (auto& [key, a] : restored_) a.last_held += now;
  }
  for (auto it = restored_.begin(); it != restored_.end();) {
    Alert& a = it->second;
    if (now < *restore_start_ + config_.restore_wait_s || UnseenFor(a, now) < KeepFiringForOf(a.condition.name)) {
      ResendIfDue(a, now, events);
      ++it;
      continue;
    }
    Alert r = a;
    r.state = AlertState::kResolved;
    r.resolved_at = now;
    events.push_back({AlertEventKind::kResolved, now, r});
    it = restored_.erase(it);
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const AlertEvent& x, const AlertEvent& y) { return x.alert.key < y.alert.key; });
  return events;
}

std::vector<Alert> AlertTracker::Active() const {
  std::map<std::string, Alert> all = active_;
  all.insert(restored_.begin(), restored_.end());
  std::vector<Alert> out;
  for (const auto& [k, a] : all) out.push_back(a);
  return out;
}

size_t AlertTracker::firing_count() const {
  size_t n = restored_.size();  // firing, and never in active_ at the same time
  for (const auto& [k, a] : active_) n += a.state == AlertState::kFiring ? 1 : 0;
  return n;
}

}  // namespace vw::detection
