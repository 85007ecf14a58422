// NEST 3.8's clock arithmetic (nestkernel/nest_time.{h,cpp}, libnestutil/numerics.cpp), literally, for
// run.dynamics = "nest" (docs/model-nest.md, "Time grid"): microsecond tics (NEST's default tics_per_ms = 1000),
// tics per step, the step in ms, refractory counts, delays in steps and the stamping of spike-generator times.
#pragma once
#include <cmath>
#include <cstdint>

namespace dpointnet::nest_time {

inline constexpr double kTicsPerMs = 1000.0;

// Time::set_resolution: TICS_PER_STEP = dround(TICS_PER_MS * dt).
inline std::int64_t tics_per_step(double dt) { return static_cast<std::int64_t>(std::floor(kTicsPerMs * dt + 0.5)); }
// Time::get_resolution().get_ms() = MS_PER_TIC * TICS_PER_STEP: the h of every propagator.
inline double step_ms(double dt) { return (1 / kTicsPerMs) * static_cast<double>(tics_per_step(dt)); }
// Time(Time::ms(t)).get_steps(): round to tics half up, then up to whole steps.
inline std::int64_t ms_to_steps_up(double t_ms, double dt) {
  const std::int64_t tps = tics_per_step(dt);
  const std::int64_t tics = static_cast<std::int64_t>(t_ms * kTicsPerMs + 0.5);
  return static_cast<std::int64_t>(static_cast<double>(tics + tps - 1) * (1. / static_cast<double>(tps)));
}
// Time::delay_ms_to_steps: ld_round(ms * STEPS_PER_MS), STEPS_PER_MS = 1 / MS_PER_STEP, round half up.
inline double delay_steps(double delay_ms, double dt) {
  const double ms_per_step = static_cast<double>(tics_per_step(dt)) / kTicsPerMs;
  return std::floor(delay_ms * (1 / ms_per_step) + 0.5);
}
// Time::fromstamp in steps (spike_generator with precise_times): the first grid point at or after t, after
// truncation to tics. A spike-generator time t is sent like a neuron spike emitted in step fromstamp(t) - 1.
inline double stamp_steps(double t_ms, double dt) {
  const std::int64_t tps = tics_per_step(dt);
  const double ms_per_step = static_cast<double>(tps) / kTicsPerMs;
  if (!(t_ms * kTicsPerMs < 9.0e18)) return HUGE_VAL;  // beyond NEST's range: never sent
  std::int64_t n = static_cast<std::int64_t>(t_ms * kTicsPerMs);
  n -= n % tps;
  const double ms = static_cast<double>(n) * (1. / static_cast<double>(tps)) * ms_per_step;
  if (ms < t_ms) n += tps;
  return static_cast<double>(n / tps);
}

}  // namespace dpointnet::nest_time
