// Stable ascending order of double values by LSD radix sort: order[k] is the index of the k-th smallest value, tied
// values in index order (as std::stable_sort, and as std::sort of (value, index) pairs). -0.0 sorts as 0.0; values
// must not be NaN. Keys are the values' bits mapped to unsigned integers of the same order: 32 bits (3 passes of
// 11 bits) when every value is a float, else 64 bits (6 passes); a pass whose digit is the same for every value is
// skipped.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dpointnet {

// Reusable buffers of value_order (one per thread).
struct ValueOrderScratch {
  std::vector<std::uint64_t> a32, b32;  // key << 32 | index
  std::vector<std::uint64_t> key64, key64_tmp;
  std::vector<std::uint32_t> idx, idx_tmp;
};

// Fills order with the stable ascending order of values[0, n) (n < 2^32).
void value_order(const double* values, std::size_t n, std::vector<std::uint32_t>& order, ValueOrderScratch& scratch);

}  // namespace dpointnet
