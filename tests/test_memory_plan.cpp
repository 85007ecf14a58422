// `dpointnet plan`: the predicted device memory of a training run against the peak that
// Kokkos reports to tools (allocate/deallocate callbacks of Kokkos core), at three sizes (and with carried states,
// and in bfloat16), within 15 %.
#include <gtest/gtest.h>

#include <cstring>

#include "dpointnet/app/prepare_run.hpp"
#include "dpointnet/train/memory_plan.hpp"
#include "dpointnet/train/trainer.hpp"
#include "train_setup.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

namespace {

double g_now = 0, g_peak = 0;
bool in_space(const Kokkos::Tools::SpaceHandle h) {
  return std::strcmp(h.name, Kokkos::DefaultExecutionSpace::memory_space::name()) == 0;
}
void on_alloc(const Kokkos::Tools::SpaceHandle h, const char*, const void*, const uint64_t size) {
  if (!in_space(h)) return;
  g_now += static_cast<double>(size);
  g_peak = std::max(g_peak, g_now);
}
void on_free(const Kokkos::Tools::SpaceHandle h, const char*, const void*, const uint64_t size) {
  if (in_space(h)) g_now -= static_cast<double>(size);
}

}  // namespace

TEST(MemoryPlan, PredictsThePeakOfATrainingUpdate) {
  struct Case {
    std::int64_t neurons;
    double tstop;
    int batch, interval;
    bool carry = false;  // train.carry_state with accumulate 2: two carried states per micro-batch
    bool bf16 = false;   // run.precision "bfloat16": the adjoint ring in 16 bits and one float32 slot
  };
  for (const Case c : {Case{300, 60, 4, 10}, Case{800, 100, 8, 25}, Case{1500, 50, 16, 50},
                       Case{1500, 50, 16, 50, true}, Case{1500, 50, 16, 50, false, true}}) {
    TrainSetup s(c.neurons, c.tstop, c.batch, train_section(1e-3, c.interval, 2.0));
    if (c.bf16) s.cfg.precision = Precision::BFloat16;
    if (c.carry) {
      s.tc.carry_state = true;
      s.tc.accumulate = 2;
    }
    const MemoryPlan plan = plan_memory(s.net, s.inputs, s.cfg, &s.tc);
    namespace E = Kokkos::Tools::Experimental;
    g_now = g_peak = 0;
    E::set_allocate_data_callback(on_alloc);
    E::set_deallocate_data_callback(on_free);
    {
      const PreparedRun tr_run = prepare_run(s.cfg, s.net, s.tc, 1, c.batch);
      Trainer<float> tr(Kokkos::DefaultExecutionSpace(), tr_run);
      tr.compute_gradient(0);
      tr.apply_update();
      if (c.carry) tr.compute_gradient(tr.updates_done());  // from the carried states
    }
    E::set_allocate_data_callback(nullptr);
    E::set_deallocate_data_callback(nullptr);
    const double ratio = plan.total() / g_peak;
    std::printf("[ plan ] N %lld B %d T %g C %d%s%s: predicted %.3f MiB, measured peak %.3f MiB (ratio %.3f)\n",
                static_cast<long long>(c.neurons), c.batch, c.tstop, c.interval, c.carry ? " carry x2" : "",
                c.bf16 ? " bfloat16" : "", plan.total() / 1048576.0, g_peak / 1048576.0, ratio);
    EXPECT_GT(g_peak, 1e6) << "the callbacks must see the trainer's allocations";
    EXPECT_NEAR(ratio, 1.0, 0.15);
  }
}
