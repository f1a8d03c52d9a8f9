// KernelLogFollower: the Xid lines the kernel log gained since the last look, for the daemon.
//   - a file (--kernel-log FILE): reads from the byte offset where the last read stopped, complete
//     lines only; a file that is not the one read before (another file at the path: rotated or
//     recreated; one that shrank; one whose last bytes before the offset changed: truncated and
//     written again) is read again from its start, and a rotated one (kept open) is first read to
//     its end, for the lines written to it before the logger reopened; a character device
//     (/dev/kmsg named) is followed as the system log's /dev/kmsg;
//   - the system log: /dev/kmsg kept open (its reader position moves past each record read), else
//     `dmesg`, where the new events are those after the last event line seen in the previous run;
//   - "none": nothing.
// Start() skips what the log holds already, so counts are "since the daemon started".
//
// Threading: one thread owns a follower.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "sources/kernel/xid_parser.h"

namespace vw::kernel {

class KernelLogFollower {
 public:
  // `path`: a file, "" for the system log, "none" for no kernel log.
  explicit KernelLogFollower(std::string path);
  ~KernelLogFollower();
  KernelLogFollower(const KernelLogFollower&) = delete;
  KernelLogFollower& operator=(const KernelLogFollower&) = delete;

  // Positions the follower at the end of the log. Fails only for an unreadable file path;
  // an unreadable system log is a note, and the follower then reads nothing. With
  // `wait_for_missing_file` (the daemon) a file path that does not exist, in a directory that
  // does, is not a failure either: a note says so, reading() is false and source() empty,
  // ReadNew() fails (naming the path) until the file exists, and from then on follows it from
  // the end it had at that look (what it held already is not counted).
  Status Start(bool wait_for_missing_file = false);

  // The events (and PCI -> UUID map lines) of the lines added since the previous call.
  Result<KernelLogScan> ReadNew();

  // "/dev/kmsg", "dmesg", the file path, or empty when nothing is read.
  const std::string& source() const { return source_; }
  // True when Start() found something to read (a file, /dev/kmsg or dmesg); false for "none" and
  // for a system log that cannot be read (then notes() says why).
  bool reading() const { return mode_ != Mode::kNone && !waiting_; }
  // True for "none": the kernel log is skipped on purpose.
  bool disabled() const { return path_ == "none"; }
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  enum class Mode { kNone, kFile, kKmsg, kDmesg };
  // File mode: follow the open file `fd` (its stat `st`) from its end; what it holds is not counted.
  void FollowFromEnd(int fd, const struct stat& st);
  Result<std::string> ReadKmsgRecords();

  std::string path_;
  Mode mode_ = Mode::kNone;
  std::string source_;
  std::vector<std::string> notes_;
  bool waiting_ = false;                   // file mode: the file did not exist at Start(); not looked at yet
  uint64_t offset_ = 0;                    // file mode: bytes consumed
  std::pair<uint64_t, uint64_t> file_id_;  // file mode: device and inode of the file read
  std::string tail_;                       // file mode: the last bytes before offset_ (at most 64)
  int fd_ = -1;                            // kmsg mode; file mode: the file read (kept open)
  std::string last_dmesg_line_;            // dmesg mode: the last event line seen
};

}  // namespace vw::kernel
