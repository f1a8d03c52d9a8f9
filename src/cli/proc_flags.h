// The process-facts flags that `check` and `watch` share, checked and resolved once at start, so
// that both commands read the same processes and name the same user for the same PID:
// - --proc-root must be a procfs root (procfs::CheckProcRoot): a missing or empty mount point is a
//   usage error, not a host where every GPU process is dead;
// - --passwd names the passwd-format file for uid -> user name.
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

}  // namespace vw::cli
