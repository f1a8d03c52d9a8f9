#include <fmt/format.h>

#include "cli/commands.h"
#include "core/exit_codes.h"

#ifndef VRAMWATCH_VERSION
#define VRAMWATCH_VERSION "0.0.0"
#endif

namespace vw::cli {

CommandRunner AddVersionCommand(CLI::App& app) {
  app.add_subcommand("version", "Print the vramwatch version");
  return [] {
    fmt::print("vramwatch {}\n", VRAMWATCH_VERSION);
    return kExitOk;
  };
}

}  // namespace vw::cli
