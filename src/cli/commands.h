// The subcommands. Each Add*Command adds its subcommand, its flags and its --help text to `app`
// and returns the function that runs it once the command line has been parsed; that function
// returns the process exit code (see core/exit_codes.h). main.cpp holds the one list of commands.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace vw::cli {

using CommandRunner = std::function<int()>;

CommandRunner AddAnalyzeCommand(CLI::App& app);
CommandRunner AddVersionCommand(CLI::App& app);

}  // namespace vw::cli
