#include "core/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace vw {

Result<std::string> ReadWholeFile(const std::string& path, size_t max_bytes, std::string_view what) {
  const std::string named = std::string(what) + path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FromErrno(errno, "open " + named);
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return FromErrno(err, "read " + named);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      return Status::IoError("read " + named + ": file larger than " + std::to_string(max_bytes >> 20) + " MiB");
    }
  }
  ::close(fd);
  return out;
}

}  // namespace vw
