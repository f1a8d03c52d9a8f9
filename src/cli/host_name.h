// The host name that `watch` puts in every `hostname` label, alert and status document, and that
// `record` writes in a recording's header. In a Kubernetes pod gethostname() is the pod name, which
// changes on every rollout, so the node name is taken from the environment first:
//   1. --hostname NAME, when given (it must not be empty);
//   2. the environment variable NODE_NAME, when set and not empty (the DaemonSet sets it from
//      spec.nodeName);
//   3. gethostname().
// Plain functions, no state; safe from any thread (the environment is only read).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/status.h"

namespace vw::cli {

// Reads one environment variable: std::nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// The host name by the order above. `flag` is std::nullopt when --hostname was not given.
// `env` defaults to the process environment, `system_hostname` to gethostname().
// Errors: "--hostname: must not be empty" for an empty flag value; a name with a control character
// or white space ("--hostname 'a b': ...") from either source.
Result<std::string> ResolveHostname(const std::optional<std::string>& flag, const EnvLookup& env = {},
                                    const std::function<std::string()>& system_hostname = {});

// gethostname(), or "" when it fails.
std::string SystemHostname();

}  // namespace vw::cli
