// The subcommands. Each Add*Command adds its subcommand, its flags and its --help text to `app`
// and returns the function that runs it once the command line has been parsed; that function
// returns the process exit code (see core/exit_codes.h). main.cpp holds the one list of commands.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace vw::cli {

using CommandRunner = std::function<int()>;

CommandRunner AddAnalyzeCommand(CLI::App& app);
CommandRunner AddVersionCommand(CLI::App& app);
CommandRunner AddCheckCommand(CLI::App& app);
CommandRunner AddDemoCommand(CLI::App& app);
CommandRunner AddWatchCommand(CLI::App& app);
CommandRunner AddRecordCommand(CLI::App& app);

}  // namespace vw::cli
