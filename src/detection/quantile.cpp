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
  thread_local std::vector<double> buf;
  buf.clear();
  for (size_t i = 0; i < values.size(); i += kStride) buf.push_back(values[i]);
  // The sample's order statistic at twice the wanted rank: usually a bound with about twice
  // `need` values below it.
  const size_t rank = std::min(buf.size() - 1, 2 * need / kStride + 1);
  SelectNth(buf.data(), buf.size(), rank);
  const double bound = buf[rank];
  buf.resize(values.size());
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
  auto lo_it = values.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(values.begin(), lo_it, values.end());
  const double lo_value = *lo_it;
  const double frac = h - static_cast<double>(lo);
  if (frac == 0 || lo + 1 >= values.size()) return lo_value;
  // The next order statistic is the smallest value above position lo.
  const double hi_value = *std::min_element(lo_it + 1, values.end());
  return lo_value + frac * (hi_value - lo_value);
}

std::optional<double> Median(std::span<double> values) {
  return Quantile(values, 0.5);
}

}  // namespace vw::detection
