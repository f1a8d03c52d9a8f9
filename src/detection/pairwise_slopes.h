// Order statistics of the pairwise slopes (y_j − y_i) / (x_j − x_i) over the pairs with x_j > x_i:
// Sen's slope and its interval, the Hamed–Rao detrending's slope, the rate fit's quick slopes.
//
// Up to kMaterializedPairs pairs the slopes are written out and selected among (SelectRanks);
// beyond that no more than O(n) of them are ever held: each wanted rank is bracketed between
// values drawn from reservoir samples of the slopes, the bracket narrowed pass after pass (each
// pass recomputes every slope, O(n²) time, and counts those below each bound) until it holds few
// enough to collect. Both give exactly the values a sort of all slopes would, ties included.
//
// Units: whatever x and y carry. Pure functions, thread-safe; the sampling is seeded, so the cost
// (never the result) is the same on every call.
#pragma once

#include <cstddef>
#include <span>

namespace vw::detection {

// Pairwise slopes up to this many are materialised (8 bytes each).
inline constexpr size_t kMaterializedPairs = size_t{1} << 16;

// How many pairs have x_j > x_i (n(n−1)/2 less the pairs with equal x). O(n log n), O(n) memory.
size_t SlopePairCount(std::span<const double> x);

// Writes the slopes at `ranks` (from 0, ascending, repeats allowed, each < SlopePairCount(x)) to
// out[0 .. ranks.size()). x and y of equal length, finite. `max_held` (0: kMaterializedPairs) is
// the most slopes held at once; tests lower it to exercise the bracketing path on small inputs.
void PairwiseSlopeRanks(std::span<const double> x, std::span<const double> y, std::span<const size_t> ranks,
                        std::span<double> out, size_t max_held = 0);

// The median of the pairwise slopes (the mean of the two middle ones for an even count); 0 when no
// pair has x_j > x_i.
double MedianPairwiseSlope(std::span<const double> x, std::span<const double> y);

}  // namespace vw::detection
