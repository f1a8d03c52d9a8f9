// Kubernetes names for the IDs a cgroup path gives: which pod (namespace and name) a pod UID is,
// and which container (its name, in which pod) a container ID is.
//
// The cgroup says only `pod6b8e2a1c-...` and a 64-hex container ID. The kubelet writes every
// container's log as <log-dir>/pods/<namespace>_<pod>_<pod-uid>/<container>/<restart>.log and
// links it as <log-dir>/containers/<pod>_<namespace>_<container>-<container-id>.log; Kubernetes
// names cannot hold '_', so both names split without doubt. Reading these two directories needs
// no API server, no credentials and no network, which a node agent must not depend on.
//
// Read through a ProcFs rooted at the log directory (/var/log on a node, the host's /var/log
// mounted at /host/var/log in the DaemonSet). A directory that is absent (no Kubernetes here) is
// no problem; one that cannot be listed is (`problem`). Entries of another shape are skipped.
// Plain data and functions; safe from any thread.
#pragma once

#include <map>
#include <string>

#include "core/snapshot.h"
#include "sources/procfs/proc_fs.h"

namespace vw::procfs {

struct KubePod {
  std::string pod_namespace;
  std::string pod_name;
};

struct KubeContainer {
  std::string pod_namespace;
  std::string pod_name;
  std::string container_name;
};

struct KubeNames {
  std::map<std::string, KubePod> pods;              // by pod UID as the cgroup path gives it
  std::map<std::string, KubeContainer> containers;  // by container ID (64 hex digits)
  std::string problem;                              // "pods: permission denied" and the like; empty when read or absent
};

// "<namespace>_<pod>_<uid>" -> the pod and its UID; false for another shape.
bool ParsePodLogDir(const std::string& entry, KubePod& pod, std::string& uid);

// "<pod>_<namespace>_<container>-<64 hex>.log" -> the container and its ID; false for another shape.
bool ParseContainerLogLink(const std::string& entry, KubeContainer& container, std::string& id);

// Lists <root>/pods and <root>/containers.
KubeNames ReadKubeNames(const ProcFs& log_dir);

// Names every holder whose container ID or pod UID `names` knows: ProcessInfo::pod_namespace,
// pod_name and container_name. The container's entry names its pod too (when the pod UID is not
// in the cgroup path); names already set are kept.
void NameKubeHolders(HostSnapshot& host, const KubeNames& names);

// When holders run in Kubernetes pods (a pod UID from the cgroup) but the log directory named
// none at all (its pods/ and containers/ absent or empty: not the node's, or not mounted), a note
// saying so: "2 holder(s) run in Kubernetes pods, but /var/log has no pod log directories: they
// are shown by pod UID; ..." Empty otherwise.
std::string UnnamedPodsNote(const HostSnapshot& host, const KubeNames& names, const std::string& dir);

// What naming one sample's holders said: KubeNames::problem and the UnnamedPodsNote.
struct KubeNaming {
  std::string problem;
  std::string unnamed_note;
};

// ReadKubeNames, NameKubeHolders and UnnamedPodsNote for one sample, as `check` and `watch` do at
// each look; the directory is not read when no holder runs in a container or pod.
KubeNaming NameFromKubeLogs(HostSnapshot& host, const ProcFs& log_dir);

}  // namespace vw::procfs
