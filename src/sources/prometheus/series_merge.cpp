#include "sources/prometheus/series_merge.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

namespace vw::prometheus {

namespace {

using nlohmann::json;

// The spans where a series holds values: runs of points at most kLookBackSeconds apart (as
// Prometheus reads a series between two samples), as sorted, disjoint [from, to] in seconds.
using Runs = std::vector<std::pair<double, double>>;

Runs RunsOf(const PrometheusSeries& s) {
  Runs runs;
  for (size_t i = 0; i < s.points.size(); ++i) {
    const double t = s.points[i].t;
    if (i > 0 && t - s.points[i - 1].t <= kLookBackSeconds) {
      runs.back().second = t;
    } else {
      runs.emplace_back(t, t);
    }
  }
  return runs;
}

// The longest stretch (seconds) over which both hold values: a series that takes turns with
// another overlaps it by the look-back at each turn, never longer.
double Overlap(const Runs& a, const Runs& b) {
  double both = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    both = std::max(both, std::min(a[i].second, b[j].second) - std::max(a[i].first, b[j].first));
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return both;
}

Runs Union(const Runs& a, const Runs& b) {
  Runs all = a;
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  Runs out;
  for (const auto& r : all) {
    if (!out.empty() && r.first <= out.back().second) {
      out.back().second = std::max(out.back().second, r.second);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

// The labels whose values differ between `series` (one that some lack differs too), __name__ aside.
std::set<std::string> DifferingLabels(const std::vector<PrometheusSeries>& series) {
  std::set<std::string> differ;
  if (series.empty()) return differ;
  const auto& first = series.front().labels;
  for (size_t k = 1; k < series.size(); ++k) {
    for (const auto& [name, value] : series[k].labels) {
      auto own = first.find(name);
      if (own == first.end() || own->second != value) differ.insert(name);
    }
    for (const auto& [name, value] : first) {
      if (series[k].labels.count(name) == 0) differ.insert(name);
    }
  }
  differ.erase("__name__");
  return differ;
}

}  // namespace

std::vector<PrometheusSeries> MergeSeriesOfOneGpu(std::vector<PrometheusSeries> series, double overlap_s) {
  // Groups in the order their first series came.
  std::map<std::tuple<std::string, std::string, std::optional<int64_t>, ValueUnit>, size_t> group_of;
  std::vector<std::vector<PrometheusSeries>> groups;
  for (PrometheusSeries& s : series) {
    auto key = std::make_tuple(s.gpu.key, s.gpu.uuid, s.pid, s.unit);
    auto [it, added] = group_of.emplace(key, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(std::move(s));
  }
  const auto first_t = [](const PrometheusSeries& s) { return s.points.empty() ? 0.0 : s.points.front().t; };
  const auto last_t = [](const PrometheusSeries& s) { return s.points.empty() ? -1.0 : s.points.back().t; };
  std::vector<PrometheusSeries> out;
  for (std::vector<PrometheusSeries>& g : groups) {
    // Chains of series that follow one another: each holds values at the same times as the chain
    // for at most `overlap_s` at a stretch (Prometheus' look-back after a series' last sample). Series that hold
    // values at the same times for longer are not one memory read twice, and stay apart; a series
    // that comes back (idle, a pod, idle again) joins its chain again.
    std::stable_sort(g.begin(), g.end(),
                     [&](const PrometheusSeries& a, const PrometheusSeries& b) { return first_t(a) < first_t(b); });
    struct Chain {
      std::vector<PrometheusSeries> series;
      Runs runs;
    };
    std::vector<Chain> chains;
    for (PrometheusSeries& s : g) {
      Runs runs = RunsOf(s);
      Chain* joined = nullptr;
      for (Chain& c : chains) {
        if (Overlap(c.runs, runs) <= overlap_s) {
          joined = &c;
          break;
        }
      }
      if (joined == nullptr) {
        chains.emplace_back();
        joined = &chains.back();
      }
      joined->runs = Union(joined->runs, runs);
      joined->series.push_back(std::move(s));
    }
    std::vector<PrometheusSeries> merged_chains;
    for (Chain& chain : chains) {
      std::vector<PrometheusSeries>& c = chain.series;
      // The series that reaches furthest first: its point wins a time several hold, its labels stay.
      std::stable_sort(c.begin(), c.end(),
                       [&](const PrometheusSeries& a, const PrometheusSeries& b) { return last_t(a) > last_t(b); });
      const std::set<std::string> changed = DifferingLabels(c);
      PrometheusSeries merged = std::move(c.front());
      if (c.size() > 1) {
        std::vector<SeriesPoint> all = std::move(merged.points);
        for (size_t k = 1; k < c.size(); ++k) {
          all.insert(all.end(), c[k].points.begin(), c[k].points.end());
          merged.implausible += c[k].implausible;
          if (merged.first_implausible.empty()) merged.first_implausible = c[k].first_implausible;
          if (!merged.total_bytes) merged.total_bytes = c[k].total_bytes;
        }
        // Stable: at a time several hold, the first (the furthest-reaching series) is kept.
        std::stable_sort(all.begin(), all.end(), [](const SeriesPoint& a, const SeriesPoint& b) { return a.t < b.t; });
        all.erase(
            std::unique(all.begin(), all.end(), [](const SeriesPoint& a, const SeriesPoint& b) { return a.t == b.t; }),
            all.end());
        merged.points = std::move(all);
        merged.merged = c.size();
        merged.changed_labels.assign(changed.begin(), changed.end());
      }
      merged_chains.push_back(std::move(merged));
    }
    if (merged_chains.size() > 1) {
      // Told apart by the labels whose values differ between them: "node-1/3/pod=train-b".
      const std::set<std::string> differing = DifferingLabels(merged_chains);
      for (PrometheusSeries& m : merged_chains) {
        for (const std::string& name : differing) {
          auto v = m.labels.find(name);
          m.gpu.key += "/" + name + "=" + (v == m.labels.end() ? std::string() : v->second);
        }
        m.apart = merged_chains.size();
      }
    }
    for (PrometheusSeries& m : merged_chains) out.push_back(std::move(m));
  }
  // A card replaced at the same place (another UUID): both keep the UUID in their key.
  std::map<std::pair<std::string, std::optional<int64_t>>, std::set<std::string>> uuids_of;
  for (const PrometheusSeries& s : out) uuids_of[{s.gpu.key, s.pid}].insert(s.gpu.uuid);
  for (PrometheusSeries& s : out) {
    if (uuids_of[{s.gpu.key, s.pid}].size() > 1 && !s.gpu.uuid.empty()) s.gpu.key += "/" + s.gpu.uuid;
  }
  return out;
}

MatrixPoints ParseMatrixPoints(const std::string& body) {
  MatrixPoints out;
  auto j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("data") || !j["data"].is_object()) return out;
  try {
    auto result = j["data"].find("result");
    if (result == j["data"].end() || !result->is_array()) return out;
    for (const json& r : *result) {
      if (!r.is_object()) continue;
      std::map<std::string, std::string> labels;
      if (auto metric = r.find("metric"); metric != r.end() && metric->is_object()) {
        for (const auto& [k, v] : metric->items()) {
          if (v.is_string()) labels[k] = v.get<std::string>();
        }
      }
      auto values = r.find("values");
      if (values == r.end() || !values->is_array()) continue;
      auto& times = out[LabelsWithoutName(labels)];
      times.reserve(values->size());
      for (const json& p : *values) {
        if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_string()) continue;
        times.emplace_back(p[0].get<double>(), std::strtod(p[1].get_ref<const std::string&>().c_str(), nullptr));
      }
    }
  } catch (const json::exception&) {
    out.clear();
  }
  return out;
}

bool KeepEachSampleOnce(PrometheusSeries& s, const MatrixPoints& times) {
  auto it = times.find(LabelsWithoutName(s.labels));
  if (it == times.end()) return false;
  const std::vector<std::pair<double, double>>& read = it->second;
  std::vector<SeriesPoint> kept;
  kept.reserve(s.points.size());
  size_t k = 0;
  size_t next_implausible = 0;  // into s.implausible_at (step times, in order like the points)
  size_t implausible = 0;       // of the points kept
  std::optional<double> last_sample;
  for (const SeriesPoint& p : s.points) {
    while (next_implausible < s.implausible_at.size() && s.implausible_at[next_implausible] < p.t) ++next_implausible;
    const bool is_implausible = next_implausible < s.implausible_at.size() && s.implausible_at[next_implausible] == p.t;
    while (k < read.size() && read[k].first < p.t) ++k;
    if (k == read.size() || read[k].first != p.t) {
      kept.push_back(p);  // no time for this step: kept as read
      implausible += is_implausible ? 1 : 0;
      continue;
    }
    const double sample_t = read[k].second;
    if (last_sample && sample_t == *last_sample) continue;  // the same sample again
    last_sample = sample_t;
    kept.push_back({sample_t, p.used_bytes});
    implausible += is_implausible ? 1 : 0;
  }
  s.points = std::move(kept);
  s.implausible = implausible;  // each sample once, as the points (the first of them is kept)
  s.implausible_at.clear();
  return true;
}

}  // namespace vw::prometheus
