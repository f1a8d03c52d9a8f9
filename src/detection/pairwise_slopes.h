// Order statistics of the pairwise slopes (y_j − y_i) / (x_j − x_i) over the pairs with x_j > x_i:
// Sen's slope and its interval, the Hamed–Rao detrending's slope, the rate fit's quick slopes.
//
// Up to kMaterializedPairs pairs the slopes are written out and selected among (SelectRanks);
// beyond that no more than O(n) of them are ever held: each wanted rank is bracketed between
// values drawn from reservoir samples of the slopes, the bracket narrowed pass after pass (each
// pass recomputes every slope, O(n²) time, and counts those below each bound) until it holds few
// enough to collect. Both give exactly the values a sort of all slopes would, ties included.
//
// Units: whatever x and y carry. The methods are const and may run on several threads at once;
// the sampling is seeded, so the cost (never the result) is the same on every call.
#pragma once

#include <cstddef>
#include <span>

namespace vw::detection {

// Pairwise slopes up to this many are materialised (8 bytes each).
inline constexpr size_t kMaterializedPairs = size_t{1} << 16;

// The pairwise slopes of one series. The constructor checks the order of x and counts the pairs
// once (O(n), O(n log n) when x is not in order); the spans must outlive the object.
class PairwiseSlopes {
 public:
  PairwiseSlopes(std::span<const double> x, std::span<const double> y);

  // How many pairs have x_j > x_i (n(n−1)/2 less the pairs with equal x).
  size_t pairs() const { return pairs_; }

  // Writes the slopes at `ranks` (from 0, ascending, repeats allowed, each < pairs()) to
  // out[0 .. ranks.size()). x and y of equal length, finite. `max_held` (0: kMaterializedPairs) is
  // the most slopes held at once; tests lower it to exercise the bracketing path on small inputs.
  void Ranks(std::span<const size_t> ranks, std::span<double> out, size_t max_held = 0) const;

  // The median slope (interpolated as Median() does, to the last bit); 0 when there is no pair.
  double Median() const;

 private:
  std::span<const double> x_, y_;
  bool ascending_ = true;
  size_t pairs_ = 0;
};

}  // namespace vw::detection
