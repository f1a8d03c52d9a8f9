#include "sources/kernel/kernel_log_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "core/file_io.h"

namespace vw::kernel {

Result<KernelLogScan> ReadKernelLogFile(const std::string& path) {
  // /dev/kmsg named: its records as the system log's are read; read to its end, it would wait for
  // the next message for ever.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) return ReadKmsg(path);
  auto text = ReadWholeFile(path, 1ull << 30, "kernel log ");
  if (!text.ok()) return text.status();
  return ScanKernelLog(*text);
}

Result<KernelLogScan> ReadKmsg(const std::string& kmsg_path) {
  int fd = ::open(kmsg_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return FromErrno(errno, "open " + kmsg_path);
  constexpr size_t kMaxBytes = 256u << 20;
  std::string text;
  char record[8192];  // one read() returns one record
  for (int guard = 0; guard < 1000000; ++guard) {
    ssize_t n = ::read(fd, record, sizeof record);
    if (n < 0) {
      if (errno == EINTR || errno == EPIPE) continue;  // EPIPE: records overwritten while reading
      if (errno == EAGAIN) break;
      int err = errno;
      ::close(fd);
      return FromErrno(err, "read " + kmsg_path);
    }
    if (n == 0) break;  // a regular file given as kmsg
    text.append(record, static_cast<size_t>(n));
    if (text.back() != '\n') text.push_back('\n');
    if (text.size() > kMaxBytes) {  // the kernel's ring is a few MiB: this device never runs dry
      ::close(fd);
      return Status::InvalidArgument(kmsg_path + ": more than 256 MiB without an end: not a kernel log");
    }
  }
  ::close(fd);
  // kmsg continuation lines (" KEY=value") carry no Xid; ScanKernelLog ignores them.
  return ScanKernelLog(text);
}

Result<KernelLogScan> ReadDmesg() {
  FILE* pipe = ::popen("dmesg 2>/dev/null", "r");
  if (pipe == nullptr) return FromErrno(errno, "run dmesg");
  std::string text;
  char buf[65536];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) text.append(buf, n);
  int rc = ::pclose(pipe);
  if (rc != 0) {
    int code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    return Status::Unavailable("dmesg exited with status " + std::to_string(code) +
                               (code == 1 ? " (kernel log restricted: dmesg_restrict, or no permission)" : ""));
  }
  return ScanKernelLog(text);
}

KernelLogRead ReadSystemKernelLog() {
  KernelLogRead out;
  auto kmsg = ReadKmsg();
  if (kmsg.ok()) {
    out.scan = std::move(*kmsg);
    out.source = "/dev/kmsg";
    return out;
  }
  out.notes.push_back("kernel log: " + kmsg.status().message());
  auto dmesg = ReadDmesg();
  if (dmesg.ok()) {
    out.scan = std::move(*dmesg);
    out.source = "dmesg";
    return out;
  }
  out.notes.push_back("kernel log: " + dmesg.status().message());
  return out;
}

}  // namespace vw::kernel
