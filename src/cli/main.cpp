// vramwatch: finds GPU memory leaks and stuck or orphaned GPU processes before they end in
// "CUDA out of memory". Thin entry point: the one list of subcommands, parsing, dispatch.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "cli/check_command.h"
#include "cli/command_names.h"
#include "cli/commands.h"
#include "core/exit_codes.h"

int main(int argc, char** argv) {
  CLI::App app{
      "vramwatch finds GPU memory leaks and stuck or orphaned GPU processes, and says how long until\n"
      "out-of-memory. Run a subcommand with --help to learn it.",
      "vramwatch"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  // Listed for --help; the word is rewritten to the `version` command before parsing (below).
  bool version_flag = false;
  app.add_flag("--version", version_flag, "Print the version and exit (as `vramwatch version`)");

  std::vector<std::pair<CLI::App*, vw::cli::CommandRunner>> commands;
  auto add = [&](vw::cli::CommandRunner (*adder)(CLI::App&)) {
    size_t before = app.get_subcommands({}).size();
    vw::cli::CommandRunner run = adder(app);
    auto subs = app.get_subcommands({});
    if (subs.size() > before) commands.emplace_back(subs.back(), std::move(run));
  };
  add(vw::cli::AddCheckCommand);
  add(vw::cli::AddAnalyzeCommand);
  add(vw::cli::AddDemoCommand);
  add(vw::cli::AddWatchCommand);
  add(vw::cli::AddRecordCommand);
  add(vw::cli::AddVersionCommand);

  // The command word: `--version` is `version`; a word that is no command gets a suggestion
  // ("unknown command 'analyse' (did you mean analyze?)") instead of "A subcommand is required".
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args.front() == "--version") args.front() = "version";
  if (!args.empty() && !args.front().empty() && args.front().front() != '-') {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), args.front()) == names.end()) {
      std::fprintf(stderr, "vramwatch: %s\n", vw::cli::UnknownCommandMessage(args.front(), names).c_str());
      return vw::kExitUnknown;
    }
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first

  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    // `check --json` promises a JSON object on stdout for every usage error, flag errors included.
    if (vw::cli::ArgsAskForCheckJson(argc, argv)) return vw::cli::PrintCheckParseError(e.what(), stdout);
    return vw::kExitUnknown;
  }
  for (auto& [sub, run] : commands) {
    if (!sub->parsed()) continue;
    // Errors travel as Status values. An exception that still escapes (from a library) must not end
    // the program in std::terminate: it is reported like any other failure, with exit 3 (UNKNOWN).
    try {
      return run();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "vramwatch %s: internal error: %s\n", sub->get_name().c_str(), e.what());
      return vw::kExitUnknown;
    }
  }
  std::fputs("vramwatch: no subcommand given; see vramwatch --help\n", stderr);
  return vw::kExitUnknown;
}
