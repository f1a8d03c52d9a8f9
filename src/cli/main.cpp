// vramwatch: finds GPU memory leaks and stuck or orphaned GPU processes before they end in
// "CUDA out of memory". Thin entry point: the one list of subcommands, parsing, dispatch.
#include <cstdio>
#include <exception>
#include <utility>
#include <vector>

#include "cli/check_command.h"
#include "cli/commands.h"
#include "core/exit_codes.h"

int main(int argc, char** argv) {
  CLI::App app{
      "vramwatch finds GPU memory leaks and stuck or orphaned GPU processes, and says how long until\n"
      "out-of-memory. Run a subcommand with --help to learn it.",
      "vramwatch"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");

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

  try {
    app.parse(argc, argv);
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
