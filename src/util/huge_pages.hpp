// Transparent huge pages for large host buffers that the set-up writes in random order (the grouped edges): asked
// for before the first touch, 2 MiB pages cut the page faults and the TLB misses of a scatter over hundreds of MB by
// 512x. A hint only: where the kernel has THP off (or "never"), or off Linux, nothing changes, and the contents are
// the same either way.
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace dpointnet {

// The 2 MiB-aligned part of [p, p + bytes) as MADV_HUGEPAGE (when it holds at least one huge page).
inline void advise_huge_pages(const void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t(1) << 21;
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1), last = (begin + bytes) & ~(kHuge - 1);
  if (p != nullptr && last > first) (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace dpointnet
