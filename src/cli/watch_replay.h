// `vramwatch watch --replay FILE`: a recording, or any file `analyze` reads, fed through the live
// pipeline (cli/watch_pipeline.h) on the trace's own clock. The file is read as analyze reads it
// (--format, --columns, --total, and --interval, when given, as the spacing of a file without
// timestamps); the records of one instant are one sample, and a record's process list is fresh
// process facts (a record without one leaves the processes as they were). With --speed N the
// replay waits out the trace's gaps divided by N, in slices of at most 100 ms. Xid lines of
// --kernel-log FILE are fed when the trace reaches their time (cli/replay_xids.h).
//
// Output: each alert change on stdout (on the trace's clock), then one line per GPU
// (WatchPipeline::GpuVerdictLines); notes on stderr unless --quiet. Exit code: the worst alert
// that fired (0, 1 warning, 2 critical), or 3 when a flag or a file cannot be used.
#pragma once

#include <atomic>

#include "cli/watch_flags.h"
#include "cli/watch_pipeline.h"

namespace vw::cli {

// Replays f.replay with `config` (its alerts' resend interval is set to 0: each change is printed
// once), into --db with `history` (retention on the trace's clock, --db-max-size). Stops early,
// with the lines of what was read, once `stop` is set (SIGINT, SIGTERM).
int RunReplay(const WatchFlags& f, WatchConfig config, const storage::HistoryOptions& history,
              const std::atomic<bool>& stop);

}  // namespace vw::cli
