// The 16-bit conversions (util/half_precision.hpp) against the CPU's own conversion instructions (F16C for binary16,
// AVX-512 BF16 for bfloat16; skipped on CPUs without them) and against the formats' definitions (every 16-bit
// pattern to float32 by ldexp), over every rounding boundary of every exponent and a stride through all float32
// patterns; then the same conversions in a kernel of the default execution space against the host's.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "dpointnet/util/half_precision.hpp"
#include "dpointnet/util/host_simd.hpp"

using namespace dpointnet;

namespace {

float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
bool is_nan16(std::uint16_t h, int exp_bits) {
  const int mant_bits = 15 - exp_bits;
  const std::uint16_t exp_mask = static_cast<std::uint16_t>(((1u << exp_bits) - 1u) << mant_bits);
  return (h & exp_mask) == exp_mask && (h & ((1u << mant_bits) - 1u)) != 0;
}

// The inputs: for every sign and upper bit pattern above the dropped bits (16 for bfloat16, 13 for binary16 at
// the normal exponents), the dropped bits at 0, just under half, half (a tie), just over half and all ones; then
// every 1009th float32 pattern (a prime stride: every low-bit pattern occurs).
std::vector<std::uint32_t> inputs(int dropped) {
  std::vector<std::uint32_t> v;
  const std::uint32_t half = 1u << (dropped - 1), all = (1u << dropped) - 1u;
  for (std::uint64_t hi = 0; hi < (1ull << (32 - dropped)); ++hi)
    for (std::uint32_t lo : {0u, half - 1u, half, half + 1u, all})
      v.push_back(static_cast<std::uint32_t>(hi << dropped) | lo);
  for (std::uint64_t u = 0; u < (1ull << 32); u += 1009) v.push_back(static_cast<std::uint32_t>(u));
  return v;
}

#if defined(__x86_64__)
__attribute__((target("f16c"))) std::uint16_t f16c_convert(float f) {
  return static_cast<std::uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
__attribute__((target("f16c"))) float f16c_widen(std::uint16_t h) { return _cvtsh_ss(h); }
__attribute__((target("avx512bf16,avx512f,avx512vl"))) std::uint16_t bf16_convert(float f) {
  const __m128bh r = _mm_cvtneps_pbh(_mm_set1_ps(f));
  std::uint16_t out[8];
  std::memcpy(out, &r, sizeof out);
  return out[0];
}
#endif

}  // namespace

TEST(HalfPrecision, Float16IsWhatF16cGives) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "this CPU has no F16C";
  std::int64_t checked = 0, wrong = 0;
  for (std::uint32_t u : inputs(13)) {
    const float f = float_of(u);
    const std::uint16_t ours = to_float16(f).bits, cpu = f16c_convert(f);
    const bool ok = std::isnan(f) ? is_nan16(ours, 5) && (ours & 0x8000u) == (cpu & 0x8000u) : ours == cpu;
    if (!ok && wrong++ < 5)
      ADD_FAILURE() << std::hex << "float bits 0x" << u << ": ours 0x" << ours << ", F16C 0x" << cpu;
    ++checked;
  }
  EXPECT_EQ(wrong, 0) << "of " << checked;
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float ours = to_float(float16{static_cast<std::uint16_t>(h)}),
                cpu = f16c_widen(static_cast<std::uint16_t>(h));
    if (std::isnan(cpu))
      EXPECT_TRUE(std::isnan(ours)) << h;
    else
      EXPECT_EQ(std::memcmp(&ours, &cpu, sizeof ours), 0) << std::hex << "binary16 0x" << h;
  }
#else
  GTEST_SKIP() << "not an x86-64 CPU";
#endif
}

TEST(HalfPrecision, BFloat16IsWhatAvx512Bf16Gives) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx512bf16")) GTEST_SKIP() << "this CPU has no AVX-512 BF16";
  std::int64_t checked = 0, wrong = 0;
  for (std::uint32_t u : inputs(16)) {
    const float f = float_of(u);
    const std::uint16_t ours = to_bfloat16(f).bits;
    if (std::fpclassify(f) == FP_SUBNORMAL) {
      // the instruction flushes subnormal inputs to zero; ours keeps them: the exact value, rounded (checked by
      // widening: the nearest of the two neighbours, ties to an even last bit)
      const float lo = float_of(u & 0xffff0000u), hi = float_of((u & 0xffff0000u) + 0x10000u);
      const float got = to_float(bfloat16{ours});
      const float dlo = std::fabs(f - lo), dhi = std::fabs(hi - f);
      const float want = dlo < dhi ? lo : dhi < dlo ? hi : (((u >> 16) & 1u) ? hi : lo);
      if (std::memcmp(&got, &want, sizeof got) != 0 && wrong++ < 5) ADD_FAILURE() << std::hex << "subnormal 0x" << u;
      ++checked;
      continue;
    }
    const std::uint16_t cpu = bf16_convert(f);
    const bool ok = std::isnan(f) ? is_nan16(ours, 8) && (ours & 0x8000u) == (cpu & 0x8000u) : ours == cpu;
    if (!ok && wrong++ < 5)
      ADD_FAILURE() << std::hex << "float bits 0x" << u << ": ours 0x" << ours << ", BF16 0x" << cpu;
    ++checked;
  }
  EXPECT_EQ(wrong, 0) << "of " << checked;
#else
  GTEST_SKIP() << "not an x86-64 CPU";
#endif
}

TEST(HalfPrecision, EveryPatternWidensToItsValue) {
  // value = (-1)^s x 2^(e - bias) x 1.m (normal) or 2^(1 - bias) x 0.m (subnormal), by ldexp in double
  auto value = [](std::uint32_t h, int exp_bits) {
    const int mant_bits = 15 - exp_bits, bias = (1 << (exp_bits - 1)) - 1;
    const std::uint32_t e = (h >> mant_bits) & ((1u << exp_bits) - 1u), m = h & ((1u << mant_bits) - 1u);
    const double sign = (h & 0x8000u) ? -1.0 : 1.0;
    if (e == (1u << exp_bits) - 1u) return m ? std::nan("") : sign * INFINITY;
    if (e == 0) return sign * std::ldexp(static_cast<double>(m), 1 - bias - mant_bits);
    return sign * std::ldexp(static_cast<double>(m | (1u << mant_bits)), static_cast<int>(e) - bias - mant_bits);
  };
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const auto h16 = static_cast<std::uint16_t>(h);
    const double bf = value(h, 8), fp = value(h, 5);
    const float gb = to_float(bfloat16{h16}), gf = to_float(float16{h16});
    if (std::isnan(bf)) {
      EXPECT_TRUE(std::isnan(gb)) << h;
    } else {
      EXPECT_EQ(static_cast<double>(gb), bf) << std::hex << "bfloat16 0x" << h;
      EXPECT_EQ(std::signbit(gb), std::signbit(bf)) << h;
      EXPECT_EQ(to_bfloat16(gb).bits, h16) << std::hex << "bfloat16 0x" << h << " does not round-trip";
    }
    if (std::isnan(fp)) {
      EXPECT_TRUE(std::isnan(gf)) << h;
    } else {
      EXPECT_EQ(static_cast<double>(gf), fp) << std::hex << "binary16 0x" << h;
      EXPECT_EQ(std::signbit(gf), std::signbit(fp)) << h;
      EXPECT_EQ(to_float16(gf).bits, h16) << std::hex << "binary16 0x" << h << " does not round-trip";
    }
  }
  // the edges of binary16's range: 65504 is the largest finite value, from 65520 on infinity; 2^-25 is a tie
  // between 0 and the smallest subnormal (to even: 0), just above it rounds up
  EXPECT_EQ(to_float16(65519.99f).bits, 0x7bffu);
  EXPECT_EQ(to_float16(65520.0f).bits, 0x7c00u);
  EXPECT_EQ(to_float16(-1e30f).bits, 0xfc00u);
  EXPECT_EQ(to_float16(std::ldexp(1.0f, -25)).bits, 0x0000u);
  EXPECT_EQ(to_float16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)).bits, 0x0001u);
  EXPECT_EQ(to_bfloat16(3.4e38f).bits, 0x7f80u);  // rounds past the largest finite bfloat16 (3.3895e38)
}

// Both conversions of each input and the sum of their widened values, packed, by a kernel of `Space`.
template <class Space>
Kokkos::View<std::uint32_t*, Kokkos::HostSpace> convert_in_kernel(
    const Kokkos::View<std::uint32_t*, Kokkos::HostSpace>& h_in) {
  auto in = Kokkos::create_mirror_view_and_copy(typename Space::memory_space(), h_in);
  Kokkos::View<std::uint32_t*, typename Space::memory_space> out("half.out", h_in.extent(0));
  Kokkos::parallel_for(
      "test::half_convert", Kokkos::RangePolicy<Space>(0, h_in.extent(0)), KOKKOS_LAMBDA(const std::size_t i) {
        const float f = half_detail::float_of(in(i));
        const float16 a = to_float16(f);
        const bfloat16 b = to_bfloat16(f);
        out(i) = (static_cast<std::uint32_t>(a.bits) << 16 | b.bits) ^ half_detail::bits_of(to_float(a) + to_float(b));
      });
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
}

TEST(HalfPrecision, KernelsConvertAsTheHostDoes) {
  const std::vector<std::uint32_t> in = inputs(16);
  const auto n = static_cast<std::int64_t>(in.size()) / 7;  // a seventh: every rounding case occurs in it
  Kokkos::View<std::uint32_t*, Kokkos::HostSpace> h_in("half.in", n);
  for (std::int64_t i = 0; i < n; ++i) h_in(i) = in[static_cast<std::size_t>(i * 7)];
  const auto h_out = convert_in_kernel<Kokkos::DefaultExecutionSpace>(h_in);
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const float f = float_of(h_in(i));
    const float16 a = to_float16(f);
    const bfloat16 b = to_bfloat16(f);
    const float back = to_float(a) + to_float(b);
    std::uint32_t bb;
    std::memcpy(&bb, &back, sizeof bb);
    wrong += h_out(i) != ((static_cast<std::uint32_t>(a.bits) << 16 | b.bits) ^ bb);
  }
  EXPECT_EQ(wrong, 0) << "of " << n;
}

// The host spike adjoint's register sums over 16-bit rows (compat::HostLanes<float, N>::add_product with bfloat16
// or float16 values, N = 1..16: widened in registers, float16 by vcvtph2ps) against scalar arithmetic on the widened
// values, a product then a sum, each rounded: bitwise. A NaN after the N-th value is a guard against reading past the
// lanes; the value after the N-th sum against writing past them. float16 rows include subnormals.
template <class Half, int N>
void check_half_lanes() {
  std::mt19937 gen(17 + N);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  constexpr float kGuard = 12345.0f;
  float acc[N + 1], ref[N], out[N + 1];
  for (int q = 0; q < N; ++q) ref[q] = acc[q] = u(gen);
  acc[N] = out[N] = kGuard;
  compat::HostLanes<float, N> r;
  r.load(acc);
  for (int k = 0; k < 29; ++k) {
    Half x[N + 1];
    x[N] = narrow<Half>(std::numeric_limits<float>::quiet_NaN());
    const float w = u(gen);
    for (int q = 0; q < N; ++q) {
      x[q] = narrow<Half>(k % 3 == 0 ? u(gen) * 1e-6f : u(gen));
      const float prod = w * to_float(x[q]);
      ref[q] = ref[q] + prod;
    }
    r.add_product(w, x);
  }
  r.store(out);
  for (int q = 0; q < N; ++q) EXPECT_EQ(out[q], ref[q]) << N << " lanes, lane " << q;
  EXPECT_EQ(out[N], kGuard) << N << " lanes: stored past the last lane";
}
template <class Half, int... N>
void check_all_half_lanes(std::integer_sequence<int, N...>) {
  (check_half_lanes<Half, N + 1>(), ...);
}
TEST(HalfPrecision, HostLanesAddBFloat16RowsLaneByLane) {
  check_all_half_lanes<bfloat16>(std::make_integer_sequence<int, 16>{});
}
TEST(HalfPrecision, HostLanesAddFloat16RowsLaneByLane) {
  check_all_half_lanes<float16>(std::make_integer_sequence<int, 16>{});
}
