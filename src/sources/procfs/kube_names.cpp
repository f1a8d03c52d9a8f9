#include "sources/procfs/kube_names.h"

#include <algorithm>
#include <set>
#include <vector>

namespace vw::procfs {
namespace {

// Splits on '_' into exactly three non-empty parts.
bool SplitThree(const std::string& s, std::string& a, std::string& b, std::string& c) {
  const size_t first = s.find('_');
  if (first == std::string::npos) return false;
  const size_t second = s.find('_', first + 1);
  if (second == std::string::npos || s.find('_', second + 1) != std::string::npos) return false;
  a = s.substr(0, first);
  b = s.substr(first + 1, second - first - 1);
  c = s.substr(second + 1);
  return !a.empty() && !b.empty() && !c.empty();
}

bool IsHex(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'); });
}

// A pod UID as the kubelet writes it: 8-4-4-4-12 hex digits, or a static pod's 32 hex digits.
bool IsPodUid(const std::string& s) {
  if (s.size() == 32) return IsHex(s);
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash != (s[i] == '-')) return false;
  }
  std::string digits = s;
  digits.erase(std::remove(digits.begin(), digits.end(), '-'), digits.end());
  return IsHex(digits);
}

// A name Kubernetes allows for a namespace, pod or container (DNS-1123: lower-case letters, digits,
// '-' and '.', beginning and ending with a letter or digit, at most 253 characters). Anything else
// in the log directory's names is not taken: those names go into the shell commands a finding
// suggests (`kubectl exec -n NS POD -c CONTAINER ...`).
bool IsKubeName(const std::string& s) {
  auto alnum = [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); };
  return !s.empty() && s.size() <= 253 && alnum(s.front()) && alnum(s.back()) &&
         std::all_of(s.begin(), s.end(), [&](char ch) { return alnum(ch) || ch == '-' || ch == '.'; });
}

std::string Brief(const Status& s) {
  return s.code() == StatusCode::kPermissionDenied ? std::string("permission denied") : s.message();
}

}  // namespace

bool ParsePodLogDir(const std::string& entry, KubePod& pod, std::string& uid) {
  KubePod p;
  std::string u;
  if (!SplitThree(entry, p.pod_namespace, p.pod_name, u) || !IsPodUid(u) || !IsKubeName(p.pod_namespace) ||
      !IsKubeName(p.pod_name)) {
    return false;
  }
  pod = std::move(p);
  uid = std::move(u);
  return true;
}

bool ParseContainerLogLink(const std::string& entry, KubeContainer& container, std::string& id) {
  constexpr size_t kIdSize = 64;
  const std::string suffix = ".log";
  if (entry.size() <= suffix.size() + kIdSize + 1 ||
      entry.compare(entry.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return false;
  }
  const std::string stem = entry.substr(0, entry.size() - suffix.size());
  const std::string cid = stem.substr(stem.size() - kIdSize);
  if (!IsHex(cid) || stem[stem.size() - kIdSize - 1] != '-') return false;
  KubeContainer c;
  if (!SplitThree(stem.substr(0, stem.size() - kIdSize - 1), c.pod_name, c.pod_namespace, c.container_name) ||
      !IsKubeName(c.pod_name) || !IsKubeName(c.pod_namespace) || !IsKubeName(c.container_name)) {
    return false;
  }
  container = std::move(c);
  id = cid;
  return true;
}

KubeNames ReadKubeNames(const ProcFs& log_dir) {
  KubeNames out;
  // Each entry of `sub` that `take` accepts; a directory that cannot be listed (other than absent)
  // is a problem.
  auto read = [&](const char* sub, const auto& take) {
    auto entries = log_dir.ListDir(sub);
    if (!entries.ok()) {
      if (entries.status().code() == StatusCode::kNotFound) return;
      out.problem += (out.problem.empty() ? "" : "; ") + log_dir.Describe(sub) + ": " + Brief(entries.status());
      return;
    }
    for (const std::string& e : *entries) take(e);
  };
  read("pods", [&](const std::string& e) {
    KubePod p;
    std::string uid;
    if (ParsePodLogDir(e, p, uid)) out.pods[uid] = std::move(p);
  });
  read("containers", [&](const std::string& e) {
    KubeContainer c;
    std::string id;
    if (ParseContainerLogLink(e, c, id)) out.containers[id] = std::move(c);
  });
  return out;
}

void NameKubeHolders(HostSnapshot& host, const KubeNames& names) {
  if (names.pods.empty() && names.containers.empty()) return;
  for (GpuSnapshot& g : host.gpus) {
    for (ProcessSnapshot& p : g.processes) {
      ProcessInfo& i = p.info;
      if (!i.container_id.empty()) {
        if (auto it = names.containers.find(i.container_id); it != names.containers.end()) {
          if (i.container_name.empty()) i.container_name = it->second.container_name;
          if (i.pod_name.empty()) {
            i.pod_namespace = it->second.pod_namespace;
            i.pod_name = it->second.pod_name;
          }
        }
      }
      if (!i.pod_uid.empty() && i.pod_name.empty()) {
        if (auto it = names.pods.find(i.pod_uid); it != names.pods.end()) {
          i.pod_namespace = it->second.pod_namespace;
          i.pod_name = it->second.pod_name;
        }
      }
    }
  }
}

std::string UnnamedPodsNote(const HostSnapshot& host, const KubeNames& names, const std::string& dir) {
  if (!names.pods.empty() || !names.containers.empty() || !names.problem.empty()) return "";
  std::set<int64_t> in_pods;
  for (const GpuSnapshot& g : host.gpus) {
    for (const ProcessSnapshot& p : g.processes) {
      if (!p.info.pod_uid.empty() && p.info.pod_name.empty()) in_pods.insert(p.pid);
    }
  }
  if (in_pods.empty()) return "";
  return std::to_string(in_pods.size()) + " holder(s) run in Kubernetes pods, but " + dir +
         " has no pod log directories (pods/, containers/): they are shown by pod UID; give --kube-logs the node's "
         "/var/log (the DaemonSet mounts it at /host/var/log)";
}

KubeNaming NameFromKubeLogs(HostSnapshot& host, const ProcFs& log_dir) {
  bool in_container = false;
  for (const GpuSnapshot& g : host.gpus) {
    for (const ProcessSnapshot& p : g.processes)
      in_container |= !p.info.container_id.empty() || !p.info.pod_uid.empty();
  }
  if (!in_container) return {};
  const KubeNames names = ReadKubeNames(log_dir);
  NameKubeHolders(host, names);
  return {names.problem, UnnamedPodsNote(host, names, log_dir.Describe(""))};
}

}  // namespace vw::procfs
