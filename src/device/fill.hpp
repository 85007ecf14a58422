// Fills and copies of contiguous device memory as kernels of dpointnet's own on an execution-space instance: no
// fence, no host round trip, and inside the time loop no deep copy (a Kokkos::deep_copy without an instance fences
// the device; with one it is asynchronous but still a deep copy, and its fills are Kokkos-internal kernels).
#pragma once
#include <Kokkos_Core.hpp>
#include <cstddef>

namespace dpointnet::device {

template <class T, class ExecSpace>
struct FillFunctor {
  Kokkos::View<T*, typename ExecSpace::memory_space, Kokkos::MemoryUnmanaged> dst;
  T value;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const { dst(k) = value; }
};

template <class T, class ExecSpace>
struct ScaleFunctor {
  Kokkos::View<T*, typename ExecSpace::memory_space, Kokkos::MemoryUnmanaged> dst;
  T factor;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const { dst(k) *= factor; }
};

template <class T, class ExecSpace>
struct CopyFunctor {
  Kokkos::View<T*, typename ExecSpace::memory_space, Kokkos::MemoryUnmanaged> dst;
  Kokkos::View<const T*, typename ExecSpace::memory_space, Kokkos::MemoryUnmanaged> src;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const { dst(k) = src(k); }
};

// n elements from `ptr` (device memory of the space) set to `value`.
template <class ExecSpace, class T>
void fill(const ExecSpace& space, T* ptr, std::size_t n, T value) {
  if (n == 0) return;
  using V = Kokkos::View<T*, typename ExecSpace::memory_space, Kokkos::MemoryUnmanaged>;
  Kokkos::parallel_for("dpointnet::fill", Kokkos::RangePolicy<ExecSpace>(space, 0, static_cast<std::int64_t>(n)),
                       FillFunctor<T, ExecSpace>{V(ptr, n), value});
}

// All of a contiguous view set to `value`.
template <class ExecSpace, class View>
void fill(const ExecSpace& space, const View& v, typename View::non_const_value_type value) {
  fill(space, v.data(), v.span(), value);
}

// All of a contiguous view multiplied by `factor`.
template <class ExecSpace, class View>
void scale(const ExecSpace& space, const View& v, typename View::non_const_value_type factor) {
  using T = typename View::non_const_value_type;
  if (v.span() == 0) return;
  using V = Kokkos::View<T*, typename ExecSpace::memory_space, Kokkos::MemoryUnmanaged>;
  Kokkos::parallel_for("dpointnet::scale",
                       Kokkos::RangePolicy<ExecSpace>(space, 0, static_cast<std::int64_t>(v.span())),
                       ScaleFunctor<T, ExecSpace>{V(v.data(), v.span()), factor});
}

// n elements from src to dst (both device memory of the space).
template <class ExecSpace, class T>
void copy(const ExecSpace& space, T* dst, const T* src, std::size_t n) {
  if (n == 0) return;
  using D = Kokkos::View<T*, typename ExecSpace::memory_space, Kokkos::MemoryUnmanaged>;
  using S = Kokkos::View<const T*, typename ExecSpace::memory_space, Kokkos::MemoryUnmanaged>;
  Kokkos::parallel_for("dpointnet::copy", Kokkos::RangePolicy<ExecSpace>(space, 0, static_cast<std::int64_t>(n)),
                       CopyFunctor<T, ExecSpace>{D(dst, n), S(src, n)});
}

}  // namespace dpointnet::device
