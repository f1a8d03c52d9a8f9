// Requests to a Prometheus server's HTTP API for the reader (prometheus_reader.h): the URL parsed
// (a user and password in it as basic auth, written as *** in every message), and a POST whose
// whole answer must come within a deadline (cpp-httplib's own timeouts bound each read, not a
// server that sends a byte now and then). Errors: unavailable (no answer, HTTP errors, naming the
// URL), invalid_argument (a URL that does not parse, a query Prometheus rejects, with its reason).
// Threading: blocking calls from any thread; each request runs on a thread of its own.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace vw::prometheus {

// How to reach the server: the wait and the credentials.
struct ServerAccess {
  double timeout_s = 30;     // for each request, from sending it to the end of its answer
  std::string bearer_token;  // sent as "Authorization: Bearer ..." when not empty
  // Basic auth from a file (so that the password is not on the command line), when not empty.
  std::string basic_user, basic_password;
  std::string ca_file;  // PEM certificates to verify an https server with, when not empty
};

struct Endpoint {
  std::string origin;          // scheme://host:port, without a user and password
  std::string base;            // path prefix without trailing slash
  std::string user, password;  // from scheme://USER:PASSWORD@host, for basic auth (%XX decoded)
  std::string shown;           // the URL for messages, its password written as ***
};

// "http(s)://[USER:PASSWORD@]HOST[:PORT][/PATH]"; the scheme in any case.
Result<Endpoint> ParseUrl(const std::string& url);

// `url` for messages: a password in it written as *** ("http://alice:***@prom:9090"), also in a
// URL that does not parse.
std::string UrlForMessages(const std::string& url);

// POSTs the form `params` to `e`'s base + `path` ("/api/v1/query_range"); the body of a 200 answer.
// `answered`, when given, is set to whether the server answered at all (any HTTP status): false
// when it could not be reached or its answer was not complete within the timeout.
Result<std::string> Post(const Endpoint& e, const std::string& path,
                         const std::vector<std::pair<std::string, std::string>>& params, const ServerAccess& access,
                         bool* answered = nullptr);

// Seconds since the epoch as Prometheus' time parameters take them ("1700000000.000").
std::string FormatSeconds(double t);

}  // namespace vw::prometheus
