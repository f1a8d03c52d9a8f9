#include "sources/prometheus/prometheus_reader.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

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
  for (const char* n :
       {"Hostname", "hostname", "instance", "gpu", "UUID", "uuid", "pci_bus_id", "GPU_I_ID", "gpu_instance_id"}) {
    auto it = labels.find(n);
    if (it != labels.end()) k += std::string(n) + "=" + it->second + ";";
  }
  return k;
}

struct Endpoint {
  std::string origin;          // scheme://host:port, without a user and password
  std::string base;            // path prefix without trailing slash
  std::string user, password;  // from scheme://USER:PASSWORD@host, for basic auth
  std::string shown;           // the URL for messages, its password written as ***
};

// `url` with whatever may be a password written as ***: the text between the first ':' after the
// scheme's "//" (or the start) and the last '@' ("http://alice:***@prom:9090"). For messages about
// URLs that do not parse too, which must not print a password either.
std::string MaskPassword(const std::string& url) {
  const size_t slashes = url.find("//");
  if (slashes == std::string::npos) {  // no URL at all: whatever lies between a ':' and a '@'
    const size_t at = url.rfind('@'), colon = url.find(':');
    if (at == std::string::npos || colon == std::string::npos || colon > at) return url;
    return url.substr(0, colon + 1) + "***" + url.substr(at);
  }
  const size_t from = slashes + 2;
  // The authority ends at the path, query or fragment; a '@' after that is no user's, unless what
  // ends the authority is a password holding '/', '?' or '#' (not written %2F...): text after its
  // ':' that is no port ("alice:pa" of http://alice:pa/ss@host), and no IPv6 literal.
  const size_t authority_end = std::min(url.find_first_of("/?#", from), url.size());
  const std::string authority = url.substr(from, authority_end - from);
  size_t at = authority.rfind('@');
  if (at != std::string::npos) {
    at += from;
  } else {
    const size_t colon = authority.find(':');
    const bool port_or_ipv6 = authority.empty() || authority[0] == '[' || colon == std::string::npos ||
                              authority.find_first_not_of("0123456789", colon + 1) == std::string::npos;
    if (port_or_ipv6) return url;
    at = url.rfind('@');
    if (at == std::string::npos) return url;
  }
  const size_t colon = url.find(':', from);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

// %XX escapes of a URL's user or password decoded; nullopt for a '%' without two hex digits.
std::optional<std::string> PercentDecoded(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      return std::nullopt;
    }
    out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
    i += 2;
  }
  return out;
}

Result<Endpoint> ParseUrl(const std::string& url) {
  const std::string shown = MaskPassword(url);
  const size_t scheme_end = url.find("://");
  std::string scheme = scheme_end == std::string::npos ? std::string() : url.substr(0, scheme_end);
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "http" && scheme != "https") {
    return Status::InvalidArgument("--prometheus '" + shown +
                                   "': expected http(s)://[USER:PASSWORD@]HOST[:PORT][/PATH]");
  }
  const size_t host_start = scheme_end + 3;
  const size_t path_start = url.find_first_of("/?#", host_start);
  std::string authority =
      url.substr(host_start, path_start == std::string::npos ? std::string::npos : path_start - host_start);
  const std::string rest = path_start == std::string::npos ? std::string() : url.substr(path_start);
  if (rest.find('@') != std::string::npos) {
    return Status::InvalidArgument("--prometheus '" + shown +
                                   "': a '@' after the host: a user or password holding '/', '?' or '#' must write "
                                   "them as %2F, %3F, %23");
  }
  if (rest.find_first_of("?#") != std::string::npos) {
    return Status::InvalidArgument("--prometheus '" + shown + "': expected no query or fragment (?, #) in the URL");
  }
  Endpoint e;
  e.shown = shown;
  if (size_t at = authority.rfind('@'); at != std::string::npos) {
    const std::string userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    const size_t colon = userinfo.find(':');
    auto user = PercentDecoded(userinfo.substr(0, colon));
    auto password = PercentDecoded(colon == std::string::npos ? std::string() : userinfo.substr(colon + 1));
    if (!user || !password) {
      return Status::InvalidArgument("--prometheus '" + shown +
                                     "': a '%' in the user or password must be followed by "
                                     "two hex digits (write '%' itself as %25)");
    }
    e.user = *user;
    e.password = *password;
  }
  if (authority.empty()) return Status::InvalidArgument("--prometheus '" + shown + "': no host");
  e.origin = scheme + "://" + authority;
  e.base = rest;
  while (!e.base.empty() && e.base.back() == '/') e.base.pop_back();
  return e;
}

std::string WholeSeconds(double s) {
  return std::to_string(static_cast<long long>(std::ceil(s)));
}

// Why a request got no answer at all, in words (httplib's own names are single words such as
// "Connection").
std::string TransportErrorText(httplib::Error error, double timeout_s) {
  switch (error) {
    case httplib::Error::Connection:
      return "cannot connect (connection refused, or the host cannot be reached): is Prometheus listening at "
             "that address and port?";
    case httplib::Error::ConnectionTimeout:
      return "no connection within " + WholeSeconds(timeout_s) + " s (host down or a firewall dropping packets?)";
    case httplib::Error::Read:
      return "the connection broke, or no answer came within " + WholeSeconds(timeout_s) +
             " s, while reading the response";
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

// One POST, its whole answer within `options.timeout_s` (httplib's own timeouts bound each read,
// not a server that sends a byte now and then): past it the request is stopped.
Result<std::string> Post(const Endpoint& e, const std::string& path, const httplib::Params& params,
                         const FetchOptions& options) {
  auto client = std::make_shared<httplib::Client>(e.origin);
  auto to = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::duration<double>(options.timeout_s));
  client->set_connection_timeout(to);
  client->set_read_timeout(to);
  client->set_write_timeout(to);
  if (!e.user.empty() || !e.password.empty()) client->set_basic_auth(e.user.c_str(), e.password.c_str());
  if (!options.basic_user.empty()) client->set_basic_auth(options.basic_user.c_str(), options.basic_password.c_str());
  if (!options.bearer_token.empty()) client->set_bearer_token_auth(options.bearer_token.c_str());
  if (!options.ca_file.empty()) client->set_ca_cert_path(options.ca_file.c_str());
  const std::string target = e.base + path;
  auto task = std::make_shared<std::packaged_task<httplib::Result()>>(
      [client, target, params] { return client->Post(target.c_str(), params); });
  std::future<httplib::Result> done = task->get_future();
  std::thread worker([task] { (*task)(); });
  if (done.wait_for(std::chrono::duration<double>(options.timeout_s)) != std::future_status::ready) {
    // Shuts the socket so that the worker's read returns. stop() waits while the worker connects
    // (a slow resolver, a TLS handshake), so neither is waited for here: both own what they use.
    std::thread([client] { client->stop(); }).detach();
    worker.detach();
    return Status::Unavailable("Prometheus at " + e.shown + ": no complete answer to " + path + " within " +
                               WholeSeconds(options.timeout_s) +
                               " s (a slow or stuck server; --timeout sets the wait)");
  }
  worker.join();
  httplib::Result res = done.get();
  if (!res) {
    return Status::Unavailable("Prometheus at " + e.shown + ": " + TransportErrorText(res.error(), options.timeout_s));
  }
  if (res->status != 200) {
    // Prometheus explains errors in JSON: {"status":"error","errorType":"bad_data","error":"..."}.
    auto j = json::parse(res->body, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_string()) {
      std::string msg = "Prometheus at " + e.shown + " rejected the query: " + j["error"].get<std::string>();
      return res->status >= 500 ? Status::Unavailable(msg) : Status::InvalidArgument(msg);
    }
    std::string why;
    if (res->status == 401) {
      why =
          " (unauthorized: give a user and password in the URL, http://USER:PASSWORD@HOST:PORT, or a token "
          "with --bearer-token-file)";
    } else if (res->status == 403) {
      why = " (forbidden: these credentials may not read it)";
    }
    return Status::Unavailable("Prometheus at " + e.shown + ": HTTP " + std::to_string(res->status) + " for " + path +
                               why);
  }
  return std::move(res->body);
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
  // A MIG GPU instance (dcgm-exporter) is a GPU of its own: its memory and size are the instance's.
  if (std::string gi = Label(labels, {"GPU_I_ID", "gpu_instance_id"}); !gi.empty()) {
    g.key += "/gi" + gi;
    const std::string profile = Label(labels, {"GPU_I_PROFILE", "mig_profile"});
    g.name += (g.name.empty() ? "MIG " : " MIG ") + (profile.empty() ? "GPU instance " + gi : profile);
  }
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
  if (name == "vramwatch_mig_instance_memory_used_bytes") return "vramwatch_mig_instance_memory_total_bytes" + sel;
  if (name == "nvidia_smi_memory_used_bytes") return "nvidia_smi_memory_total_bytes" + sel;
  return {};
}

std::string UrlForMessages(const std::string& url) {
  return MaskPassword(url);
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

// The metric name of a plain selector (`name` or `name{...}`), or empty for any other query.
std::string SelectorName(const std::string& query) {
  static const std::regex selector("^\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*(\\{[^}]*\\})?\\s*$");
  std::smatch m;
  return std::regex_match(query, m, selector) ? m[1].str() : std::string();
}

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
// four samples there or the query fails.
std::optional<double> FinestSpacing(const Endpoint& e, const std::string& query, double at,
                                    const FetchOptions& options) {
  auto body = Post(e, "/api/v1/query", {{"query", query + "[10m]"}, {"time", FormatSeconds(at)}}, options);
  if (!body.ok()) return std::nullopt;
  auto j = json::parse(*body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("data") || !j["data"].is_object()) return std::nullopt;
  std::optional<double> finest;
  try {
    for (const json& r : j["data"].value("result", json::array())) {
      std::vector<double> gaps;
      double last = -1;
      for (const json& p : r.value("values", json::array())) {
        if (!p.is_array() || p.empty() || !p[0].is_number()) continue;
        const double t = p[0].get<double>();
        if (last >= 0 && t > last) gaps.push_back(t - last);
        last = t;
      }
      if (gaps.size() < 3) continue;
      std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
      const double median = gaps[gaps.size() / 2];
      if (!finest || median < *finest) finest = median;
    }
  } catch (const json::exception&) {
    return std::nullopt;
  }
  return finest;
}

// The labels of a series without its name: how a series of `timestamp(Q)` (which drops the name)
// is matched with Q's.
std::string LabelsWithoutName(const std::map<std::string, std::string>& labels) {
  std::map<std::string, std::string> rest = labels;
  rest.erase("__name__");
  return SeriesText(rest);
}

// The answer of `timestamp(Q)` over a range: for each series (LabelsWithoutName), the time of the
// sample each step read, by step. Empty when it cannot be read.
std::map<std::string, std::vector<std::pair<double, double>>> ParseSampleTimes(const std::string& body) {
  std::map<std::string, std::vector<std::pair<double, double>>> out;
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

// Each sample once, at its own time: a step of a range query reads the latest sample at or before
// it, so a step shorter than the scrape interval reads one sample several times (a narrower rate
// interval than the data allow). `times` (ParseSampleTimes) says which sample each step read.
// False when `times` has no series of `s`'s labels (`s` is left as read).
bool KeepEachSampleOnce(PrometheusSeries& s,
                        const std::map<std::string, std::vector<std::pair<double, double>>>& times) {
  auto it = times.find(LabelsWithoutName(s.labels));
  if (it == times.end()) return false;
  const std::vector<std::pair<double, double>>& read = it->second;
  std::vector<SeriesPoint> kept;
  kept.reserve(s.points.size());
  size_t k = 0;
  std::optional<double> last_sample;
  for (const SeriesPoint& p : s.points) {
    while (k < read.size() && read[k].first < p.t) ++k;
    if (k == read.size() || read[k].first != p.t) {
      kept.push_back(p);  // no time for this step: kept as read
      continue;
    }
    const double sample_t = read[k].second;
    if (last_sample && sample_t == *last_sample) continue;  // the same sample again
    last_sample = sample_t;
    kept.push_back({sample_t, p.used_bytes});
  }
  s.points = std::move(kept);
  return true;
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
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (why.empty() && lower.find("used") != std::string::npos) return {};  // used memory is in it
  }
  return first_not_used;
}

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
      PrometheusSeries merged = std::move(c.front());
      if (c.size() > 1) {
        std::set<std::string> changed;
        for (size_t k = 1; k < c.size(); ++k) {
          for (const auto& [name, value] : c[k].labels) {
            auto own = merged.labels.find(name);
            if (own == merged.labels.end() || own->second != value) changed.insert(name);
          }
          for (const auto& [name, value] : merged.labels) {
            if (c[k].labels.count(name) == 0) changed.insert(name);
          }
        }
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
      std::set<std::string> differing;
      for (const auto& a : merged_chains) {
        for (const auto& b : merged_chains) {
          for (const auto& [name, value] : a.labels) {
            auto other = b.labels.find(name);
            if (other == b.labels.end() || other->second != value) differing.insert(name);
          }
        }
      }
      differing.erase("__name__");
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
  const bool selector = !SelectorName(query).empty();
  const double end =
      end_time.value_or(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
  double step = ChooseStep(range_s);
  if (options.step_s) {
    step = *options.step_s;
  } else if (selector) {
    // Fewer points to fetch: half the finest scrape interval (each sample read once or twice, so
    // none is missed to jitter; KeepEachSampleOnce keeps one), read where the series have data.
    for (double at : {end, end - range_s / 2, end - range_s + 600}) {
      if (auto spacing = FinestSpacing(*ep, query, at, options)) {
        step = std::max(step, std::round(*spacing / 2 * 1000) / 1000);
        break;
      }
    }
  }
  if (range_s / step > 11000) {
    return Status::InvalidArgument("a step of " + std::to_string(step) + " s over " + std::to_string(range_s) +
                                   " s exceeds Prometheus' 11000 points per series");
  }
  auto range_params = [&](const std::string& q) {
    return httplib::Params{{"query", q},
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
  fetched->each_sample_once = false;
  if (selector && !fetched->series.empty()) {
    auto times_body = Post(*ep, "/api/v1/query_range", range_params("timestamp(" + query + ")"), options);
    if (times_body.ok()) {
      const auto times = ParseSampleTimes(*times_body);
      std::string().swap(*times_body);
      bool all = true;
      for (PrometheusSeries& s : fetched->series) all = KeepEachSampleOnce(s, times) && all;
      fetched->each_sample_once = all;
    }
  }
  fetched->series = MergeSeriesOfOneGpu(std::move(fetched->series), kLookBackSeconds + 2 * step);
  if (!options.fetch_total) return fetched;
  const std::string total_query = CompanionTotalQuery(query);
  if (total_query.empty() || fetched->series.empty()) return fetched;
  // The card size at the end of the range; for a series that ended before it (a card replaced),
  // at its own last sample. The size is a bonus: a failing query leaves it unknown.
  std::set<double> when{end};
  double newest = 0;
  for (const PrometheusSeries& s : fetched->series) {
    if (!s.points.empty()) newest = std::max(newest, s.points.back().t);
  }
  for (const PrometheusSeries& s : fetched->series) {
    if (!s.points.empty() && SeriesEnded(s, newest, step) && when.size() < 8) when.insert(s.points.back().t);
  }
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
