// Quantiles of a small sample, as the bucket floors and the trend summaries use them.
//
// Quantile() uses linear interpolation between order statistics (Hyndman–Fan type 7, the default
// of numpy.quantile and R's quantile()). Median() is the usual one (mean of the two middle values
// for an even count). Both run in expected O(n) (selection, no full sort) and may reorder
// `values`; a low quantile of 64 or more values (the bucket floors) selects among the values below
// a bound taken from a sample instead (a per-thread scratch buffer; the same result). Pure
// functions, thread-safe on distinct inputs.
#pragma once

#include <optional>
#include <span>

namespace vw::detection {

// q in [0, 1]; nullopt for an empty input or q outside [0, 1].
std::optional<double> Quantile(std::span<double> values, double q);

// nullopt for an empty input.
std::optional<double> Median(std::span<double> values);

}  // namespace vw::detection
