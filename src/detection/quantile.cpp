#include "detection/quantile.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>
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

// Selects the order statistics at `ranks` − `offset` (ascending, each in [offset, offset + n)) of
// a[0..n) into out, every value at or above `low` and no further above it than `width` (as v − low
// computes it): the values are counted into kBuckets buckets of equal width, and only the buckets
// that hold a wanted rank are gathered and selected among. Exact: a value's bucket is a
// non-decreasing function of the value, so every value of a lower bucket is at most every value of
// a higher one, and a rank's value is the one at its place within its bucket. Branch-free but for
// the selections within the buckets. Returns false (nothing written to out) when the width gives no
// usable bucket size or the ranks fall in more than kMaxWanted buckets.
bool SelectByBuckets(const double* a, size_t n, double low, double width, std::span<const size_t> ranks, size_t offset,
                     std::span<double> out) {
  constexpr size_t kBuckets = 256, kMaxWanted = 8, kSpare = kMaxWanted;  // kSpare: the slot of no wanted bucket
  const double scale = static_cast<double>(kBuckets) / width;
  if (!std::isfinite(low) || !(scale > 0) || !std::isfinite(scale)) return false;
  thread_local std::vector<unsigned char> bucket;  // both only grow
  thread_local std::vector<double> gathered;
  if (bucket.size() < n) bucket.resize(n);
  size_t count[kBuckets] = {};
  for (size_t i = 0; i < n; ++i) {
    const size_t b = std::min(static_cast<size_t>((a[i] - low) * scale), kBuckets - 1);
    bucket[i] = static_cast<unsigned char>(b);
    ++count[b];
  }
  size_t first[kBuckets + 1];  // first[b]: the rank (less `offset`) of bucket b's least value
  first[0] = 0;
  for (size_t b = 0; b < kBuckets; ++b) first[b + 1] = first[b] + count[b];
  // The wanted buckets in ascending order, each given a part of `gathered`, and after the parts one
  // spare place where every other value is written (and overwritten).
  unsigned char slot[kBuckets];
  std::fill(std::begin(slot), std::end(slot), static_cast<unsigned char>(kSpare));
  size_t wanted[kMaxWanted], pos[kMaxWanted + 1], step[kMaxWanted + 1];
  size_t nw = 0, total = 0;
  for (size_t b = 0; const size_t r : ranks) {
    while (first[b + 1] <= r - offset) ++b;
    if (slot[b] != kSpare) continue;
    if (nw == kMaxWanted) return false;
    slot[b] = static_cast<unsigned char>(nw);
    wanted[nw] = b;
    pos[nw] = total;
    step[nw] = 1;
    total += count[b];
    ++nw;
  }
  pos[kSpare] = total;
  step[kSpare] = 0;
  if (gathered.size() < total + 1) gathered.resize(total + 1);
  double* const g = gathered.data();
  for (size_t i = 0; i < n; ++i) {
    const unsigned char s = slot[bucket[i]];
    g[pos[s]] = a[i];
    pos[s] += step[s];
  }
  for (size_t w = 0, i = 0, part = 0; w < nw; ++w) {
    const size_t b = wanted[w];
    size_t j = i;
    while (j < ranks.size() && ranks[j] - offset < first[b + 1]) ++j;
    SelectInPlace(g + part, count[b], ranks.subspan(i, j - i), offset + first[b]);
    for (size_t k = i; k < j; ++k) out[k] = g[part + ranks[k] - offset - first[b]];
    part += count[b];
    i = j;
  }
  return true;
}

}  // namespace

size_t SampleOffset(size_t k, size_t stride) {
  // splitmix64's finaliser of k: the same offsets on every call and every platform.
  uint64_t z = static_cast<uint64_t>(k) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<size_t>(z % stride);
}

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
    // Bounds from a sample, one value from each of kSample equal strata at an offset that varies
    // from stratum to stratum (a fixed stride can fall in step with a pattern of the input, such as
    // the pairwise slopes of a cycle, row by row, and see only part of it). Each wanted rank r sits
    // near sample position r·m/n (in order), give or take about √m/2 (a binomial count); 1.5·√m
    // either side misses rarely. Only the values between the bounds are selected among, once the
    // values below are counted. Exact: when the count below is at most the smallest rank and the
    // values kept reach past the largest, the ranks' values are among those kept, shifted by the
    // count below.
    thread_local std::vector<double> sample, buf;  // buf only grows: resizing it again would clear it
    const size_t stride = n / kSample;
    sample.clear();
    for (size_t k = 0; k < kSample; ++k) sample.push_back(values[k * stride + SampleOffset(k, stride)]);
    const size_t m = sample.size(), slack = 24;
    const size_t p_lo = ranks.front() * m / n, p_hi = ranks.back() * m / n;
    // The two sample values at the bounds' places (as a sort of the sample would give them).
    double low = -INFINITY, high = INFINITY;
    if (p_hi + slack < m) {
      SelectNth(sample.data(), m, p_hi + slack);
      high = sample[p_hi + slack];
    }
    if (p_lo >= slack) {
      SelectNth(sample.data(), p_hi + slack < m ? p_hi + slack : m, p_lo - slack);
      low = sample[p_lo - slack];
    }
    if (buf.size() < n) buf.resize(n);
    // Kept: 0 <= v − low <= high − low (the differences as computed, +0.0 turning −0 into +0).
    // v − low never decreases as v grows, so every value below, kept or above stands at or below
    // every one of the next group, which is all the selection needs. As bit patterns, the
    // non-negative differences order as their values and the negative ones lie above them all:
    // one integer comparison keeps a value, and the sign bit counts it below.
    const double width = high - low;
    const uint64_t width_bits = std::bit_cast<uint64_t>(width);
    double* const kept_values = buf.data();
    size_t kept = 0, below = 0;
    for (const double v : values) {  // branch-free: every value written, those outside overwritten
      const uint64_t d = std::bit_cast<uint64_t>((v - low) + 0.0);
      kept_values[kept] = v;
      kept += d <= width_bits ? 1 : 0;
      below += d >> 63;
    }
    if (below <= ranks.front() && below + kept > ranks.back()) {
      if (SelectByBuckets(kept_values, kept, low, width, ranks, below, out)) return;
      SelectInPlace(kept_values, kept, ranks, below);
      for (size_t i = 0; i < ranks.size(); ++i) out[i] = kept_values[ranks[i] - below];
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

double MedianOfSorted(std::span<const double> sorted) {
  // As Quantile() at 0.5: h = (n − 1) / 2, and the value at floor(h), or between it and the next.
  const double h = 0.5 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(h));
  const double frac = h - static_cast<double>(lo);
  if (frac == 0 || lo + 1 >= sorted.size()) return sorted[lo];
  return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

}  // namespace vw::detection
