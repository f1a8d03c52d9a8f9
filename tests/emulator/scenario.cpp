#include "scenario.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <set>

namespace vw::emulator {

double Series::At(double t) const {
  if (points_.empty()) return 0;
  if (t <= points_.front().first) return points_.front().second;
  if (t >= points_.back().first) return points_.back().second;
  auto hi = std::upper_bound(points_.begin(), points_.end(), t,
                             [](double x, const std::pair<double, double>& p) { return x < p.first; });
  auto lo = hi - 1;
  double span = hi->first - lo->first;
  if (span <= 0) return hi->second;
  return lo->second + (hi->second - lo->second) * (t - lo->first) / span;
}

bool SubstituteEnv(const std::string& in, std::string* out, std::string* error) {
  out->clear();
  size_t i = 0;
  while (i < in.size()) {
    size_t start = in.find("${", i);
    if (start == std::string::npos) {
      out->append(in, i, std::string::npos);
      break;
    }
    out->append(in, i, start - i);
    size_t end = in.find('}', start + 2);
    if (end == std::string::npos) {
      *error = "unclosed '${' in '" + in + "'";
      return false;
    }
    std::string name = in.substr(start + 2, end - start - 2);
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) {
      *error = "environment variable " + name + " is not set (used as ${" + name + "})";
      return false;
    }
    out->append(value);
    i = end + 1;
  }
  return true;
}

namespace {

struct ParseFailure {
  std::string message;
};

class Reader {
 public:
  Reader(std::string file, const std::vector<std::string>& known) : file_(std::move(file)), known_(known) {}

  [[noreturn]] void Fail(const YAML::Node& n, const std::string& what) const {
    YAML::Mark m = n.Mark();
    std::string where = file_;
    if (!m.is_null()) where += ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
    throw ParseFailure{where + ": " + what};
  }

  void CheckKeys(const YAML::Node& map, std::initializer_list<const char*> allowed, const std::string& where) const {
    if (!map.IsMap()) Fail(map, "expected a mapping for " + where);
    for (const auto& kv : map) {
      std::string key = kv.first.Scalar();
      bool ok = false;
      for (const char* a : allowed) ok = ok || key == a;
      if (!ok) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        Fail(kv.first, "unknown key '" + key + "' in " + where + "; expected one of: " + list);
      }
    }
  }

  std::string Str(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) Fail(n, "expected a string for " + what);
    std::string out, err;
    if (!SubstituteEnv(n.Scalar(), &out, &err)) Fail(n, err);
    return out;
  }

  double Num(const YAML::Node& n, const std::string& what) const {
    std::string s = Str(n, what);
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || errno != 0) {
      Fail(n, "expected a number for " + what + ", got '" + s + "'");
    }
    return v;
  }

  long long Int(const YAML::Node& n, const std::string& what, long long lo, long long hi) const {
    std::string s = Str(n, what);
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 0);
    if (s.empty() || end != s.c_str() + s.size() || errno != 0) {
      Fail(n, "expected an integer for " + what + ", got '" + s + "'");
    }
    if (v < lo || v > hi) {
      Fail(n, what + " " + s + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return v;
  }

  // A number (constant) or a list of [t, value] pairs with increasing t.
  Series SeriesOf(const YAML::Node& n, const std::string& what) const {
    if (n.IsScalar()) return Series({{0.0, Num(n, what)}});
    if (!n.IsSequence() || n.size() == 0) Fail(n, "expected a number or a list of [t, value] pairs for " + what);
    std::vector<std::pair<double, double>> pts;
    for (const auto& p : n) {
      if (!p.IsSequence() || p.size() != 2) Fail(p, "expected a [t, value] pair in " + what);
      double t = Num(p[0], what + " time");
      double v = Num(p[1], what + " value");
      if (!pts.empty() && t <= pts.back().first) Fail(p, "times in " + what + " must increase");
      pts.emplace_back(t, v);
    }
    return Series(std::move(pts));
  }

  std::string Function(const YAML::Node& n, const std::string& what) const {
    std::string f = Str(n, what);
    if (f == "*") return f;
    for (const auto& k : known_) {
      if (k == f) return f;
      if (k.rfind(f + "_v", 0) == 0) return f;  // a base name of versioned symbols
    }
    Fail(n, "unknown NVML function '" + f + "' for " + what);
  }

  std::vector<ErrorSpec> Errors(const YAML::Node& n, const std::string& where) const {
    if (!n.IsSequence()) Fail(n, "expected a list for " + where + ".errors");
    std::vector<ErrorSpec> out;
    for (const auto& e : n) {
      CheckKeys(e, {"function", "code", "from_s", "to_s"}, where + ".errors[]");
      ErrorSpec s;
      if (!e["function"] || !e["code"]) Fail(e, "errors[] needs 'function' and 'code'");
      s.function = Function(e["function"], "errors[].function");
      s.code = static_cast<int>(Int(e["code"], "errors[].code", 1, 999));
      if (e["from_s"]) s.from_s = Num(e["from_s"], "errors[].from_s");
      if (e["to_s"]) s.to_s = Num(e["to_s"], "errors[].to_s");
      if (s.to_s <= s.from_s) Fail(e, "errors[]: to_s must be after from_s");
      out.push_back(s);
    }
    return out;
  }

  std::vector<HangSpec> Hangs(const YAML::Node& n, const std::string& where) const {
    if (!n.IsSequence()) Fail(n, "expected a list for " + where + ".hangs");
    std::vector<HangSpec> out;
    for (const auto& h : n) {
      CheckKeys(h, {"function", "at_s", "seconds"}, where + ".hangs[]");
      if (!h["function"] || !h["seconds"]) Fail(h, "hangs[] needs 'function' and 'seconds'");
      HangSpec s;
      s.function = Function(h["function"], "hangs[].function");
      if (h["at_s"]) s.at_s = Num(h["at_s"], "hangs[].at_s");
      s.seconds = Num(h["seconds"], "hangs[].seconds");
      if (s.seconds <= 0) Fail(h["seconds"], "hangs[].seconds must be positive");
      out.push_back(s);
    }
    return out;
  }

  unsigned Types(const YAML::Node& n) const {
    auto one = [&](const YAML::Node& x) -> unsigned {
      std::string s = Str(x, "process type");
      if (s == "compute") return kCompute;
      if (s == "graphics") return kGraphics;
      if (s == "mps") return kMps;
      Fail(x, "expected process type compute, graphics or mps, got '" + s + "'");
    };
    if (n.IsScalar()) return one(n);
    if (!n.IsSequence() || n.size() == 0) Fail(n, "expected a process type or a list of them");
    unsigned t = 0;
    for (const auto& x : n) t |= one(x);
    return t;
  }

  std::vector<ProcessSpec> Processes(const YAML::Node& n, const std::string& where) const {
    if (!n.IsSequence()) Fail(n, "expected a list for " + where + ".processes");
    std::vector<ProcessSpec> out;
    std::set<int64_t> seen;
    for (const auto& p : n) {
      CheckKeys(p, {"pid", "type", "name", "used_mib", "sm_util", "start_s", "end_s", "visible_after_calls"},
                where + ".processes[]");
      if (!p["pid"]) Fail(p, "processes[] needs 'pid'");
      ProcessSpec s;
      s.pid = Int(p["pid"], "pid", 1, 0xFFFFFFFFll);
      if (!seen.insert(s.pid).second) Fail(p["pid"], "pid " + std::to_string(s.pid) + " listed twice in " + where);
      if (p["type"]) s.types = Types(p["type"]);
      if (p["name"]) s.name = Str(p["name"], "name");
      if (p["used_mib"]) {
        if (p["used_mib"].IsScalar() && p["used_mib"].Scalar() == "N/A") {
          s.used_not_available = true;
        } else {
          s.used_mib = SeriesOf(p["used_mib"], "used_mib");
        }
      }
      if (p["sm_util"]) s.sm_util = SeriesOf(p["sm_util"], "sm_util");
      if (p["start_s"]) s.start_s = Num(p["start_s"], "start_s");
      if (p["end_s"]) s.end_s = Num(p["end_s"], "end_s");
      if (p["visible_after_calls"]) {
        s.visible_after_calls = static_cast<unsigned>(Int(p["visible_after_calls"], "visible_after_calls", 0, 1000000));
      }
      out.push_back(std::move(s));
    }
    return out;
  }

  MigSpec Mig(const YAML::Node& m, const std::string& where) const {
    CheckKeys(
        m,
        {"gpu_instance_id", "compute_instance_id", "uuid", "name", "memory_total_mib", "unattributed_mib", "processes"},
        where);
    MigSpec s;
    if (!m["gpu_instance_id"] || !m["uuid"] || !m["memory_total_mib"]) {
      Fail(m, where + " needs gpu_instance_id, uuid and memory_total_mib");
    }
    s.gpu_instance_id = static_cast<unsigned>(Int(m["gpu_instance_id"], "gpu_instance_id", 0, 1000));
    if (m["compute_instance_id"]) {
      s.compute_instance_id = static_cast<unsigned>(Int(m["compute_instance_id"], "compute_instance_id", 0, 1000));
    }
    s.uuid = Str(m["uuid"], "uuid");
    if (m["name"]) s.name = Str(m["name"], "name");
    s.memory_total_mib = Num(m["memory_total_mib"], "memory_total_mib");
    if (m["unattributed_mib"]) s.unattributed_mib = SeriesOf(m["unattributed_mib"], "unattributed_mib");
    if (m["processes"]) s.processes = Processes(m["processes"], where);
    return s;
  }

  // A layout a driver could make: each (GPU instance, compute instance) and each MIG UUID once,
  // the compute instances of one GPU instance sharing its memory (one total), and the GPU
  // instances' memory within the card's.
  void CheckMigLayout(const YAML::Node& g, const GpuSpec& s, const std::string& where) const {
    std::set<std::pair<unsigned, unsigned>> ids;
    std::set<std::string> uuids = {s.uuid};
    std::map<unsigned, double> gi_total;
    double sum = 0;
    for (size_t i = 0; i < s.mig_devices.size(); ++i) {
      const MigSpec& m = s.mig_devices[i];
      const YAML::Node& node = g["mig_devices"][i];
      const std::string at = where + ".mig_devices[" + std::to_string(i) + "]";
      if (!ids.insert({m.gpu_instance_id, m.compute_instance_id}).second) {
        Fail(node, at + ": gpu_instance_id " + std::to_string(m.gpu_instance_id) + " with compute_instance_id " +
                       std::to_string(m.compute_instance_id) + " listed twice");
      }
      if (!uuids.insert(m.uuid).second) Fail(node["uuid"], at + ": uuid " + m.uuid + " used twice");
      auto [it, first] = gi_total.emplace(m.gpu_instance_id, m.memory_total_mib);
      if (first) {
        sum += m.memory_total_mib;
      } else if (it->second != m.memory_total_mib) {
        Fail(node["memory_total_mib"], at + ": the compute instances of GPU instance " +
                                           std::to_string(m.gpu_instance_id) +
                                           " share its memory, so they need the same memory_total_mib");
      }
    }
    if (sum > s.memory_total_mib) {
      Fail(g["mig_devices"], where + ": the GPU instances' memory_total_mib add up to more than the GPU's");
    }
  }

  GpuSpec Gpu(const YAML::Node& g, size_t index) const {
    std::string where = "gpus[" + std::to_string(index) + "]";
    CheckKeys(g,
              {"name",
               "uuid",
               "pci_bus_id",
               "pci_device_id",
               "minor",
               "memory_total_mib",
               "memory_reserved_mib",
               "unattributed_mib",
               "utilization_gpu",
               "utilization_memory",
               "bar1_total_mib",
               "bar1_used_mib",
               "temperature_c",
               "power_w",
               "power_limit_w",
               "fan_percent",
               "processes",
               "mig_devices",
               "xid",
               "errors",
               "hangs"},
              where);
    GpuSpec s;
    if (!g["uuid"] || !g["memory_total_mib"]) Fail(g, where + " needs 'uuid' and 'memory_total_mib'");
    if (g["name"]) s.name = Str(g["name"], "name");
    s.uuid = Str(g["uuid"], "uuid");
    if (g["pci_bus_id"]) {
      s.pci_bus_id = Str(g["pci_bus_id"], "pci_bus_id");
      unsigned d, b, dev, fn;
      char tail;
      if (std::sscanf(s.pci_bus_id.c_str(), "%x:%x:%x.%x%c", &d, &b, &dev, &fn, &tail) != 4) {
        Fail(g["pci_bus_id"], "expected a PCI bus id like 00000000:3B:00.0, got '" + s.pci_bus_id + "'");
      }
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "00000000:%02X:00.0", static_cast<unsigned>(0x10 + index));
      s.pci_bus_id = buf;
    }
    if (g["pci_device_id"])
      s.pci_device_id = static_cast<unsigned>(Int(g["pci_device_id"], "pci_device_id", 0, 0xFFFFFFFFll));
    if (g["minor"]) s.minor = static_cast<unsigned>(Int(g["minor"], "minor", 0, 255));
    s.memory_total_mib = Num(g["memory_total_mib"], "memory_total_mib");
    if (s.memory_total_mib <= 0) Fail(g["memory_total_mib"], "memory_total_mib must be positive");
    if (g["memory_reserved_mib"]) s.memory_reserved_mib = Num(g["memory_reserved_mib"], "memory_reserved_mib");
    if (s.memory_reserved_mib < 0 || s.memory_reserved_mib >= s.memory_total_mib) {
      Fail(g["memory_reserved_mib"], "memory_reserved_mib must be in [0, memory_total_mib)");
    }
    struct {
      const char* key;
      Series* dst;
    } series[] = {{"unattributed_mib", &s.unattributed_mib},
                  {"utilization_gpu", &s.utilization_gpu},
                  {"utilization_memory", &s.utilization_memory},
                  {"bar1_total_mib", &s.bar1_total_mib},
                  {"bar1_used_mib", &s.bar1_used_mib},
                  {"temperature_c", &s.temperature_c},
                  {"power_w", &s.power_w},
                  {"power_limit_w", &s.power_limit_w},
                  {"fan_percent", &s.fan_percent}};
    for (auto& [key, dst] : series) {
      if (g[key]) *dst = SeriesOf(g[key], key);
    }
    if (g["processes"]) s.processes = Processes(g["processes"], where);
    if (g["mig_devices"]) {
      if (!g["mig_devices"].IsSequence()) Fail(g["mig_devices"], "expected a list for mig_devices");
      size_t i = 0;
      for (const auto& m : g["mig_devices"])
        s.mig_devices.push_back(Mig(m, where + ".mig_devices[" + std::to_string(i++) + "]"));
      CheckMigLayout(g, s, where);
      if (!s.processes.empty()) {
        Fail(g["processes"], where + ": with mig_devices, list processes under their MIG device");
      }
    }
    if (g["xid"]) {
      if (!g["xid"].IsSequence()) Fail(g["xid"], "expected a list for xid");
      for (const auto& x : g["xid"]) {
        CheckKeys(x, {"t", "code"}, where + ".xid[]");
        if (!x["t"] || !x["code"]) Fail(x, "xid[] needs 't' and 'code'");
        s.xid.push_back(
            {Num(x["t"], "xid[].t"), static_cast<unsigned long long>(Int(x["code"], "xid[].code", 0, 100000))});
      }
    }
    if (g["errors"]) s.errors = Errors(g["errors"], where);
    if (g["hangs"]) s.hangs = Hangs(g["hangs"], where);
    return s;
  }

  void Top(const YAML::Node& root, Scenario* out) const {
    if (!root.IsMap()) Fail(root, "expected a mapping at the top of the scenario");
    CheckKeys(root,
              {"driver_version", "nvml_version", "cuda_driver_version", "hide_symbols", "gpus", "errors", "hangs"},
              "the scenario");
    if (root["driver_version"]) out->driver_version = Str(root["driver_version"], "driver_version");
    out->nvml_version = root["nvml_version"] ? Str(root["nvml_version"], "nvml_version") : "12." + out->driver_version;
    if (root["cuda_driver_version"]) {
      out->cuda_driver_version = static_cast<int>(Int(root["cuda_driver_version"], "cuda_driver_version", 1000, 99999));
    }
    if (root["hide_symbols"]) {
      const auto& h = root["hide_symbols"];
      if (!h.IsSequence()) Fail(h, "expected a list of NVML symbols for hide_symbols");
      for (const auto& x : h) {
        std::string f = Str(x, "hide_symbols[]");
        if (std::find(known_.begin(), known_.end(), f) == known_.end()) {
          Fail(x, "hide_symbols names '" + f + "', which is not an NVML symbol the emulator knows");
        }
        out->hide_symbols.push_back(f);
      }
    }
    if (!root["gpus"] || !root["gpus"].IsSequence()) Fail(root, "expected a 'gpus' list");
    size_t i = 0;
    std::set<std::string> uuids;
    for (const auto& g : root["gpus"]) {
      out->gpus.push_back(Gpu(g, i++));
      if (!uuids.insert(out->gpus.back().uuid).second) Fail(g["uuid"], "uuid " + out->gpus.back().uuid + " used twice");
    }
    if (root["errors"]) out->errors = Errors(root["errors"], "scenario");
    if (root["hangs"]) out->hangs = Hangs(root["hangs"], "scenario");
  }

 private:
  std::string file_;
  const std::vector<std::string>& known_;
};

}  // namespace

bool LoadScenario(const std::string& path, const std::vector<std::string>& known_functions, Scenario* out,
                  std::string* error) {
  Reader reader(path, known_functions);
  try {
    YAML::Node root = YAML::LoadFile(path);
    Scenario s;
    s.path = path;
    reader.Top(root, &s);
    *out = std::move(s);
    return true;
  } catch (const ParseFailure& f) {
    *error = f.message;
  } catch (const YAML::BadFile&) {
    *error = path + ": cannot open the scenario file";
  } catch (const YAML::Exception& e) {
    *error = path + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) + ": " + e.msg;
  }
  return false;
}

}  // namespace vw::emulator
