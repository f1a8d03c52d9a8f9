// Reading the kernel log for Xid lines: a file given by the user (--kernel-log), /dev/kmsg
// (non-blocking: reads records until EAGAIN, never waits for new ones), or the output of `dmesg`.
// Unreadable sources (dmesg_restrict, no permission in a container) are skipped and say why.
//
// Threading: free functions, no shared state.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "sources/kernel/xid_parser.h"

namespace vw::kernel {

struct KernelLogRead {
  KernelLogScan scan;
  std::string source;              // "/dev/kmsg", "dmesg", or the file path; empty when none worked
  std::vector<std::string> notes;  // why sources were skipped ("/dev/kmsg: permission denied")
};

// Reads one file (plain text, one line per message); a character device (/dev/kmsg named) is read
// as ReadKmsg does. Fails with the path when unreadable.
Result<KernelLogScan> ReadKernelLogFile(const std::string& path);

// Reads the records /dev/kmsg (or `kmsg_path`) holds now; never blocks.
Result<KernelLogScan> ReadKmsg(const std::string& kmsg_path = "/dev/kmsg");

// Runs `dmesg` and parses its output.
Result<KernelLogScan> ReadDmesg();

// The default chain: /dev/kmsg, then dmesg; neither is an error (notes say why).
KernelLogRead ReadSystemKernelLog();

}  // namespace vw::kernel
