// ProcFs: the seam through which every procfs (and /etc/passwd) read goes.
//
// Paths are relative to a root directory ("123/stat" under "/proc"), so tests point the reader at
// a fixture tree, and FaultInjectingProcFs makes any path fail with a chosen Status (EACCES cannot
// be produced with chmod when tests run as root). Errors come back as Status built with
// FromErrno: ENOENT/ESRCH -> kNotFound (the PID vanished), EACCES/EPERM -> kPermissionDenied.
//
// Threading: a ProcFs is immutable after construction except FaultInjectingProcFs::Fail, which
// must not race with reads. Reads themselves are thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace vw::procfs {

// The kind of a file as far as the fd scan needs it: a character device and its device number.
struct FileKind {
  bool char_device = false;
  unsigned major = 0, minor = 0;  // when char_device
};

class ProcFs {
 public:
  virtual ~ProcFs() = default;
  // Whole file contents (procfs files report size 0, so this reads until EOF).
  virtual Result<std::string> ReadFile(const std::string& rel) const = 0;
  // Entry names of a directory, without "." and "..", unsorted.
  virtual Result<std::vector<std::string>> ListDir(const std::string& rel) const = 0;
  // Target of a symbolic link ("/dev/nvidia0").
  virtual Result<std::string> ReadLink(const std::string& rel) const = 0;
  // What stat() says of the file, following links (for /proc/PID/fd/N: the open file itself,
  // even when its name was unlinked).
  virtual Result<FileKind> Stat(const std::string& rel) const = 0;
  // Human name of the root for messages ("/proc").
  virtual std::string Describe(const std::string& rel) const = 0;
};

// Reads a real directory tree (the live /proc, or a fixture).
class DirProcFs : public ProcFs {
 public:
  explicit DirProcFs(std::string root);
  Result<std::string> ReadFile(const std::string& rel) const override;
  Result<std::vector<std::string>> ListDir(const std::string& rel) const override;
  Result<std::string> ReadLink(const std::string& rel) const override;
  Result<FileKind> Stat(const std::string& rel) const override;
  std::string Describe(const std::string& rel) const override;

 private:
  std::string root_;
};

// Whether `root` can serve as a procfs root: an existing, listable directory that holds at least
// one process directory (a numeric entry such as "1", or "self"). A missing or empty mount point
// would otherwise read as "every PID NVML lists is dead". The Status names `root` and the reason
// (kNotFound: missing; kInvalidArgument: not a directory, or no process directory in it).
Status CheckProcRoot(const std::string& root);

// Wraps another ProcFs; paths registered with Fail() return that Status instead.
class FaultInjectingProcFs : public ProcFs {
 public:
  explicit FaultInjectingProcFs(const ProcFs& inner) : inner_(inner) {}
  void Fail(const std::string& rel, Status status) { faults_[rel] = std::move(status); }
  Result<std::string> ReadFile(const std::string& rel) const override;
  Result<std::vector<std::string>> ListDir(const std::string& rel) const override;
  Result<std::string> ReadLink(const std::string& rel) const override;
  Result<FileKind> Stat(const std::string& rel) const override;
  std::string Describe(const std::string& rel) const override { return inner_.Describe(rel); }

 private:
  const Status* FaultFor(const std::string& rel) const;
  const ProcFs& inner_;
  std::map<std::string, Status> faults_;
};

}  // namespace vw::procfs
