#include "cli/proc_flags.h"

#include <filesystem>
#include <system_error>

#include "core/file_io.h"
#include "sources/procfs/proc_fs.h"

namespace vw::cli {

namespace fs = std::filesystem;

Status CheckProcRootFlag(const std::string& proc_root) {
  Status s = procfs::CheckProcRoot(proc_root);
  if (s.ok()) return s;
  return Status(s.code(), "--proc-root " + s.message() + " (is the host's /proc mounted there?)");
}

Result<std::string> ResolvePasswd(const std::string& proc_root, const std::string& passwd_flag) {
  std::error_code ec;
  if (!passwd_flag.empty()) {
    auto text = ReadWholeFile(passwd_flag, 64u << 20);
    if (!text.ok()) return Status(text.status().code(), "--passwd: " + text.status().message());
    fs::path abs = fs::absolute(passwd_flag, ec);
    return ec ? passwd_flag : abs.string();
  }
  const fs::path root(proc_root);
  if (fs::weakly_canonical(root, ec) == fs::path("/proc")) return std::string();
  const fs::path file = root / "passwd";
  if (!fs::is_regular_file(file, ec)) return std::string();
  fs::path abs = fs::absolute(file, ec);
  return ec ? file.string() : abs.string();
}

Result<std::string> ResolveKubeLogs(const std::string& kube_logs_flag) {
  if (kube_logs_flag == "none") return std::string();
  std::error_code ec;
  if (kube_logs_flag.empty()) return fs::is_directory("/var/log", ec) ? std::string("/var/log") : std::string();
  const fs::path dir(kube_logs_flag);
  if (!fs::exists(dir, ec)) {
    return Status(StatusCode::kNotFound, "--kube-logs " + kube_logs_flag +
                                             ": does not exist (the kubelet's log directory, /var/log on a node; "
                                             "'none' to read no pod names)");
  }
  if (!fs::is_directory(dir, ec)) {
    return Status(StatusCode::kInvalidArgument, "--kube-logs " + kube_logs_flag + ": not a directory");
  }
  return kube_logs_flag;
}

}  // namespace vw::cli
