#include "cli/host_name.h"

#include <unistd.h>

#include <cstdlib>

namespace vw::cli {

namespace {

std::optional<std::string> ProcessEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// A label value may hold anything, but a host name with white space or control characters is a
// quoting mistake in a unit file or manifest: say so instead of labelling every series with it.
Status CheckName(const std::string& name, const std::string& source) {
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) {
      return Status::InvalidArgument(source + " '" + name +
                                     "': a host name has no white space or control characters (quoting mistake?)");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string SystemHostname() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) return host;
  return {};
}

Result<std::string> ResolveHostname(const std::optional<std::string>& flag, const EnvLookup& env,
                                    const std::function<std::string()>& system_hostname) {
  if (flag) {
    if (flag->empty()) return Status::InvalidArgument("--hostname: must not be empty");
    VW_RETURN_IF_ERROR(CheckName(*flag, "--hostname"));
    return *flag;
  }
  std::optional<std::string> node = env ? env("NODE_NAME") : ProcessEnv("NODE_NAME");
  if (node && !node->empty()) {
    VW_RETURN_IF_ERROR(CheckName(*node, "NODE_NAME"));
    return *node;
  }
  return system_hostname ? system_hostname() : SystemHostname();
}

}  // namespace vw::cli
