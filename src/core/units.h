// Units: parsing and formatting of durations and sizes as users type and read them.
//
// Internally every duration is seconds (double) and every size is bytes (uint64_t or double).
// Users type durations like "30s", "5m", "2h", "1h30m", "100ms", "1d" and sizes like "512MiB",
// "80GiB", "1.5GB", "4096" (bytes). Humans read "9h 12m", "1.2 GiB", "512 MiB/h".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "core/status.h"

namespace vw {

inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * kMiB;
inline constexpr double kSecondsPerHour = 3600.0;

// The longest duration any flag accepts: 100 years (36525 days) in seconds. Longer ones ("110000d",
// "99999999999999999999d") would overflow the nanosecond and millisecond clocks they end up in.
inline constexpr double kMaxDurationSeconds = 36525.0 * 86400.0;

// "30s" -> 30.0; a bare number is seconds. Rejects negatives, empty input, unknown units, and
// anything longer than kMaxDurationSeconds ("bad duration '...': too large").
Result<double> ParseDuration(std::string_view text);

// How a size's kB, MB, GB and TB are read: decimal (a disk or file size), or, for GPU memory, as
// nvidia-smi and PyTorch write them, binary (MB = MiB), as every trace vramwatch reads means them.
enum class SizeUnits { kDecimal, kGpuMemory };

// "80GiB" -> 85899345920; binary (KiB, MiB, GiB, TiB) and kB, MB, GB, TB units (decimal, or binary
// under kGpuMemory); bare = bytes, except under kGpuMemory, where a bare number other than 0 is an
// error (nvidia-smi writes MiB: "256" is ambiguous).
Result<uint64_t> ParseSize(std::string_view text, SizeUnits units = SizeUnits::kDecimal);

// 33120 -> "9h 12m"; 59 -> "59s"; 90000 -> "1d 1h". Negative -> "-" prefix.
std::string FormatDuration(double seconds);

// A duration as a flag is written, in whole seconds and in hours at most: 600 -> "10m", 5400 ->
// "1h30m", 90 -> "1m30s", 86400 -> "24h", 0 -> "0s"; ParseDuration reads it back. For a default
// shown in --help.
std::string FormatDurationFlag(double seconds);

// The two ends of a range of durations, each as FormatDuration writes it, or, when those read the
// same (a tight range of days: "4d 20h" and "4d 20h"), both one unit finer ("4d 20h 16m" and
// "4d 20h 49m"; "20h 19m 30s"), the last unit cut as FormatDuration cuts it: a range must not
// print as one value twice. Infinite -> "never".
std::pair<std::string, std::string> FormatDurationRange(double lo_seconds, double hi_seconds);

// 1288490188 -> "1.2 GiB"; 536870912 -> "512 MiB"; under 1 MiB -> "123 KiB" or "12 B".
std::string FormatBytes(double bytes);

// Bytes per second -> "512 MiB/h" (or "1.2 GiB/h").
std::string FormatRate(double bytes_per_second);

}  // namespace vw
