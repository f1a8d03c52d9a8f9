#include "detection/quantile.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace vw::detection {

namespace {

// For a low quantile of many values (the bucket floors: the 10 % quantile of 60 to a few thousand
// samples): the order statistics lo and lo + 1 (`need` = how many of the smallest values matter)
// are found among the values at or below a bound taken from a strided sample, which holds only a
// fraction of the input. Exact: when at least `need` values are at or below the bound, they
// include the `need` smallest. Returns false (nothing computed) when the bound was too low.
bool LowQuantileByBound(std::span<const double> values, size_t lo, size_t need, double frac, double* out) {
  constexpr size_t kStride = 8;
  thread_local std::vector<double> sample, buf;  // buf only grows: resizing it again would clear it
  sample.clear();
  for (size_t i = 0; i < values.size(); i += kStride) sample.push_back(values[i]);
  // The sample's order statistic at twice the wanted rank: usually a bound with about twice
  // `need` values below it.
  const size_t rank = std::min(sample.size() - 1, 2 * need / kStride + 1);
  SelectNth(sample.data(), sample.size(), rank);
  const double bound = sample[rank];
  if (buf.size() < values.size()) buf.resize(values.size());
  size_t m = 0;
  for (const double v : values) {  // branch-free: every value is written, those above the bound overwritten
    buf[m] = v;
    m += v <= bound ? 1 : 0;
  }
  if (m < need) return false;
  const auto lo_it = buf.begin() + static_cast<std::ptrdiff_t>(lo);
  const auto end = buf.begin() + static_cast<std::ptrdiff_t>(m);
  SelectNth(buf.data(), m, lo);
  const double lo_value = *lo_it;
  if (need == lo + 1) {
    *out = lo_value;
    return true;
  }
  const double hi_value = *std::min_element(lo_it + 1, end);
  *out = lo_value + frac * (hi_value - lo_value);
  return true;
}

// The same for a low quantile that needs at most kMaxKept of the smallest values (a bucket floor of
// 60 samples needs 7): one pass keeps the `need` smallest in ascending order in a short array,
// inserting the few values below the largest kept. Exact: the kept values are the order statistics
// 0 .. need - 1. Leaves `values` as it was.
constexpr size_t kMaxKept = 16;
double LowQuantileByInsertion(std::span<const double> values, size_t lo, size_t need, double frac) {
  double kept[kMaxKept];
  size_t k = 0;
  for (const double v : values) {
    size_t j;
    if (k < need) {
      j = k++;
    } else if (v < kept[need - 1]) {
      j = need - 1;
    } else {
      continue;
    }
    while (j > 0 && kept[j - 1] > v) {
      kept[j] = kept[j - 1];
      --j;
    }
    kept[j] = v;
  }
  const double lo_value = kept[lo];
  if (need == lo + 1) return lo_value;
  return lo_value + frac * (kept[lo + 1] - lo_value);
}

// Selects the order statistics at `ranks` − `offset` (ascending, each in [offset, offset + n)) of
// a[0..n) in place: each lands at its own index, with no greater value before it and no smaller one
// after it. The middle wanted rank first, then those left of it in the part before and those right
// of it in the part after, so each later selection works on a shorter range.
// An end of the range (the wanted rank just below or above one selected before it, as for the
// median of an even count) is found by one scan for the least or greatest value.
void SelectInPlace(double* a, size_t n, std::span<const size_t> ranks, size_t offset) {
  if (ranks.empty()) return;
  const size_t mid = ranks.size() / 2, k = ranks[mid] - offset;
  if (k == 0) {
    std::iter_swap(a, std::min_element(a, a + n));
  } else if (k + 1 == n) {
    std::iter_swap(a + k, std::max_element(a, a + n));
  } else {
    SelectNth(a, n, k);
  }
  size_t left_end = mid;
  while (left_end > 0 && ranks[left_end - 1] == ranks[mid]) --left_end;
  SelectInPlace(a, k, ranks.first(left_end), offset);
  size_t right_begin = mid + 1;
  while (right_begin < ranks.size() && ranks[right_begin] == ranks[mid]) ++right_begin;
  SelectInPlace(a + k + 1, n - k - 1, ranks.subspan(right_begin), offset + k + 1);
}

}  // namespace

void SelectNth(double* a, size_t n, size_t k) {
  size_t lo = 0, hi = n;  // the k-th smallest lies in a[lo, hi); all before lo <= all in it <= all after hi
  for (int rounds = 0; hi - lo > 16 && rounds < 48; ++rounds) {
    const double x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi - 1];
    const double pivot = std::max(std::min(x, y), std::min(std::max(x, y), z));
    size_t store = lo;
    for (size_t i = lo; i < hi; ++i) {  // a[lo, store) < pivot <= a[store, i)
      const double v = a[i];
      a[i] = a[store];
      a[store] = v;
      store += v < pivot ? 1 : 0;
    }
    if (store == lo) {  // the pivot is the minimum: the values equal to it to the front
      for (size_t i = lo; i < hi; ++i) {
        const double v = a[i];
        a[i] = a[store];
        a[store] = v;
        store += v <= pivot ? 1 : 0;
      }
      if (k < store) return;  // a[lo, store) all equal the pivot, k among them
    }
    if (k < store) {
      hi = store;
    } else {
      lo = store;
    }
  }
  std::nth_element(a + lo, a + k, a + hi);
}

void SelectRanks(std::span<double> values, std::span<const size_t> ranks, std::span<double> out) {
  const size_t n = values.size();
  if (ranks.empty()) return;
  constexpr size_t kSample = 256;
  if (n >= 4 * kSample) {
    // Bounds from a strided sample: each wanted rank r sits near sample position r·m/n (in order), give
    // or take about √m/2 (a binomial count); 1.5·√m either side misses rarely. Only the values
    // between the bounds are selected among, once the values below are counted. Exact: when the
    // count below is at most the smallest rank and the values kept reach past the largest, the
    // ranks' values are among those kept, shifted by the count below.
    thread_local std::vector<double> sample, buf;  // buf only grows: resizing it again would clear it
    const size_t stride = n / kSample;
    sample.clear();
    for (size_t i = stride / 2; i < n && sample.size() < kSample; i += stride) sample.push_back(values[i]);
    const size_t m = sample.size(), slack = 24;
    const size_t p_lo = ranks.front() * m / n, p_hi = ranks.back() * m / n;
    // The two sample values at the bounds' places (as a sort of the sample would give them).
    double low = -INFINITY, high = INFINITY;
    if (p_hi + slack < m) {
      std::nth_element(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(p_hi + slack), sample.end());
      high = sample[p_hi + slack];
    }
    if (p_lo >= slack) {
      const auto end = sample.begin() + static_cast<std::ptrdiff_t>(p_hi + slack < m ? p_hi + slack : m);
      std::nth_element(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(p_lo - slack), end);
      low = sample[p_lo - slack];
    }
    if (buf.size() < n) buf.resize(n);
    size_t kept = 0, below = 0;
    for (const double v : values) {  // branch-free: every value written, those outside overwritten
      buf[kept] = v;
      kept += (v >= low) & (v <= high) ? 1 : 0;
      below += v < low ? 1 : 0;
    }
    if (below <= ranks.front() && below + kept > ranks.back()) {
      SelectInPlace(buf.data(), kept, ranks, below);
      for (size_t i = 0; i < ranks.size(); ++i) out[i] = buf[ranks[i] - below];
      return;
    }
  }
  SelectInPlace(values.data(), n, ranks, 0);
  for (size_t i = 0; i < ranks.size(); ++i) out[i] = values[ranks[i]];
}

std::optional<double> Quantile(std::span<double> values, double q) {
  if (values.empty() || !(q >= 0 && q <= 1)) return std::nullopt;
  const double h = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(h));
  {
    const double frac = h - static_cast<double>(lo);
    const size_t need = frac == 0 || lo + 1 >= values.size() ? lo + 1 : lo + 2;
    if (need <= kMaxKept && need * 4 <= values.size()) return LowQuantileByInsertion(values, lo, need, frac);
    double low = 0;
    if (values.size() >= 64 && need * 4 <= values.size() && LowQuantileByBound(values, lo, need, frac, &low)) {
      return low;
    }
  }
  const double frac = h - static_cast<double>(lo);
  const bool one = frac == 0 || lo + 1 >= values.size();
  const size_t ranks[2] = {lo, lo + 1};
  double at[2];
  SelectRanks(values, std::span<const size_t>(ranks, one ? 1 : 2), at);
  if (one) return at[0];
  return at[0] + frac * (at[1] - at[0]);
}

std::optional<double> Median(std::span<double> values) {
  return Quantile(values, 0.5);
}

}  // namespace vw::detection
