#include "cli/host_name.h"

#include <gtest/gtest.h>

#include <map>

namespace vw::cli {
namespace {

struct HostCase {
  const char* what;
  std::optional<std::string> flag;
  std::optional<std::string> node_name;  // NODE_NAME; nullopt: not set
  std::string expected;                  // the name, or the error message
  bool ok;
};

TEST(ResolveHostname, FlagThenNodeNameThenGethostname) {
  const HostCase cases[] = {
      {"flag wins over NODE_NAME", "gpu-node-7", "k8s-node-3", "gpu-node-7", true},
      {"NODE_NAME over gethostname", std::nullopt, "k8s-node-3", "k8s-node-3", true},
      {"empty NODE_NAME is not set", std::nullopt, "", "vramwatch-x7k2p", true},
      {"nothing set: gethostname", std::nullopt, std::nullopt, "vramwatch-x7k2p", true},
      {"empty flag", "", "k8s-node-3", "--hostname: must not be empty", false},
      {"flag with a space", "a b", std::nullopt,
       "--hostname 'a b': a host name has no white space or control characters (quoting mistake?)", false},
      {"NODE_NAME with a newline", std::nullopt, "n1\n",
       "NODE_NAME 'n1\n': a host name has no white space or control characters (quoting mistake?)", false},
  };
  for (const HostCase& c : cases) {
    std::map<std::string, std::string> env;
    if (c.node_name) env["NODE_NAME"] = *c.node_name;
    auto lookup = [&](const char* name) -> std::optional<std::string> {
      auto it = env.find(name);
      if (it == env.end()) return std::nullopt;
      return it->second;
    };
    auto got = ResolveHostname(c.flag, lookup, [] { return std::string("vramwatch-x7k2p"); });
    ASSERT_EQ(got.ok(), c.ok) << c.what;
    if (c.ok) {
      EXPECT_EQ(*got, c.expected) << c.what;
    } else {
      EXPECT_EQ(got.status().message(), c.expected) << c.what;
    }
  }
}

TEST(ResolveHostname, DefaultsReadTheProcessEnvironment) {
  ::setenv("NODE_NAME", "env-node-1", 1);
  auto with_env = ResolveHostname(std::nullopt);
  ::unsetenv("NODE_NAME");
  ASSERT_TRUE(with_env.ok());
  EXPECT_EQ(*with_env, "env-node-1");
  auto without = ResolveHostname(std::nullopt);
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(*without, SystemHostname());
}

}  // namespace
}  // namespace vw::cli
