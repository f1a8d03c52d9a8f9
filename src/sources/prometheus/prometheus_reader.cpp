#include "sources/prometheus/prometheus_reader.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "core/ascii.h"
#include "core/time.h"
#include "sources/prometheus/series_merge.h"

namespace vw::prometheus {

namespace {

using nlohmann::json;

double UnitFactor(ValueUnit u) {
  switch (u) {
    case ValueUnit::kKiB: return 1024.0;
    case ValueUnit::kMiB: return 1024.0 * 1024.0;
    case ValueUnit::kGiB: return 1024.0 * 1024.0 * 1024.0;
    case ValueUnit::kAuto:
    case ValueUnit::kBytes: return 1.0;
  }
  return 1.0;
}

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// The unit a metric name implies, if any.
std::optional<ValueUnit> UnitOfName(std::string_view name) {
  if (StartsWith(name, "DCGM_FI_DEV_FB_")) return ValueUnit::kMiB;
  if (EndsWith(name, "_bytes") || EndsWith(name, "_bytes_total")) return ValueUnit::kBytes;
  if (name == "nvidia_gpu_memory_used_bytes") return ValueUnit::kBytes;
  return std::nullopt;
}

// Whether `query` does arithmetic (+ - * / % ^) outside label matchers, range brackets and quoted
// strings: `DCGM_FI_DEV_FB_USED * 1048576` is no longer in MiB, whatever the name inside it says.
bool HasArithmetic(std::string_view query) {
  int depth = 0;  // inside {...} or [...]
  char quote = 0;
  for (size_t i = 0; i < query.size(); ++i) {
    const char c = query[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '"' || c == '\'' || c == '`') {
      quote = c;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    } else if (depth == 0 && (c == '+' || c == '-' || c == '*' || c == '/' || c == '%' || c == '^')) {
      return true;
    }
  }
  return false;
}

// The words of a query that may be metric names (not those inside quoted label values).
std::vector<std::string> NamesIn(const std::string& query) {
  std::string bare;  // the query with its quoted strings blanked out
  char quote = 0;
  for (size_t i = 0; i < query.size(); ++i) {
    const char c = query[i];
    if (quote != 0) {
      if (c == '\\') ++i;
      if (c == quote) quote = 0;
      bare += ' ';
      continue;
    }
    if (c == '"' || c == '\'' || c == '`') quote = c;
    bare += quote != 0 ? ' ' : c;
  }
  static const std::regex name_re("[a-zA-Z_:][a-zA-Z0-9_:]*");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(bare.begin(), bare.end(), name_re); it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[0].str());
  }
  return out;
}

// A plain selector (`name` or `name{...}`): its metric name and its `{...}` (empty when it has
// none); nullopt for any other query.
std::optional<std::pair<std::string, std::string>> PlainSelector(const std::string& query) {
  static const std::regex selector("^\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*(\\{[^}]*\\})?\\s*$");
  std::smatch m;
  if (!std::regex_match(query, m, selector)) return std::nullopt;
  return std::make_pair(m[1].str(), m[2].matched ? m[2].str() : std::string());
}

std::optional<ValueUnit> UnitOfQuery(const std::string& query) {
  if (HasArithmetic(query)) return std::nullopt;  // let the user say (--unit)
  std::optional<ValueUnit> found;
  for (const std::string& name : NamesIn(query)) {
    if (auto u = UnitOfName(name)) {
      if (found && *found != *u) return std::nullopt;  // mixed units: let the user say
      found = u;
    }
  }
  return found;
}

std::string Label(const std::map<std::string, std::string>& labels, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto it = labels.find(n);
    if (it != labels.end() && !it->second.empty()) return it->second;
  }
  return {};
}

// Labels that identify a GPU, for matching a used series with its total.
std::string GpuMatchKey(const std::map<std::string, std::string>& labels) {
  std::string k;
  for (const char* n :
       {"Hostname", "hostname", "instance", "gpu", "UUID", "uuid", "pci_bus_id", "GPU_I_ID", "gpu_instance_id"}) {
    auto it = labels.find(n);
    if (it != labels.end()) k += std::string(n) + "=" + it->second + ";";
  }
  return k;
}

}  // namespace

Result<ValueUnit> ParseValueUnit(std::string_view text) {
  if (text == "auto") return ValueUnit::kAuto;
  if (text == "bytes" || text == "B" || text == "b") return ValueUnit::kBytes;
  if (text == "KiB") return ValueUnit::kKiB;
  if (text == "MiB") return ValueUnit::kMiB;
  if (text == "GiB") return ValueUnit::kGiB;
  return Status::InvalidArgument("--unit '" + std::string(text) + "': expected auto, bytes, KiB, MiB or GiB");
}

double ChooseStep(double range_s, size_t max_points) {
  if (!(range_s > 0) || max_points == 0) return 1;
  return std::max(1.0, std::ceil(range_s / static_cast<double>(max_points)));
}

GpuIdentity IdentityFromLabels(const std::map<std::string, std::string>& labels) {
  GpuIdentity g;
  std::string gpu = Label(labels, {"gpu", "minor_number", "index"});
  if (!gpu.empty()) {
    char* end = nullptr;
    long v = std::strtol(gpu.c_str(), &end, 10);
    if (end != nullptr && *end == '\0') g.index = static_cast<int>(v);
  }
  g.uuid = Label(labels, {"UUID", "uuid"});
  g.pci_bus_id = Label(labels, {"pci_bus_id", "pci_bus"});
  g.name = Label(labels, {"modelName", "model_name", "name"});
  std::string local = !gpu.empty() ? gpu : !g.uuid.empty() ? g.uuid : g.pci_bus_id;
  std::string host = Label(labels, {"Hostname", "hostname", "instance", "node"});
  g.key = host.empty() ? local : (local.empty() ? host : host + "/" + local);
  if (g.key.empty()) g.key = SeriesText(labels);
  // A MIG GPU instance (dcgm-exporter) is a GPU of its own: its memory and size are the instance's.
  if (std::string gi = Label(labels, {"GPU_I_ID", "gpu_instance_id"}); !gi.empty()) {
    g.key += "/gi" + gi;
    const std::string profile = Label(labels, {"GPU_I_PROFILE", "mig_profile"});
    g.name += (g.name.empty() ? "MIG " : " MIG ") + (profile.empty() ? "GPU instance " + gi : profile);
  }
  return g;
}

std::string CompanionTotalQuery(const std::string& query) {
  const auto plain = PlainSelector(query);
  if (!plain) return {};
  const auto& [name, sel] = *plain;
  if (name == "DCGM_FI_DEV_FB_USED") {
    return "DCGM_FI_DEV_FB_USED" + sel + " + DCGM_FI_DEV_FB_FREE" + sel;
  }
  if (name == "vramwatch_gpu_memory_used_bytes") return "vramwatch_gpu_memory_total_bytes" + sel;
  if (name == "vramwatch_mig_instance_memory_used_bytes") return "vramwatch_mig_instance_memory_total_bytes" + sel;
  if (name == "nvidia_smi_memory_used_bytes") return "nvidia_smi_memory_total_bytes" + sel;
  return {};
}

std::string NotUsedMemoryReason(std::string_view metric) {
  struct NotUsed {
    const char* name;
    const char* what;
    const char* instead;
  };
  static constexpr NotUsed kNotUsed[] = {
      {"DCGM_FI_DEV_FB_FREE", "the free memory", "DCGM_FI_DEV_FB_USED"},
      {"DCGM_FI_DEV_FB_RESERVED", "the memory the driver reserves", "DCGM_FI_DEV_FB_USED"},
      {"DCGM_FI_DEV_FB_TOTAL", "the card's size", "DCGM_FI_DEV_FB_USED"},
      {"DCGM_FI_DEV_FB_USED_PERCENT", "a percentage, not a size", "DCGM_FI_DEV_FB_USED"},
      {"vramwatch_gpu_memory_free_bytes", "the free memory", "vramwatch_gpu_memory_used_bytes"},
      {"vramwatch_gpu_memory_total_bytes", "the card's size", "vramwatch_gpu_memory_used_bytes"},
      {"vramwatch_mig_instance_memory_total_bytes", "the MIG instance's size",
       "vramwatch_mig_instance_memory_used_bytes"},
      {"vramwatch_gpu_memory_reserved_bytes", "the memory the driver reserves", "vramwatch_gpu_memory_used_bytes"},
      {"nvidia_smi_memory_free_bytes", "the free memory", "nvidia_smi_memory_used_bytes"},
      {"nvidia_smi_memory_total_bytes", "the card's size", "nvidia_smi_memory_used_bytes"},
      {"nvidia_smi_memory_reserved_bytes", "the memory the driver reserves", "nvidia_smi_memory_used_bytes"},
  };
  for (const NotUsed& n : kNotUsed) {
    if (metric == n.name) {
      return std::string(n.name) + " is " + n.what + ", not the used memory a leak shows in: query " + n.instead +
             " (the card's size is read beside it)";
    }
  }
  return {};
}

namespace {

// One [time, "value"] pair into `s`.
Status AddPoint(const json& p, const std::string& query, double factor, PrometheusSeries& s) {
  if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_string()) {
    return Status::ParseError("Prometheus response for '" + query + "', series " + SeriesText(s.labels) +
                              ": expected [time, \"value\"], got " + p.dump());
  }
  SeriesPoint point;
  point.t = p[0].get<double>();
  if (!PlausibleTime(point.t)) {
    return Status::ParseError("Prometheus response for '" + query + "', series " + SeriesText(s.labels) + ": time " +
                              p[0].dump() + " is not epoch seconds before the year 10000");
  }
  const std::string& v = p[1].get_ref<const std::string&>();
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0') {
    return Status::ParseError("Prometheus response for '" + query + "', series " + SeriesText(s.labels) + ": value '" +
                              v + "' is not a number");
  }
  const double bytes = x * factor;
  if (std::isfinite(x) && (!std::isfinite(bytes) || bytes > kMaxPlausibleBytes)) {  // 1e305 MiB overflows
    if (s.implausible++ == 0) s.first_implausible = v;
    s.implausible_at.push_back(point.t);
  } else if (std::isfinite(bytes) && bytes >= 0) {
    point.used_bytes = static_cast<uint64_t>(std::llround(bytes));
  }
  s.points.push_back(point);
  return Status::Ok();
}

// ParseQueryResponse without the guard: json accessors on a value of another type throw.
// `used_memory`: the series must be used memory (a metric of another kind is refused); false for
// the card-size query.
Result<PrometheusFetch> ParseQueryResponseOrThrow(std::string_view body, const std::string& query, ValueUnit unit,
                                                  bool used_memory) {
  auto j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::ParseError("Prometheus response for '" + query + "': not a JSON object");
  }
  if (j.value("status", "") != "success") {
    return Status::InvalidArgument("Prometheus query '" + query + "' failed: " + j.value("error", "unknown error"));
  }
  if (!j.contains("data") || !j["data"].is_object()) {
    return Status::ParseError("Prometheus response for '" + query + "': no data object");
  }
  PrometheusFetch out;
  if (j.contains("warnings") && j["warnings"].is_array()) {
    for (const json& w : j["warnings"]) {
      if (w.is_string()) out.warnings.push_back(w.get<std::string>());
    }
  }
  const json& data = j["data"];
  const std::string type = data.value("resultType", "");
  if (type != "matrix" && type != "vector") {
    return Status::ParseError("Prometheus response for '" + query + "': expected a matrix or vector, got '" + type +
                              "'");
  }
  const std::optional<ValueUnit> query_unit = UnitOfQuery(query);
  static const json kNone = json::array();
  auto result = data.find("result");
  const json& results = result == data.end() ? kNone : *result;
  if (!results.is_array()) {
    return Status::ParseError("Prometheus response for '" + query + "': unexpected JSON (a result that is not a list)");
  }
  for (const json& r : results) {
    if (!r.is_object()) {
      return Status::ParseError("Prometheus response for '" + query +
                                "': unexpected JSON (a result that is not an object: " + r.dump() + ")");
    }
    PrometheusSeries s;
    if (r.contains("metric") && r["metric"].is_object()) {
      for (const auto& [k, v] : r["metric"].items()) {
        if (v.is_string()) s.labels[k] = v.get<std::string>();
      }
    }
    if (auto n = s.labels.find("__name__"); used_memory && n != s.labels.end()) {
      if (std::string why = NotUsedMemoryReason(n->second); !why.empty()) return Status::InvalidArgument(why);
    }
    s.gpu = IdentityFromLabels(s.labels);
    if (auto it = s.labels.find("pid"); it != s.labels.end()) {
      char* end = nullptr;
      long long pid = std::strtoll(it->second.c_str(), &end, 10);
      if (end != nullptr && *end == '\0') s.pid = pid;
    }
    if (unit != ValueUnit::kAuto) {
      s.unit = unit;
    } else {
      std::optional<ValueUnit> u;
      if (auto n = s.labels.find("__name__"); n != s.labels.end()) u = UnitOfName(n->second);
      if (!u) u = query_unit;
      if (!u) {
        return Status::InvalidArgument("cannot tell the unit of '" + query + "' (" + SeriesText(s.labels) +
                                       "); pass --unit bytes or --unit MiB");
      }
      s.unit = *u;
    }
    const double factor = UnitFactor(s.unit);
    if (type == "matrix") {
      if (auto values = r.find("values"); values != r.end()) {  // read in place: a fleet's answer is large
        if (!values->is_array()) {
          return Status::ParseError("Prometheus response for '" + query + "', series " + SeriesText(s.labels) +
                                    ": unexpected JSON (values that are not an array)");
        }
        s.points.reserve(values->size());
        for (const json& p : *values) VW_RETURN_IF_ERROR(AddPoint(p, query, factor, s));
      }
    } else if (r.contains("value")) {
      VW_RETURN_IF_ERROR(AddPoint(r["value"], query, factor, s));
    }
    out.series.push_back(std::move(s));
  }
  return out;
}

// The median spacing of the samples of each series of `query` (a plain selector) over 10 minutes
// ending at `at`; the finest of them: the exporter's scrape interval. Absent when no series has
// four samples there or the server refuses the query. A server that does not answer (no
// connection, no complete answer within the timeout) is an error: the queries after it would wait
// as long for nothing.
Result<std::optional<double>> FinestSpacing(const Endpoint& e, const std::string& query, double at,
                                            const FetchOptions& options) {
  bool answered = false;
  auto body = Post(e, "/api/v1/query", {{"query", query + "[10m]"}, {"time", FormatSeconds(at)}}, options, &answered);
  if (!body.ok() && !answered) return body.status();
  if (!body.ok()) return std::optional<double>();
  std::optional<double> finest;
  for (const auto& [labels, points] : ParseMatrixPoints(*body)) {
    std::vector<double> gaps;
    for (size_t k = 1; k < points.size(); ++k) {
      if (points[k].first > points[k - 1].first) gaps.push_back(points[k].first - points[k - 1].first);
    }
    if (gaps.size() < 3) continue;
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
    const double median = gaps[gaps.size() / 2];
    if (!finest || median < *finest) finest = median;
  }
  return finest;
}

// ParseQueryResponseOrThrow with its exceptions turned into errors: a response of the right
// outline with a value of another type inside ("status": 5, a result that is not an object) is an
// error to report, not an exception to end the program.
Result<PrometheusFetch> ParseQuery(std::string_view body, const std::string& query, ValueUnit unit, bool used_memory) {
  try {
    return ParseQueryResponseOrThrow(body, query, unit, used_memory);
  } catch (const json::exception& e) {
    return Status::ParseError("Prometheus response for '" + query + "': unexpected JSON (" + e.what() + ")");
  }
}

}  // namespace

Result<PrometheusFetch> ParseQueryResponse(std::string_view body, const std::string& query, ValueUnit unit) {
  return ParseQuery(body, query, unit, /*used_memory=*/true);
}

std::string NotUsedQueryReason(const std::string& query) {
  if (HasArithmetic(query)) return {};  // total - free is used memory: the user says what it is
  std::string first_not_used;
  for (const std::string& name : NamesIn(query)) {
    const std::string why = NotUsedMemoryReason(name);
    if (!why.empty() && first_not_used.empty()) first_not_used = why;
    const std::string lower = AsciiLower(name);
    if (why.empty() && lower.find("used") != std::string::npos) return {};  // used memory is in it
  }
  return first_not_used;
}

bool SeriesEnded(const PrometheusSeries& s, double newest_t, double step_s) {
  return !s.points.empty() && newest_t - s.points.back().t > std::max(600.0, 10 * step_s);
}

Result<PrometheusFetch> FetchPrometheusSeries(const std::string& url, const std::string& query, double range_s,
                                              std::optional<double> end_time, ValueUnit unit,
                                              const FetchOptions& options) {
  if (query.empty()) return Status::InvalidArgument("--query is empty");
  if (!(range_s > 0)) return Status::InvalidArgument("--range must be positive");
  auto ep = ParseUrl(url);
  if (!ep.ok()) return ep.status();
  const int ways = (!ep->user.empty() || !ep->password.empty() ? 1 : 0) + (options.bearer_token.empty() ? 0 : 1) +
                   (options.basic_user.empty() ? 0 : 1);
  if (ways > 1) {
    return Status::InvalidArgument("--prometheus '" + ep->shown +
                                   "': credentials are given more than one way (a user and password in the URL, "
                                   "--basic-auth-file, --bearer-token-file): give one of them");
  }
  if (std::string why = NotUsedQueryReason(query); !why.empty()) return Status::InvalidArgument(why);
  const bool selector = PlainSelector(query).has_value();
  const double end =
      end_time.value_or(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
  double step = ChooseStep(range_s);
  if (options.step_s) {
    step = *options.step_s;
  } else if (selector) {
    // Fewer points to fetch: half the finest scrape interval (each sample read once or twice, so
    // none is missed to jitter; KeepEachSampleOnce keeps one), read where the series have data.
    for (double at : {end, end - range_s / 2, end - range_s + 600}) {
      auto spacing = FinestSpacing(*ep, query, at, options);
      if (!spacing.ok()) return spacing.status();
      if (*spacing) {
        step = std::max(step, std::round(**spacing / 2 * 1000) / 1000);
        break;
      }
    }
  }
  if (range_s / step > 11000) {
    return Status::InvalidArgument("a step of " + std::to_string(step) + " s over " + std::to_string(range_s) +
                                   " s exceeds Prometheus' 11000 points per series");
  }
  auto range_params = [&](const std::string& q) {
    return std::vector<std::pair<std::string, std::string>>{{"query", q},
                                                            {"start", FormatSeconds(end - range_s)},
                                                            {"end", FormatSeconds(end)},
                                                            {"step", FormatSeconds(step)}};
  };
  auto body = Post(*ep, "/api/v1/query_range", range_params(query), options);
  if (!body.ok()) return body.status();
  auto fetched = ParseQuery(*body, query, unit, /*used_memory=*/true);
  std::string().swap(*body);  // the text is read: free it before the next one
  if (!fetched.ok()) return fetched.status();
  fetched->step_s = step;
  fetched->end_t = end;
  fetched->each_sample_once = false;
  if (selector && !fetched->series.empty()) {
    auto times_body = Post(*ep, "/api/v1/query_range", range_params("timestamp(" + query + ")"), options);
    if (times_body.ok()) {
      const auto times = ParseMatrixPoints(*times_body);
      std::string().swap(*times_body);
      bool all = true;
      for (PrometheusSeries& s : fetched->series) all = KeepEachSampleOnce(s, times) && all;
      fetched->each_sample_once = all;
    }
  }
  fetched->series = MergeSeriesOfOneGpu(std::move(fetched->series), kLookBackSeconds + 2 * step);
  for (const PrometheusSeries& s : fetched->series) {
    if (!s.points.empty()) fetched->newest_t = std::max(fetched->newest_t, s.points.back().t);
  }
  if (!options.fetch_total) return fetched;
  const std::string total_query = CompanionTotalQuery(query);
  if (total_query.empty() || fetched->series.empty()) return fetched;
  // The card size at the end of the range; for a series whose samples stop before it (a card
  // replaced, an exporter gone, or every series ending before --end), at its own last sample: an
  // instant query sees only the last 5 minutes before its time, and none of a series marked stale.
  // Series of one exporter share their sample times, so this is a query per host at most (16 in
  // all, newest first). The size is a bonus: a failing query leaves it unknown.
  std::set<double> when{end};
  std::set<double> last_times;
  for (const PrometheusSeries& s : fetched->series) {
    if (!s.points.empty() && end - s.points.back().t > std::max(60.0, 2 * step)) last_times.insert(s.points.back().t);
  }
  for (auto t = last_times.rbegin(); t != last_times.rend() && when.size() < 17; ++t) when.insert(*t);
  std::map<std::string, uint64_t> by_gpu;
  for (auto t = when.rbegin(); t != when.rend(); ++t) {
    auto total_body = Post(*ep, "/api/v1/query", {{"query", total_query}, {"time", FormatSeconds(*t)}}, options);
    if (!total_body.ok()) continue;
    auto totals = ParseQuery(*total_body, total_query, fetched->series.front().unit, /*used_memory=*/false);
    if (!totals.ok()) continue;
    for (const auto& total : totals->series) {
      if (!total.points.empty() && total.points.back().used_bytes) {
        by_gpu.emplace(GpuMatchKey(total.labels), *total.points.back().used_bytes);  // the latest first
      }
    }
  }
  for (auto& s : fetched->series) {
    if (auto it = by_gpu.find(GpuMatchKey(s.labels)); it != by_gpu.end()) s.total_bytes = it->second;
  }
  return fetched;
}

}  // namespace vw::prometheus
