// Test helper (used only by *_test.cpp): runs a reference script from tests/python/ with the
// Python configured as VRAMWATCH_PYTHON and returns its standard output. The statistics tests use
// it to compare our numbers with scipy and pymannkendall.
//
// A missing Python, a missing module or a failing script is an error with the script's own
// message, and the calling test fails on it (it never skips). Not thread-safe (uses std::system
// semantics through popen); tests call it from one thread.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace vw::detection::testing {

struct ScriptRun {
  bool ok = false;
  std::string output;  // stdout and stderr together
  std::string error;   // what went wrong, for the test's failure message
};

// Writes `input` to a temporary file, runs `VRAMWATCH_PYTHON tests/python/<script> FILE`.
inline ScriptRun RunReferenceScript(const std::string& script, const std::string& input) {
  ScriptRun run;
  std::random_device rd;
  const auto path = std::filesystem::temp_directory_path() / ("vw_ref_" + std::to_string(rd()) + ".txt");
  {
    std::ofstream out(path);
    out << input;
    if (!out) {
      run.error = "cannot write " + path.string();
      return run;
    }
  }
  const std::string script_path = std::string(VRAMWATCH_SOURCE_DIR) + "/tests/python/" + script;
  const std::string command =
      "'" + std::string(VRAMWATCH_PYTHON) + "' '" + script_path + "' '" + path.string() + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    run.error = "cannot start: " + command;
    std::filesystem::remove(path);
    return run;
  }
  char buffer[4096];
  size_t got;
  while ((got = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.output.append(buffer, got);
  const int status = pclose(pipe);
  std::filesystem::remove(path);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    run.error = "reference script failed (python: " + std::string(VRAMWATCH_PYTHON) +
                "; configure with -DVRAMWATCH_PYTHON=<python with scipy and pymannkendall>): " + command + "\n" +
                run.output;
    return run;
  }
  run.ok = true;
  return run;
}

}  // namespace vw::detection::testing
