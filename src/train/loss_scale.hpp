// Dynamic loss scaling of float16 runs (docs/training-update.md "Loss scaling"), as Keras' LossScaleOptimizer does
// it: the backward pass runs on the loss times `scale` (a power of two), so that the adjoints stored in float16 keep
// their small values above its subnormal range; the gradients are divided by it before clipping and the optimizer.
// A gradient that is not finite skips the optimizer step and halves the scale (not below 1); `growth_steps`
// finite steps in a row double it.
#pragma once
#include <algorithm>
#include <cstdint>

namespace dpointnet {

struct LossScale {
  bool on = false;
  double scale = 1.0;
  std::int64_t growth_steps = 2000;
  std::int64_t good_steps = 0;     // finite steps since the scale last changed
  std::int64_t skipped_run = 0;    // optimizer steps skipped in a row, up to the last one
  std::int64_t skipped_total = 0;  // optimizer steps skipped in the run

  // The scale the backward pass multiplies its loss gradients by (1 when off).
  double factor() const { return on ? scale : 1.0; }
  // After a gradient: whether the optimizer step runs (finite), and the scale's update.
  bool step(const bool finite) {
    if (!on) return true;
    if (!finite) {
      scale = std::max(scale / 2, 1.0);
      good_steps = 0;
      ++skipped_run;
      ++skipped_total;
      return false;
    }
    skipped_run = 0;
    if (++good_steps >= growth_steps) {
      scale *= 2;
      good_steps = 0;
    }
    return true;
  }
};

}  // namespace dpointnet
