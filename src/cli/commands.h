// The subcommands. Each Add*Command adds its subcommand, its flags and its --help text to `app`
// and returns the function that runs it once the command line has been parsed; that function
// returns the process exit code (see core/exit_codes.h). main.cpp holds the one list of commands.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <set>
#include <string>

namespace vw::cli {

using CommandRunner = std::function<int()>;

CommandRunner AddAnalyzeCommand(CLI::App& app);
CommandRunner AddVersionCommand(CLI::App& app);
CommandRunner AddCheckCommand(CLI::App& app);
CommandRunner AddDemoCommand(CLI::App& app);
CommandRunner AddWatchCommand(CLI::App& app);
CommandRunner AddRecordCommand(CLI::App& app);

// The long names of the flags `cmd` was given on the command line ("--query"), once parsed: a
// flag left at its default and one given with the default's value are told apart.
inline std::set<std::string> FlagsGiven(const CLI::App& cmd) {
  std::set<std::string> given;
  for (const CLI::Option* o : cmd.get_options()) {
    if (o->count() > 0) given.insert(o->get_name());
  }
  return given;
}

}  // namespace vw::cli
