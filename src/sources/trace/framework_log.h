// Framework memory logs: what a training script prints of PyTorch's own view of GPU memory, step
// after step, read into one series of steps per device.
//
// The driver counts what the process holds (`memory.used`); PyTorch knows what its tensors use
// (allocated) and what its caching allocator keeps from the driver (reserved). Scripts print them
// in their own words; these are read, in any mix, one value or several per line:
// - calls and their values: `torch.cuda.memory_allocated(0) 318986240`,
//   `memory_reserved()=759169024`, `memory_allocated('cuda:1')`, `(device=1)` (bytes unless a unit
//   follows);
// - words and values: `allocated: 20.4 | reserved: 26.0` in a line that says `(MB)`,
//   `alloc cur 1.9GB ... reserved cur 11.3GB`, `allocated=1.2 GiB`, `Allocated (GB): 1.5` and
//   `allocated [MB]: 1500.5` (a unit in brackets after the key), `allocated/reserved: 2048/4096 MB`
//   (two keys, their values as a fraction) and `Allocated 2048 / 81920 MiB` (a part of a whole:
//   the whole's unit, the whole not read);
// - `torch.cuda.memory_summary()` tables: `| Allocated memory | 727515 KiB | ...` and
//   `| GPU reserved memory | 12420 MB | ...` (the Cur Usage column), the device from the table's
//   `device ID N` line;
// - torch.cuda.memory_stats() printed as a dict, JSON or (Python 3.11 and older) an OrderedDict of
//   tuples: `'allocated_bytes.all.current': 318986240`, `('reserved_bytes.all.current', 759169024)`
//   (other keys, such as `allocated_bytes.all.allocated`, the
//   bytes ever allocated, are not read);
// - a logger's metrics CSV whose header names those keys (alone or after a prefix such as
//   `DeviceStats/`) or `memory_allocated`/`memory_reserved` (not `max_memory_allocated` nor a
//   `peak_` column: the first column that is no maximum): each row with a value is a step of
//   device 0, whole or float numbers of bytes, an empty cell missing;
// - the driver's view beside them: in a line naming `nvidia-smi`, the first number after `memory`
//   is the used memory of the GPU the line names (`nvidia-smi GPU-0 memory (MB) 2796`), MiB unless
//   it says otherwise; percentages are passed over (`memory 45% (35000 MiB)`), a figure whose words
//   say `total` or `free` is not it, and one whose words say `used` is taken before any other
//   (`memory.total 81559 MiB memory.used 35000 MiB`); the line's other values are read too.
// Peaks and maxima (`max allocated`, `alloc peak`, `max_memory_reserved`) are not read. MB, GB and
// KB are binary, as PyTorch and nvidia-smi print them (`G`, `M`, `K` alone too); numbers may have
// thousands separators and an exponent. A value without a unit is bytes when it is a whole number
// of at least 1024 and the line names no unit, in brackets or on its other values ("allocated:
// 2048 MB reserved: 4096" is 4096 MB: a unit every other value of the line carries is the line's);
// a smaller one is a count ("allocated 4 workers")
// and a fraction without one (MB or GB left unsaid) is left out and reported (`skipped`), as is a
// number written with a decimal comma ("1234,5 MB", which would otherwise read as 1234 bytes).
//
// A step whose allocated memory is above its reserved memory (which holds it) read one of them
// wrong: neither is kept, and it is reported (`skipped`) with its line.
//
// Only the first 64 KiB of a line are looked at (a metrics CSV's rows are read whole; a printed
// memory_stats() dict is about 5 KiB); a line cut there that names a key after the cut is reported
// (`skipped`). Device numbers have at most six digits.
// Steps: a device's step ends when one of its values comes again. A value's device is the one its
// call names, else the last `cuda:N`, `GPU N`, `[rankN]`, `rank N |` (or `:`), `[rank: N]`,
// `rank=N`, `local_rank=N`, `global_rank: N`, `rank N of M`, `[rank N/M]` or `Device N:` before it
// in the line (torchrun prefixes each rank's lines with `[rankN]:`; ranks are series, as devices
// are), else the summary table's (`device ID N`), else device 0.
// Lines with none of these, and lines starting with '#', are skipped.
// Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sample.h"
#include "core/status.h"

namespace vw::trace {

struct FrameworkLog {
  std::vector<FrameworkStep> steps;  // in the order their first values appear
  size_t lines = 0;                  // lines in the file
  size_t lines_read = 0;             // lines that gave at least one value
  // Values left out: fractions with no unit, numbers with a decimal comma ("1234,5 MB"), and
  // (lenient) lines with a bad value; the first ten
  // as "train.log:2: 'allocated: 20.4' has no unit ...".
  size_t skipped = 0;
  std::vector<std::string> skipped_examples;
};

// Whether the first lines (`head`) look like a framework memory log: some line among the first 200
// gives an allocated or reserved value (or one that cannot be read: no unit, a decimal comma, a bad
// number), or is a memory_summary() table's title.
bool LooksLikeFrameworkLog(std::string_view head);

// Whether a file whose first bytes are `head` (`complete`: the whole file) is read as a framework
// memory log when no format is given: no trace format of trace_reader.h reads it, and
// LooksLikeFrameworkLog says yes. A trace file is never taken for one.
bool IsFrameworkLogHead(std::string_view head, bool complete);

// Reads a whole log. Errors name `display` and the line ("train.log:12: 'allocated: -5 MiB' is not
// a memory size (negative)"); `lenient` skips such lines instead (counted in `skipped`). A log
// that gives no allocated or reserved value is an error too.
Result<FrameworkLog> ParseFrameworkLog(std::string_view text, const std::string& display, bool lenient = false);

}  // namespace vw::trace
