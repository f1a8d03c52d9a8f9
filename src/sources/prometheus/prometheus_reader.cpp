#include "sources/prometheus/prometheus_reader.h"

#include <httplib.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/time.h"

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

std::optional<ValueUnit> UnitOfQuery(const std::string& query) {
  if (HasArithmetic(query)) return std::nullopt;  // let the user say (--unit)
  static const std::regex name_re("[a-zA-Z_:][a-zA-Z0-9_:]*");
  std::optional<ValueUnit> found;
  for (auto it = std::sregex_iterator(query.begin(), query.end(), name_re); it != std::sregex_iterator(); ++it) {
    if (auto u = UnitOfName((*it)[0].str())) {
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

std::string SeriesText(const std::map<std::string, std::string>& labels) {
  std::string s;
  auto name = labels.find("__name__");
  if (name != labels.end()) s = name->second;
  s += '{';
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (k == "__name__") continue;
    if (!first) s += ',';
    first = false;
    s += k + "=\"" + v + "\"";
  }
  return s + '}';
}

// Labels that identify a GPU, for matching a used series with its total.
std::string GpuMatchKey(const std::map<std::string, std::string>& labels) {
  std::string k;
  for (const char* n : {"Hostname", "hostname", "instance", "gpu", "UUID", "uuid", "pci_bus_id"}) {
    auto it = labels.find(n);
    if (it != labels.end()) k += std::string(n) + "=" + it->second + ";";
  }
  return k;
}

struct Endpoint {
  std::string origin;  // scheme://host:port
  std::string base;    // path prefix without trailing slash
};

Result<Endpoint> ParseUrl(const std::string& url) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos ||
      (url.compare(0, scheme_end, "http") != 0 && url.compare(0, scheme_end, "https") != 0)) {
    return Status::InvalidArgument("--prometheus '" + url + "': expected http(s)://HOST[:PORT][/PATH]");
  }
  size_t path_start = url.find('/', scheme_end + 3);
  Endpoint e;
  e.origin = path_start == std::string::npos ? url : url.substr(0, path_start);
  e.base = path_start == std::string::npos ? "" : url.substr(path_start);
  while (!e.base.empty() && e.base.back() == '/') e.base.pop_back();
  if (e.origin.size() <= scheme_end + 3) return Status::InvalidArgument("--prometheus '" + url + "': no host");
  return e;
}

// Why a request got no answer at all, in words (httplib's own names are single words such as
// "Connection").
std::string TransportErrorText(httplib::Error error, double timeout_s) {
  switch (error) {
    case httplib::Error::Connection:
      return "cannot connect (connection refused, or the host cannot be reached): is Prometheus listening at "
             "that address and port?";
    case httplib::Error::ConnectionTimeout:
      return "no connection within " + std::to_string(static_cast<long long>(std::ceil(timeout_s))) +
             " s (host down or a firewall dropping packets?)";
    case httplib::Error::Read:
      return "the connection broke, or no answer came within " +
             std::to_string(static_cast<long long>(std::ceil(timeout_s))) + " s, while reading the response";
    case httplib::Error::Write: return "the connection broke while sending the query";
    case httplib::Error::BindIPAddress: return "cannot bind the local address";
    case httplib::Error::ExceedRedirectCount: return "too many redirects";
    case httplib::Error::SSLConnection: return "TLS connection failed";
    case httplib::Error::SSLLoadingCerts: return "cannot load the TLS certificates";
    case httplib::Error::SSLServerVerification: return "the server's TLS certificate did not verify";
    case httplib::Error::Canceled: return "the request was cancelled";
    default: return "request failed (" + httplib::to_string(error) + ")";
  }
}

Result<std::string> Post(const Endpoint& e, const std::string& url, const std::string& path,
                         const httplib::Params& params, double timeout_s) {
  httplib::Client client(e.origin);
  auto to = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::duration<double>(timeout_s));
  client.set_connection_timeout(to);
  client.set_read_timeout(to);
  auto res = client.Post((e.base + path).c_str(), params);
  if (!res) {
    return Status::Unavailable("Prometheus at " + url + ": " + TransportErrorText(res.error(), timeout_s));
  }
  if (res->status != 200) {
    // Prometheus explains errors in JSON: {"status":"error","errorType":"bad_data","error":"..."}.
    auto j = json::parse(res->body, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_string()) {
      std::string msg = "Prometheus at " + url + " rejected the query: " + j["error"].get<std::string>();
      return res->status >= 500 ? Status::Unavailable(msg) : Status::InvalidArgument(msg);
    }
    return Status::Unavailable("Prometheus at " + url + ": HTTP " + std::to_string(res->status) + " for " + path);
  }
  return res->body;
}

std::string FormatSeconds(double t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", t);
  return buf;
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
  return g;
}

std::string CompanionTotalQuery(const std::string& query) {
  static const std::regex selector("^\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*(\\{[^}]*\\})?\\s*$");
  std::smatch m;
  if (!std::regex_match(query, m, selector)) return {};
  const std::string name = m[1].str();
  const std::string sel = m[2].matched ? m[2].str() : "";
  if (name == "DCGM_FI_DEV_FB_USED") {
    return "DCGM_FI_DEV_FB_USED" + sel + " + DCGM_FI_DEV_FB_FREE" + sel;
  }
  if (name == "vramwatch_gpu_memory_used_bytes") return "vramwatch_gpu_memory_total_bytes" + sel;
  if (name == "nvidia_smi_memory_used_bytes") return "nvidia_smi_memory_total_bytes" + sel;
  return {};
}

namespace {

// ParseQueryResponse without the guard: json accessors on a value of another type throw.
Result<std::vector<PrometheusSeries>> ParseQueryResponseOrThrow(std::string_view body, const std::string& query,
                                                                ValueUnit unit) {
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
  const json& data = j["data"];
  const std::string type = data.value("resultType", "");
  if (type != "matrix" && type != "vector") {
    return Status::ParseError("Prometheus response for '" + query + "': expected a matrix or vector, got '" + type +
                              "'");
  }
  std::vector<PrometheusSeries> out;
  const std::optional<ValueUnit> query_unit = UnitOfQuery(query);
  for (const json& r : data.value("result", json::array())) {
    PrometheusSeries s;
    if (r.contains("metric") && r["metric"].is_object()) {
      for (const auto& [k, v] : r["metric"].items()) {
        if (v.is_string()) s.labels[k] = v.get<std::string>();
      }
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
    std::vector<json> points;
    if (type == "matrix") {
      for (const json& p : r.value("values", json::array())) points.push_back(p);
    } else if (r.contains("value")) {
      points.push_back(r["value"]);
    }
    for (const json& p : points) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_string()) {
        return Status::ParseError("Prometheus response for '" + query + "', series " + SeriesText(s.labels) +
                                  ": expected [time, \"value\"], got " + p.dump());
      }
      TraceRecord rec;
      rec.gpu = s.gpu;
      rec.sample.t = p[0].get<double>();
      if (!PlausibleTime(rec.sample.t)) {
        return Status::ParseError("Prometheus response for '" + query + "', series " + SeriesText(s.labels) +
                                  ": time " + p[0].dump() + " is not epoch seconds before the year 10000");
      }
      const std::string v = p[1].get<std::string>();
      char* end = nullptr;
      double x = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0') {
        return Status::ParseError("Prometheus response for '" + query + "', series " + SeriesText(s.labels) +
                                  ": value '" + v + "' is not a number");
      }
      if (std::isfinite(x) && x >= 0) rec.sample.used_bytes = static_cast<uint64_t>(std::llround(x * factor));
      s.records.push_back(std::move(rec));
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

Result<std::vector<PrometheusSeries>> ParseQueryResponse(std::string_view body, const std::string& query,
                                                         ValueUnit unit) {
  // A response of the right outline with a value of another type inside ("status": 5, a result that
  // is not an object) is an error to report, not an exception to end the program.
  try {
    return ParseQueryResponseOrThrow(body, query, unit);
  } catch (const json::exception& e) {
    return Status::ParseError("Prometheus response for '" + query + "': unexpected JSON (" + e.what() + ")");
  }
}

Result<std::vector<PrometheusSeries>> FetchPrometheusSeries(const std::string& url, const std::string& query,
                                                            double range_s, std::optional<double> end_time,
                                                            ValueUnit unit, const FetchOptions& options) {
  if (query.empty()) return Status::InvalidArgument("--query is empty");
  if (!(range_s > 0)) return Status::InvalidArgument("--range must be positive");
  auto ep = ParseUrl(url);
  if (!ep.ok()) return ep.status();
  const double end =
      end_time.value_or(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
  const double step = options.step_s.value_or(ChooseStep(range_s));
  if (range_s / step > 11000) {
    return Status::InvalidArgument("a step of " + std::to_string(step) + " s over " + std::to_string(range_s) +
                                   " s exceeds Prometheus' 11000 points per series");
  }
  httplib::Params params{{"query", query},
                         {"start", FormatSeconds(end - range_s)},
                         {"end", FormatSeconds(end)},
                         {"step", FormatSeconds(step)}};
  auto body = Post(*ep, url, "/api/v1/query_range", params, options.timeout_s);
  if (!body.ok()) return body.status();
  auto series = ParseQueryResponse(*body, query, unit);
  if (!series.ok()) return series.status();
  if (!options.fetch_total) return series;
  const std::string total_query = CompanionTotalQuery(query);
  if (total_query.empty()) return series;
  auto total_body =
      Post(*ep, url, "/api/v1/query", {{"query", total_query}, {"time", FormatSeconds(end)}}, options.timeout_s);
  if (!total_body.ok()) return series;  // the card size is a bonus
  auto totals = ParseQueryResponse(*total_body, total_query, series->empty() ? unit : series->front().unit);
  if (!totals.ok()) return series;
  std::map<std::string, uint64_t> by_gpu;
  for (const auto& t : *totals) {
    if (!t.records.empty() && t.records.back().sample.used_bytes) {
      by_gpu[GpuMatchKey(t.labels)] = *t.records.back().sample.used_bytes;
    }
  }
  for (auto& s : *series) {
    auto it = by_gpu.find(GpuMatchKey(s.labels));
    if (it == by_gpu.end()) continue;
    for (auto& r : s.records) r.sample.total_bytes = it->second;
  }
  return series;
}

}  // namespace vw::prometheus
