// NewLevel: whether a series (the cycle-free floor of a serving load) has just moved to a level it
// never reached before.
//
// The series is cut into blocks of block_seconds counted back from its last point, and each block
// reduced to its lowest value. Batch-size swings only ever add memory on top of the load's floor,
// so a block's low sits close to that floor whenever the block holds a few swings, and a healthy
// load's lows keep coming back to it. A leak lifts every later low. The test: for some count g of
// recent blocks (min_recent_blocks..max_recent_blocks), the recent lows never fall from one block
// to the next, and the lowest of them stands above the highest low of the (at least
// min_earlier_blocks) blocks before by more than max(min_gap_bytes, margin_sds × the standard
// deviation of those earlier lows). When several g pass, the one with the largest margin is kept.
// A partial oldest block (under half a block of data) and blocks with fewer than
// min_block_points points are left out.
//
// RisingLows: the same block lows over the last 12, 16, 24, 32 and 48 blocks (3 h to 12 h of 15-minute
// blocks): Mann–Kendall (tie- and Hamed–Rao-corrected, never shrinking the variance) at level alpha
// with z > 0, and Sen's slope at least min_rate_bps with the lower end of its interval above zero.
// The longest window that passes is reported. Lows of a healthy serving load are nearly
// independent draws above its floor; a slow leak lifts them all, block after block. A one-off step
// makes the lows strongly autocorrelated around Sen's line, and the Hamed–Rao factor then keeps
// it from being significant.
//
// Units: seconds, bytes, bytes/second. Pure functions, thread-safe. Cost O(n + W²) for W blocks.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "detection/growth_window.h"
#include "detection/mann_kendall.h"
#include "detection/theil_sen.h"

namespace vw::detection {

struct NewLevelOptions {
  double block_seconds = 900;
  size_t min_recent_blocks = 2;
  size_t max_recent_blocks = 4;
  size_t min_earlier_blocks = 8;
  double margin_sds = 3;        // the gap, in standard deviations of the earlier lows
  double min_gap_bytes = 0;     // ... and at least this
  size_t min_block_points = 3;  // blocks with fewer points are left out
};

struct NewLevel {
  std::vector<double> recent_lows_bytes;  // oldest first
  double since_t = 0;                     // start of the oldest recent block (seconds)
  size_t earlier_blocks = 0;
  double earlier_from_t = 0;      // start of the oldest earlier block (seconds)
  double earlier_high_bytes = 0;  // highest earlier low
  double earlier_sd_bytes = 0;    // standard deviation of the earlier lows
  double gap_bytes = 0;           // lowest recent low minus earlier_high_bytes
  double margin_sds = 0;          // gap_bytes / earlier_sd_bytes
};

// Lowest value per block of block_seconds, counted back from the last point: (block start, low),
// oldest first. Blocks with fewer than min_points points, and a first block covering under half a
// block, are left out.
std::vector<FloorPoint> BlockLows(std::span<const FloorPoint> points, double block_seconds, size_t min_points);

// nullopt unless the recent lows stand above every earlier one as described above.
std::optional<NewLevel> FindNewLevel(std::span<const FloorPoint> points, const NewLevelOptions& options);

// RampToNewLevel: the same block lows, for a leak that has been rising for an hour or two. A ramp
// lifts each low a little above the one before, so no recent low stands clear of the highest of all
// the blocks before it (they hold the ramp's start). Instead the series is cut in three: the earlier
// blocks (at least min_earlier_blocks), a ramp of ramp blocks (min_ramp_blocks..max_ramp_blocks,
// the last top_blocks of them the recent ones). It passes when each recent low stands above the
// highest earlier low by more than max(min_gap_bytes, margin_sds × the standard deviation of the
// earlier lows), every ramp low after the first is above that highest earlier low, and the ramp's
// Sen slope is positive. When several ramp lengths pass, the longest is kept (a ramp that starts
// before the growth began holds a low inside the earlier range, which fails).
struct RampOptions {
  double block_seconds = 900;
  size_t min_ramp_blocks = 3;
  size_t max_ramp_blocks = 8;
  size_t top_blocks = 2;
  size_t min_earlier_blocks = 8;
  double margin_sds = 6;
  double min_gap_bytes = 0;
  size_t min_block_points = 3;
};

struct Ramp {
  size_t ramp_blocks = 0;
  double from_t = 0;   // start of the ramp's first block (seconds)
  double above_t = 0;  // start of its second: every low from there on is above the earlier high
  NewLevel level;      // recent_lows_bytes and since_t: the last top_blocks lows and where they begin;
                       // gap and margin over the earlier lows
};

std::optional<Ramp> FindRampToNewLevel(std::span<const FloorPoint> points, const RampOptions& options);

struct RisingLowsOptions {
  double block_seconds = 900;
  std::vector<size_t> window_blocks = {12, 16, 24, 32, 48};
  double alpha = 1e-5;      // two-sided Mann–Kendall level
  double min_rate_bps = 0;  // Sen's slope at least this
  double ci_level = 0.90;
  size_t min_block_points = 3;
};

struct RisingLows {
  size_t blocks = 0;  // lows in the passing window
  double from_t = 0;  // start of its oldest block (seconds)
  double window_seconds = 0;
  MannKendallResult mk;
  TheilSenResult sen;  // bytes/second; intercept at from_t
};

// nullopt unless some window of block lows rises as described above.
std::optional<RisingLows> FindRisingLows(std::span<const FloorPoint> points, const RisingLowsOptions& options);

}  // namespace vw::detection
