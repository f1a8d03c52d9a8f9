// Quantiles of a small sample, as the bucket floors and the trend summaries use them.
//
// Quantile() uses linear interpolation between order statistics (Hyndman–Fan type 7, the default
// of numpy.quantile and R's quantile()). Median() is the usual one (mean of the two middle values
// for an even count). Both run in expected O(n) (selection, no full sort) and may reorder
// `values`; a low quantile that needs at most 16 of the smallest values (the floor of a bucket of up
// to about 160 samples) keeps them in a short sorted array in one pass, and a lower quantile of 64
// or more values otherwise selects among the values below a bound taken from a sample (a
// per-thread scratch buffer); both give the same result and leave `values` as it was. Values must
// not be NaN. Pure functions, thread-safe on distinct inputs.
#pragma once

#include <optional>
#include <span>

namespace vw::detection {

// q in [0, 1]; nullopt for an empty input or q outside [0, 1].
std::optional<double> Quantile(std::span<double> values, double q);

// nullopt for an empty input.
std::optional<double> Median(std::span<double> values);

}  // namespace vw::detection
