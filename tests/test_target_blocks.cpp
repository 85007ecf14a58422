// The host spike adjoint's target blocks as the trainer chooses them (train.target_blocks; device/target_blocks.hpp,
// device/target_block_calibration.hpp): the sizes read from sysfs, the candidates, the pick, and that a timed or a
// fixed count gives the gradients of the unblocked pass bitwise (the blocked passes add the same terms in the same
// order; the unblocked pass is the independent reference here, and the gradient oracle checks that one).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "dpointnet/app/prepare_run.hpp"
#include "dpointnet/device/target_block_calibration.hpp"
#include "dpointnet/device/target_blocks.hpp"
#include "dpointnet/train/detail/trainer_test_access.hpp"
#include "dpointnet/train/trainer.hpp"
#include "dpointnet/util/host_caches.hpp"
#include "test_execspace.hpp"
#include "train_setup.hpp"

using namespace dpointnet;
using namespace dpointnet::test;
using nlohmann::json;

TEST(TargetBlocks, CacheSizesAsSysfsWritesThem) {
  EXPECT_EQ(parse_cache_size("512K"), 512 * 1024);
  EXPECT_EQ(parse_cache_size("16384K\n"), 16 * 1024 * 1024);
  EXPECT_EQ(parse_cache_size("2M"), 2 * 1024 * 1024);
  EXPECT_EQ(parse_cache_size("32768"), 32768);
  EXPECT_EQ(parse_cache_size(""), 0);
  EXPECT_EQ(parse_cache_size("K"), 0);
  EXPECT_EQ(parse_cache_size("12Q"), 0);
  EXPECT_EQ(parse_cache_size("99999999999999999999K"), 0);
}

// 1, 2, 4, 8 while a segment keeps 8 edges on average; only 1 when the slot fits the cache.
TEST(TargetBlocks, CandidatesKeepSegmentsLong) {
  const std::int64_t n = 1000;
  const int D = 5;
  EXPECT_EQ(device::target_block_candidates(n * D * 74, n, D, 4e6, 5e5), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(device::target_block_candidates(n * D * 40, n, D, 4e6, 5e5), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(device::target_block_candidates(n * D * 15, n, D, 4e6, 5e5), (std::vector<int>{1}));
  EXPECT_EQ(device::target_block_candidates(n * D * 74, n, D, 4e5, 5e5), (std::vector<int>{1}));
  EXPECT_EQ(device::target_block_candidates(n * D * 74, n, D, 4e5, 0), (std::vector<int>{1, 2, 4, 8}))
      << "an unknown cache size does not rule blocks out";
  EXPECT_EQ(device::block_targets_for(1000, 1), 0);
  EXPECT_EQ(device::block_targets_for(1000, 3), 334);
}

TEST(TargetBlocks, PickTheFastestUnlessFewerBlocksAreAsFast) {
  using T = device::TargetBlockTiming;
  EXPECT_EQ(device::pick_target_blocks({}), 1);
  EXPECT_EQ(device::pick_target_blocks({T{1, 1.0}, T{2, 0.8}, T{4, 0.7}, T{8, 0.9}}), 4);
  EXPECT_EQ(device::pick_target_blocks({T{1, 1.0}, T{2, 0.99}, T{4, 1.2}}), 1) << "within the margin";
  EXPECT_EQ(device::pick_target_blocks({T{1, 1.0}, T{2, 0.5}, T{4, 0.49}}), 2);
}

// A network whose adjoint slot exceeds this machine's L2, so that "auto" times its candidates; its gradients,
// and those of a fixed count of 3, are the unblocked pass's bitwise (float64, B = 16, fused weight gradient on).
TEST(TargetBlocks, TimedChoiceKeepsTheGradientsOfTheUnblockedPass) {
  using Exec = TEST_EXECSPACE;
  if (!compat::host_execution<Exec>) GTEST_SKIP() << "target blocks are a host shape";
  const std::int64_t l2 = host_cache_bytes(2);
  ASSERT_GT(l2, 0) << "no L2 size from /sys/devices/system/cpu/cpu0/cache or sysconf";
  const int B = 16;
  const std::int64_t neurons = std::max<std::int64_t>(300, l2 * 5 / 4 / (4 * B * 8) + 1);  // 4 channels
  ASSERT_LE(neurons, 20000) << "an L2 of " << l2 << " bytes needs too large a test network";
  std::vector<std::vector<std::vector<double>>> grads;
  std::vector<double> losses;
  for (const json tb : {json(1), json("auto"), json(3)}) {
    json train = train_section(0.01, 10, 5.0);
    train["target_blocks"] = tb;
    TrainSetup s(neurons, 30, B, train, 4, json{{"precision", "float64"}});
    ASSERT_EQ(s.net.n_channels, 4);
    const PreparedRun tr_run = prepare_run(s.cfg, s.net, s.tc, 1, B);
    // a host shape's feature, also under DPOINTNET_KERNEL_SHAPE=device
    auto trainer = detail::TrainerTestAccess::make<double>(Exec(), tr_run, device::KernelShape::Host);
    auto& tr = *trainer;
    const auto& choice = tr.engine().target_block_choice();
    if (tb.is_string()) {
      ASSERT_EQ(choice.timings.size(), 4u) << "1, 2, 4 and 8 blocks timed";
      for (const auto& t : choice.timings) EXPECT_GT(t.seconds_per_step, 0.0);
      EXPECT_EQ(tr.engine().target_blocks(), device::pick_target_blocks(choice.timings));
    } else {
      EXPECT_TRUE(choice.timings.empty());
      EXPECT_EQ(tr.engine().target_blocks(), tb.get<int>());
    }
    losses.push_back(tr.compute_gradient(0).loss);
    std::vector<std::vector<double>> g;
    for (int q = 0; q < tr.weights().size(); ++q)
      if (tr.weights()[q].trainable) g.push_back(tr.weights().get(q, Trainer<double, Exec>::Field::Gradient));
    grads.push_back(g);
  }
  double norm = 0;
  for (double x : grads[0][0]) norm += x * x;
  EXPECT_GT(norm, 0.0) << "the recurrent gradient must not be trivially zero";
  EXPECT_EQ(losses[1], losses[0]);
  EXPECT_EQ(losses[2], losses[0]);
  EXPECT_EQ(grads[1], grads[0]) << "auto vs unblocked";
  EXPECT_EQ(grads[2], grads[0]) << "3 blocks vs unblocked";
}
