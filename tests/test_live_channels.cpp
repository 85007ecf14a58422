// Channels without inputs (network/live_channels.hpp): the masks and drive spans follow the edge list, and skipping
// such channels in the neuron step, the drive zeroing and the neuron adjoint changes no value: a network whose
// every channel is made live by zero-weight edges (so that every channel is computed in full) gives bitwise the
// same loss and gradients.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <utility>

#include "dpointnet/app/prepare_run.hpp"
#include "dpointnet/network/live_channels.hpp"
#include "dpointnet/train/trainer.hpp"
#include "test_execspace.hpp"
#include "test_support.hpp"
#include "train_setup.hpp"

using namespace dpointnet;
using namespace dpointnet::test;

// Masks and spans against the set of (channel, target) pairs of a random edge list over two projections, with some
// neurons of fewer channels and some with slow channels (driven by their fast partner's row).
TEST(LiveChannels, MasksAndSpansFollowTheEdges) {
  const int N = 600, R = 4, block = 256;
  std::vector<NeuronParams> ps(N, glif(100, 5, -70, -50, -70, 2.0));
  for (int i = 500; i < 520; ++i) ps[static_cast<std::size_t>(i)] = glif(100, 5, -70, -50, -70, 2.0, {5.5, 8.5});
  NetBuilder nb(1.0, ps);
  const int lgn = nb.add_virtual("lgn", 10);
  std::mt19937 gen(5);
  std::set<std::pair<int, int>> rows;  // (channel, target) with edges
  for (int e = 0; e < 900; ++e) {
    // channel 0 anywhere, 1 below 300, 2 never, 3 in [400, 450) and on the two-channel neurons (beyond their
    // channels: no live bit there)
    const int c = static_cast<int>(gen() % 3) == 0 ? 0 : (gen() % 2 ? 1 : 3);
    int i = static_cast<int>(gen() % N);
    if (c == 1) i %= 300;
    if (c == 3) i = gen() % 4 == 0 ? 500 + i % 20 : 400 + i % 50;
    if (i >= 500 && i < 520 && c == 1) continue;  // keep the two-channel neurons' channel 1 dead
    nb.edge(e % 2 ? lgn : 0, static_cast<int>(gen() % 10), i, c, 1 + e % 3, 10.0);
    rows.insert({c, i});
  }
  Network net = nb.finish();
  ASSERT_EQ(net.n_channels, R);
  // neurons 100 .. 109: slow channels 2 and 3 (glif_psc_double_alpha), driven by rows 0 and 1
  for (int i = 100; i < 110; ++i) net.neurons[static_cast<std::size_t>(i)].n_receptors = 2;
  const LiveChannels lc = live_channels(net, block);
  ASSERT_EQ(lc.neuron.size(), static_cast<std::size_t>(N));
  ASSERT_EQ(lc.block.size(), 3u);
  int dead = 0;
  std::vector<std::uint32_t> blocks(3, 0);
  for (int i = 0; i < N; ++i) {
    const int nch = (i >= 500 && i < 520) ? 2 : 4;
    const bool slow = i >= 100 && i < 110;
    for (int c = 0; c < R; ++c) {
      const int dc = slow && c >= 2 ? c - 2 : c;
      const bool expect = c < nch && rows.count({dc, i}) > 0;
      EXPECT_EQ(((lc.neuron[static_cast<std::size_t>(i)] >> c) & 1u) != 0, expect)
          << "neuron " << i << " channel " << c;
      dead += c < nch && !expect;
      if (expect) blocks[static_cast<std::size_t>(i / block)] |= 1u << c;
    }
  }
  EXPECT_GT(dead, N) << "the case must have dead channels";
  EXPECT_EQ(lc.block, blocks);
  for (int c = 0; c < R; ++c) {
    std::int64_t lo = N, hi = 0;
    for (const auto& [rc, i] : rows)
      if (rc == c) lo = std::min<std::int64_t>(lo, i), hi = std::max<std::int64_t>(hi, i + 1);
    if (lo >= hi) lo = hi = 0;
    EXPECT_EQ(lc.span[2 * static_cast<std::size_t>(c)], lo) << "channel " << c;
    EXPECT_EQ(lc.span[2 * static_cast<std::size_t>(c) + 1], hi) << "channel " << c;
  }
  EXPECT_EQ(lc.span[4], 0);
  EXPECT_EQ(lc.span[5], 0);
}

// A generated network (E cells receive on channels 0 and 1, I cells on 0, 2 and 3: dead channels in both) against
// the same network with a zero-weight background edge onto every dead channel: those channels are then live and
// computed in full (their drive adds zero, their state stays zero, their adjoints feed a zero-weight edge), so
// the loss and every gradient must be bitwise equal. The background projection is frozen: no trainable weight is
// added.
TEST(LiveChannels, SkippingChannelsWithoutInputsChangesNoValue) {
  const int T = 60;
  TrainSetup s(300, T, 4, train_section(0.01, 20, 5.0));
  Network full = s.net;
  const int bkg = full.projection_of("bkg");
  ASSERT_GE(bkg, 0);
  const LiveChannels before = live_channels(full, 256);
  Projection& p = full.projections[static_cast<std::size_t>(bkg)];
  int added = 0;
  for (std::int64_t i = 0; i < full.n_neurons; ++i)
    for (int c = 0; c < static_cast<int>(full.neurons[static_cast<std::size_t>(i)].syn_decay.size()); ++c)
      if (((before.neuron[static_cast<std::size_t>(i)] >> c) & 1u) == 0) {
        p.source.push_back(0);
        p.target.push_back(i);
        p.channel.push_back(c);
        p.delay_steps.push_back(1);
        p.weight_pA.push_back(0.0);
        if (!p.nsyns.empty()) p.nsyns.push_back(1.0);
        p.edge_population.push_back(p.edge_population.empty() ? 0 : p.edge_population.back());
        p.edge_row.push_back(p.edge_row.empty() ? 0 : p.edge_row.back() + 1);
        ++added;
      }
  ASSERT_GT(added, 300) << "the generated network must have channels without inputs";
  for (std::uint32_t m : live_channels(full, 256).neuron) ASSERT_EQ(m, 0xFu) << "every channel live in the reference";

  using Tr = Trainer<float, TEST_EXECSPACE>;
  auto run = [&](const Network& net, std::vector<std::vector<double>>& g) {
    const PreparedRun tr_run = prepare_run(s.cfg, net, s.tc, 1, 3);
    Tr tr(TEST_EXECSPACE(), tr_run);
    const StepMetrics m = tr.compute_gradient(0);
    for (int q = 0; q < tr.weights().size(); ++q)
      if (tr.weights()[q].trainable) g.push_back(tr.weights().get(q, Tr::Field::Gradient));
    return m.loss;
  };
  std::vector<std::vector<double>> g_skip, g_full;
  const double loss_skip = run(s.net, g_skip), loss_full = run(full, g_full);
  double norm = 0;
  for (const auto& v : g_skip)
    for (double x : v) norm += x * x;
  EXPECT_GT(norm, 0.0) << "the gradient must not be trivially zero";
  EXPECT_EQ(loss_skip, loss_full);
  EXPECT_EQ(g_skip, g_full);
}
