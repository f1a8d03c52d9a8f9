// vramwatch: finds GPU memory leaks and stuck or orphaned GPU processes before they end in
// "CUDA out of memory". Thin entry point: the one list of subcommands, parsing, dispatch.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "cli/check_command.h"
#include "cli/command_names.h"
#include "cli/commands.h"
#include "core/exit_codes.h"

namespace {

// `code`, or exit 3 when what the command wrote to standard output did not all reach it (a full
// disk, a closed descriptor): a script would otherwise take an empty or cut report for a verdict.
int CheckedStdout(const std::string& command, int code) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && !std::ferror(stdout)) return code;
  std::fprintf(stderr, "vramwatch %s: cannot write to standard output: %s\n", command.c_str(),
               !flushed && errno != 0 ? std::strerror(errno) : "a write failed");
  return vw::kExitUnknown;
}

}  // namespace

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

  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    return vw::cli::ParseErrorMessage(CLI::FailureMessage::simple(a, e));
  });
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    // `check --json` promises a JSON object on stdout for every usage error, flag errors included.
    if (vw::cli::ArgsAskForCheckJson(argc, argv))
      return vw::cli::PrintCheckParseError(vw::cli::ParseErrorMessage(e.what()), stdout);
    return vw::kExitUnknown;
  }
  for (auto& [sub, run] : commands) {
    if (!sub->parsed()) continue;
    // Errors travel as Status values. An exception that still escapes (from a library) must not end
    // the program in std::terminate: it is reported like any other failure, with exit 3 (UNKNOWN).
    try {
      return CheckedStdout(sub->get_name(), run());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "vramwatch %s: internal error: %s\n", sub->get_name().c_str(), e.what());
      return vw::kExitUnknown;
    }
  }
  std::fputs("vramwatch: no subcommand given; see vramwatch --help\n", stderr);
  return vw::kExitUnknown;
}
