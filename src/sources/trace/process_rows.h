// The process rows of one sample, one per PID. A table lists a process once per MIG instance it
// runs on (and a pmon log may repeat a PID); the series of a process takes one value per instant.
// Plain functions, no shared state.
#pragma once

#include <cstdint>
#include <vector>

#include "core/sample.h"

namespace vw::trace {

// `listed` with one entry per PID: a PID listed twice in one sample holds the sum of its rows,
// under its first row's command, in the order of first rows; when its rows are on different MIG
// GPU instances the sum is on none of them (no gpu_instance_id nor instance memory: its runway is
// against the card). Without a repeated PID (the usual case) that is `listed` itself; else
// `*merged`. `*pids` is scratch, reused from call to call.
const std::vector<ProcessMemory>& OnePerPid(const std::vector<ProcessMemory>& listed, std::vector<int64_t>* pids,
                                            std::vector<ProcessMemory>* merged);

}  // namespace vw::trace
