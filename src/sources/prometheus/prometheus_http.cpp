#include "sources/prometheus/prometheus_http.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/ascii.h"

namespace vw::prometheus {

namespace {

using nlohmann::json;

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

}  // namespace

Result<std::string> Post(const Endpoint& e, const std::string& path,
                         const std::vector<std::pair<std::string, std::string>>& form, const ServerAccess& options,
                         bool* answered) {
  if (answered != nullptr) *answered = false;
  httplib::Params params(form.begin(), form.end());
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
    // (a slow resolver, a TLS handshake): the worker is waited for a second, then left to end on
    // its own connect timeout (both threads own what they use).
    std::thread([client] { client->stop(); }).detach();
    if (done.wait_for(std::chrono::seconds(1)) == std::future_status::ready) {
      worker.join();
    } else {
      worker.detach();
    }
    return Status::Unavailable("Prometheus at " + e.shown + ": no complete answer to " + path + " within " +
                               WholeSeconds(options.timeout_s) +
                               " s (a slow or stuck server; --timeout sets the wait)");
  }
  worker.join();
  httplib::Result res = done.get();
  if (!res) {
    return Status::Unavailable("Prometheus at " + e.shown + ": " + TransportErrorText(res.error(), options.timeout_s));
  }
  if (answered != nullptr) *answered = true;
  if (res->status != 200) {
    std::string why;
    if (res->status == 401) {
      why =
          " (unauthorized: give a user and password with --basic-auth-file or in the URL, "
          "http://USER:PASSWORD@HOST:PORT, or a token with --bearer-token-file)";
    } else if (res->status == 403) {
      why = " (forbidden: these credentials may not read it)";
    }
    // Prometheus explains errors in JSON: {"status":"error","errorType":"bad_data","error":"..."}.
    // A proxy in front of it may too, about the credentials: its words, then how to give them.
    auto j = json::parse(res->body, nullptr, false);
    std::string server_error;
    if (!j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_string()) {
      server_error = j["error"].get<std::string>();
    }
    if (!server_error.empty() && why.empty()) {
      std::string msg = "Prometheus at " + e.shown + " rejected the query: " + server_error;
      return res->status >= 500 ? Status::Unavailable(msg) : Status::InvalidArgument(msg);
    }
    return Status::Unavailable("Prometheus at " + e.shown + ": HTTP " + std::to_string(res->status) + " for " + path +
                               (server_error.empty() ? "" : ": " + server_error) + why);
  }
  return std::move(res->body);
}

Result<Endpoint> ParseUrl(const std::string& url) {
  const std::string shown = MaskPassword(url);
  const size_t scheme_end = url.find("://");
  const std::string scheme =
      AsciiLower(scheme_end == std::string::npos ? std::string_view() : std::string_view(url).substr(0, scheme_end));
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

std::string UrlForMessages(const std::string& url) {
  return MaskPassword(url);
}

std::string FormatSeconds(double t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", t);
  return buf;
}

}  // namespace vw::prometheus
