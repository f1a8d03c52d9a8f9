// The process-facts flags that `check` and `watch` share, checked and resolved once at start, so
// that both commands read the same processes and name the same user for the same PID:
// - --proc-root must be a procfs root (procfs::CheckProcRoot): a missing or empty mount point is a
//   usage error, not a host where every GPU process is dead;
// - --passwd names the passwd-format file for uid -> user name;
// - --kube-logs names the kubelet's log directory, whose entries name pods and containers.
// Plain functions, no state; safe from any thread.
#pragma once

#include <string>

#include "core/status.h"

namespace vw::cli {

// Ok for a usable root; otherwise "--proc-root PATH: does not exist (is the host's /proc mounted
// there?)" and the like, with the code of procfs::CheckProcRoot.
Status CheckProcRootFlag(const std::string& proc_root);

// The passwd file to read, as an absolute path, or "" for the system user database (getpwuid).
// A given --passwd is relative to the working directory and must be readable ("--passwd FILE:
// ..." otherwise). Without it: <proc-root>/passwd when the root is a fixture (not /proc itself)
// and holds one.
Result<std::string> ResolvePasswd(const std::string& proc_root, const std::string& passwd_flag);

// The directory whose pods/ and containers/ name Kubernetes pods and containers
// (procfs/kube_names.h), or "" when names are not to be read. "none": not read. A given directory
// must exist and be one ("--kube-logs DIR: does not exist" otherwise). Without the flag: /var/log
// when it is a directory (a node without Kubernetes simply has no pods/ in it).
Result<std::string> ResolveKubeLogs(const std::string& kube_logs_flag);

}  // namespace vw::cli
