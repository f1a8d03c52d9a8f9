#include "sources/procfs/proc_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/file_io.h"

namespace vw::procfs {

DirProcFs::DirProcFs(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string DirProcFs::Describe(const std::string& rel) const {
  if (rel.empty()) return root_;
  if (!rel.empty() && rel.front() == '/') return rel;
  return root_ + "/" + rel;
}

Result<std::string> DirProcFs::ReadFile(const std::string& rel) const {
  return ReadWholeFile(Describe(rel), 64u << 20);
}

Result<std::vector<std::string>> DirProcFs::ListDir(const std::string& rel) const {
  std::string path = Describe(rel);
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return FromErrno(errno, "opendir " + path);
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  int err = errno;
  ::closedir(dir);
  if (err != 0) return FromErrno(err, "readdir " + path);
  return names;
}

Result<std::string> DirProcFs::ReadLink(const std::string& rel) const {
  std::string path = Describe(rel);
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n < 0) return FromErrno(errno, "readlink " + path);
  return std::string(buf, static_cast<size_t>(n));
}

Result<FileKind> DirProcFs::Stat(const std::string& rel) const {
  std::string path = Describe(rel);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return FromErrno(errno, "stat " + path);
  FileKind k;
  k.char_device = S_ISCHR(st.st_mode);
  if (k.char_device) {
    k.major = ::major(st.st_rdev);
    k.minor = ::minor(st.st_rdev);
  }
  return k;
}

Status CheckProcRoot(const std::string& root) {
  struct stat st {};
  if (::stat(root.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::NotFound(root + ": does not exist");
    return FromErrno(errno, root);
  }
  if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument(root + ": is not a directory");
  auto names = DirProcFs(root).ListDir("");
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    if (name == "self") return Status::Ok();
    if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return Status::Ok();
    }
  }
  return Status::InvalidArgument(root + ": holds no process directories (no numeric entry, no 'self')");
}

const Status* FaultInjectingProcFs::FaultFor(const std::string& rel) const {
  auto it = faults_.find(rel);
  return it == faults_.end() ? nullptr : &it->second;
}

Result<std::string> FaultInjectingProcFs::ReadFile(const std::string& rel) const {
  if (const Status* s = FaultFor(rel)) return *s;
  return inner_.ReadFile(rel);
}

Result<std::vector<std::string>> FaultInjectingProcFs::ListDir(const std::string& rel) const {
  if (const Status* s = FaultFor(rel)) return *s;
  return inner_.ListDir(rel);
}

Result<std::string> FaultInjectingProcFs::ReadLink(const std::string& rel) const {
  if (const Status* s = FaultFor(rel)) return *s;
  return inner_.ReadLink(rel);
}

Result<FileKind> FaultInjectingProcFs::Stat(const std::string& rel) const {
  if (const Status* s = FaultFor(rel)) return *s;
  return inner_.Stat(rel);
}

}  // namespace vw::procfs
