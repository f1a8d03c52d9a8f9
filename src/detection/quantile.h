// Quantiles of a small sample, as the bucket floors and the trend summaries use them.
//
// Quantile() uses linear interpolation between order statistics (Hyndman–Fan type 7, the default
// of numpy.quantile and R's quantile()). Median() is the usual one (mean of the two middle values
// for an even count). Both run in expected O(n) (selection, no full sort) and may reorder
// `values`; a low quantile that needs at most 16 of the smallest values (the floor of a bucket of up
// to about 160 samples) keeps them in a short sorted array in one pass, and a lower quantile of 64
// or more values otherwise selects among the values below a bound taken from a sample (a
// per-thread scratch buffer); both give the same result and leave `values` as it was. Any other
// quantile goes through SelectRanks(). Values must not be NaN. Pure functions, thread-safe on
// distinct inputs.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace vw::detection {

// Puts the k-th smallest (from 0) of a[0..n) at a[k], with no greater value before it and no smaller
// one after it, as std::nth_element(a, a + k, a + n) does, but with a partition that has no
// data-dependent branch (a swap and an add per value; nth_element mispredicts about every other
// comparison on noisy data). Quickselect with a median-of-three pivot; a pivot that is the range's
// minimum partitions by "equal to it" instead, and small or stubborn ranges are finished by
// std::nth_element. Requires k < n and no NaN.
void SelectNth(double* a, size_t n, size_t k);

// Writes the order statistics at `ranks` (from 0, ascending, repeats allowed, each < values.size())
// to out[0 .. ranks.size()), as sorting `values` and reading them would, exactly. May reorder
// `values`. Expected O(n): 1024 or more values are first narrowed to those between two bounds taken
// from a sample of 256 (one value of each of 256 equal strata, at SampleOffset() within it; per-thread
// scratch buffers), which for ranks close together (a median, a Theil–Sen interval) is about a fifth
// of them; those are counted into 256 buckets of equal width between the bounds, and only the
// buckets holding a wanted rank are selected among. A sample that misleads costs one more pass.
void SelectRanks(std::span<double> values, std::span<const size_t> ranks, std::span<double> out);

// Which value of the k-th stratum (from 0) of `stride` values SelectRanks()'s sample reads: a fixed
// pseudo-random offset in [0, stride), the same on every call (exposed for tests). stride > 0.
size_t SampleOffset(size_t k, size_t stride);

// q in [0, 1]; nullopt for an empty input or q outside [0, 1].
std::optional<double> Quantile(std::span<double> values, double q);

// nullopt for an empty input.
std::optional<double> Median(std::span<double> values);

// Median() of values already in ascending order (non-empty), read without a selection: the same
// number to the last bit.
double MedianOfSorted(std::span<const double> sorted);

}  // namespace vw::detection
