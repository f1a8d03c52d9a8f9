#include "sources/kernel/kernel_log_follower.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "sources/kernel/kernel_log_reader.h"

namespace vw::kernel {

KernelLogFollower::KernelLogFollower(std::string path) : path_(std::move(path)) {}

KernelLogFollower::~KernelLogFollower() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

constexpr size_t kTailBytes = 64;                   // bytes before the read offset kept to recognise the file
constexpr size_t kMaxKmsgBytesPerRead = 64u << 20;  // the kernel's ring is a few MiB at most

// The last kTailBytes bytes of the open file `fd` before `offset` (fewer at the start of the file;
// empty when they cannot be read).
std::string ReadTail(int fd, uint64_t offset) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(offset, kTailBytes));
  std::string tail(n, '\0');
  ssize_t got = ::pread(fd, tail.data(), n, static_cast<off_t>(offset - n));
  return got == static_cast<ssize_t>(n) ? tail : std::string();
}

}  // namespace

void KernelLogFollower::FollowFromEnd(int fd, const struct stat& st) {
  tail_ = ReadTail(fd, static_cast<uint64_t>(st.st_size));
  offset_ = static_cast<uint64_t>(st.st_size);
  file_id_ = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  source_ = path_;
  if (fd_ >= 0 && fd_ != fd) ::close(fd_);
  fd_ = fd;
}

namespace {

// The complete lines of the open file `fd` from `offset` to its end (a last line without its end
// is left for later).
Result<std::string> ReadCompleteLines(int fd, uint64_t offset, const std::string& path) {
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(offset + text.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      return FromErrno(errno, "read kernel log " + path);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  const size_t complete = text.rfind('\n');
  text.resize(complete == std::string::npos ? 0 : complete + 1);
  return text;
}

}  // namespace

Status KernelLogFollower::Start(bool wait_for_missing_file) {
  if (path_ == "none") {
    notes_.push_back("kernel log not read (--kernel-log none)");
    return Status::Ok();
  }
  if (!path_.empty()) {
    struct stat st {};
    int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && wait_for_missing_file) {
      // Waited for only in a directory that exists: a path whose directory is missing is a typo.
      const std::string dir = path_.find('/') == std::string::npos ? "." : path_.substr(0, path_.rfind('/') + 1);
      struct stat ds {};
      if (::stat(dir.c_str(), &ds) == 0 && S_ISDIR(ds.st_mode)) {
        notes_.push_back("kernel log " + path_ + " does not exist (yet)");
        mode_ = Mode::kFile;
        waiting_ = true;  // source_ stays empty until the file is read
        return Status::Ok();
      }
      errno = ENOENT;
    }
    if (fd < 0) return FromErrno(errno, "open kernel log " + path_);
    int rc = ::fstat(fd, &st);
    int err = errno;
    if (rc == 0 && S_ISCHR(st.st_mode)) {
      // /dev/kmsg named: followed as the system log is (records, never a read that waits).
      ::close(fd);
      fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd_ < 0) return FromErrno(errno, "open kernel log " + path_);
      (void)::lseek(fd_, 0, SEEK_END);  // skips the records held (a device that cannot seek holds none)
      mode_ = Mode::kKmsg;
      source_ = path_;
      return Status::Ok();
    }
    // Opening succeeds for a directory (and for a file that read() then refuses): read one byte
    // now, so that such a path fails at start like a missing one, not on the first poll.
    char probe = 0;
    if (rc == 0 && S_ISDIR(st.st_mode)) {
      rc = -1;
      err = EISDIR;
    } else if (rc == 0 && ::pread(fd, &probe, 1, 0) < 0) {
      rc = -1;
      err = errno;
    }
    if (rc != 0) {
      ::close(fd);
      return FromErrno(err, "read kernel log " + path_);
    }
    FollowFromEnd(fd, st);  // keeps fd open: lines the old file gains before a rotation are read
    mode_ = Mode::kFile;
    return Status::Ok();
  }
  fd_ = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ >= 0 && ::lseek(fd_, 0, SEEK_END) >= 0) {
    mode_ = Mode::kKmsg;
    source_ = "/dev/kmsg";
    return Status::Ok();
  }
  notes_.push_back(std::string("kernel log: /dev/kmsg: ") + std::strerror(errno));
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  auto dmesg = ReadDmesg();
  if (!dmesg.ok()) {
    notes_.push_back("kernel log: " + dmesg.status().message());
    return Status::Ok();
  }
  if (!dmesg->events.empty()) last_dmesg_line_ = dmesg->events.back().line;
  mode_ = Mode::kDmesg;
  source_ = "dmesg";
  return Status::Ok();
}

Result<std::string> KernelLogFollower::ReadKmsgRecords() {
  std::string text;
  char record[8192];  // one read() returns one record
  for (int guard = 0; guard < 100000; ++guard) {
    ssize_t n = ::read(fd_, record, sizeof record);
    if (n < 0) {
      if (errno == EINTR || errno == EPIPE) continue;  // EPIPE: records overwritten before we read them
      if (errno == EAGAIN) break;
      return FromErrno(errno, "read " + source_);
    }
    if (n == 0) break;
    text.append(record, static_cast<size_t>(n));
    if (text.back() != '\n') text.push_back('\n');
    if (text.size() > kMaxKmsgBytesPerRead) break;  // a device that never runs dry: the rest next time
  }
  return text;
}

Result<KernelLogScan> KernelLogFollower::ReadNew() {
  switch (mode_) {
    case Mode::kNone: return KernelLogScan{};
    case Mode::kKmsg: {
      auto text = ReadKmsgRecords();
      if (!text.ok()) return text.status();
      return ScanKernelLog(*text);
    }
    case Mode::kDmesg: {
      auto scan = ReadDmesg();
      if (!scan.ok()) return scan.status();
      size_t from = 0;
      if (!last_dmesg_line_.empty()) {
        for (size_t i = scan->events.size(); i-- > 0;) {
          if (scan->events[i].line == last_dmesg_line_) {
            from = i + 1;
            break;
          }
        }
      }
      if (!scan->events.empty()) last_dmesg_line_ = scan->events.back().line;
      scan->events.erase(scan->events.begin(), scan->events.begin() + static_cast<std::ptrdiff_t>(from));
      return scan;
    }
    case Mode::kFile: break;
  }
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FromErrno(errno, "open kernel log " + path_);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return FromErrno(err, "read kernel log " + path_);
  }
  if (waiting_) {
    // The file waited for exists now: followed from its end, as Start() does, so that what it held
    // already (a log moved into place, days of it) is not counted; lines written between its
    // creation and this look are not counted either.
    FollowFromEnd(fd, st);
    waiting_ = false;
    return KernelLogScan{};
  }
  // Another file at the path (rotated: moved away, a new one created): the lines the old one gained
  // since the last look (written before the logger reopened) are read to its end first, then the
  // new file from its start.
  std::string text;
  const std::pair<uint64_t, uint64_t> id{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  if (id != file_id_) {
    if (fd_ >= 0) {
      auto rest = ReadCompleteLines(fd_, offset_, path_);
      if (rest.ok()) text = std::move(*rest);
    }
    offset_ = 0;
    tail_.clear();
    file_id_ = id;
  } else if (static_cast<uint64_t>(st.st_size) < offset_ ||
             (!tail_.empty() && !ReadTail(fd, offset_).ends_with(tail_))) {
    // The same file truncated (and maybe written past the old offset between two looks).
    offset_ = 0;
    tail_.clear();
  }
  if (fd_ >= 0 && fd_ != fd) ::close(fd_);
  fd_ = fd;
  auto added = ReadCompleteLines(fd_, offset_, path_);
  if (!added.ok()) return added.status();
  if (!added->empty()) {
    offset_ += added->size();
    tail_ += added->substr(added->size() - std::min(added->size(), kTailBytes));
    if (tail_.size() > kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
    text += *added;
  }
  return ScanKernelLog(text);
}

}  // namespace vw::kernel
