// Test helper: runs the NVML binding against a private copy of the emulator library.
//
// Each EmulatedNvml copies the chosen emulator build into a fresh temporary folder, so every test
// loads its own instance (own init refcount, own scenario, own clock) even when an earlier test in
// the same process left a call blocked inside its copy. The scenario is written from a string;
// time is stepped exactly through VRAMWATCH_EMULATOR_CLOCK_FILE.
//
// Threading: test thread only; sets process environment variables.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace vw::nvml::testing {

// variant: "" (current driver), "old-driver", "r535".
inline std::string EmulatorBuildPath(const std::string& variant = "") {
  std::string dir = std::string(VRAMWATCH_BINARY_DIR) + "/emulator/";
  if (!variant.empty()) dir += variant + "/";
  return dir + "libnvidia-ml.so.1";
}

class EmulatedNvml {
 public:
  explicit EmulatedNvml(const std::string& scenario_yaml, const std::string& variant = "") {
    char tmpl[] = "/tmp/vw-nvml-test-XXXXXX";
    const char* d = mkdtemp(tmpl);
    EXPECT_NE(d, nullptr);
    dir_ = d ? d : "/tmp";
    std::filesystem::copy_file(EmulatorBuildPath(variant), dir_ + "/libnvidia-ml.so.1");
    std::ofstream(dir_ + "/scenario.yaml") << scenario_yaml;
    setenv("VRAMWATCH_EMULATOR_SCENARIO", (dir_ + "/scenario.yaml").c_str(), 1);
    setenv("VRAMWATCH_EMULATOR_CLOCK_FILE", (dir_ + "/clock").c_str(), 1);
    unsetenv("VRAMWATCH_EMULATOR_TIME_SCALE");
    SetTime(0);
  }
  ~EmulatedNvml() {
    std::error_code ec;
    // The library file may still be mapped; unlinking it is fine on Linux.
    std::filesystem::remove_all(dir_, ec);
  }

  std::string library() const { return dir_ + "/libnvidia-ml.so.1"; }
  std::string dir() const { return dir_; }
  void SetTime(double t) { std::ofstream(dir_ + "/clock") << t << "\n"; }

 private:
  std::string dir_;
};

}  // namespace vw::nvml::testing
