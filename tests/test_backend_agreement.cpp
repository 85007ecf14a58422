// The same trainer on two Kokkos backends (the default space and Serial). What agrees and how closely
// (docs/building.md, "Numerics across backends"):
// * the forward pass (spikes, rates) bitwise on every backend: fixed-point drive (integer sums in any order), and
//   the neuron step is the same arithmetic everywhere (device code is built without fused multiply-adds);
// * the gradients bitwise when both backends execute on the host (OpenMP and Serial, in either shape: the same
//   sums in the same order whatever the thread count); to 1e-13 of the largest gradient when one of them is a
//   device (its lane reductions sum the samples in a tree);
// * the losses up to the order of the host-side reductions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "dpointnet/app/prepare_run.hpp"
#include "dpointnet/train/trainer.hpp"
#include "dpointnet/util/kokkos_compat.hpp"
#include "train_setup.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

#if DPOINTNET_SECOND_SERIAL_SPACE
TEST(Backends, TrainerGradientsAgreeAcrossBackends) {
  TrainSetup s(300, 40.0, 3, train_section(1e-3, 7, 2.0));
  auto gradients = [&](auto space) {
    using Space = decltype(space);
    const PreparedRun tr_run = prepare_run(s.cfg, s.net, s.tc, 1, 3);
    Trainer<double, Space> tr(space, tr_run);
    const StepMetrics m = tr.compute_gradient(5);
    std::vector<std::vector<double>> g;
    for (int q = 0; q < tr.weights().size(); ++q)
      if (tr.weights()[q].trainable) g.push_back(tr.weights().get(q, Trainer<double, Space>::Field::Gradient));
    return std::make_pair(m, g);
  };
  const auto [ma, ga] = gradients(Kokkos::DefaultExecutionSpace());
  const auto [mb, gb] = gradients(Kokkos::Serial());
  ASSERT_EQ(ga.size(), gb.size());
  constexpr bool bitwise = compat::host_execution<Kokkos::DefaultExecutionSpace>;
  double norm = 0;
  for (std::size_t q = 0; q < ga.size(); ++q) {
    ASSERT_EQ(ga[q].size(), gb[q].size());
    double scale = 0;
    for (const double x : ga[q]) scale = std::max(scale, std::fabs(x));
    for (std::size_t e = 0; e < ga[q].size(); ++e) {
      if (bitwise)
        EXPECT_EQ(ga[q][e], gb[q][e]) << "surface " << q << " edge " << e;
      else
        EXPECT_NEAR(ga[q][e], gb[q][e], 1e-13 * scale) << "surface " << q << " edge " << e;
      norm += ga[q][e] * ga[q][e];
    }
  }
  EXPECT_GT(norm, 0.0) << "the comparison needs non-zero gradients";
  EXPECT_GT(ma.rate_hz, 0.5) << "the network must spike for the comparison to mean something";
  EXPECT_EQ(ma.rate_hz, mb.rate_hz);
  EXPECT_NEAR(ma.loss, mb.loss, 1e-12 * std::fabs(ma.loss));
}
#endif
