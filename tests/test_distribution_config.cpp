// run.distribution checked against the launcher, the world size and the admitted scope: the refusals listed in
// docs/multi-gpu.md ("Scope and refusals", "Batch semantics"), each naming the config file and the setting
// ("FILE: WHERE: field 'KEY': WHAT", docs/training.md). The global batch is batch_size x accumulate x replicas.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <string>

#include "dpointnet/parallel/distribution_config.hpp"
#include "dpointnet/util/error.hpp"

using namespace dpointnet;

namespace {

SimulationConfig config(DistributionMode mode, int batch_size = 4) {
  SimulationConfig c;
  c.path = "/cfg/train.json";
  c.batch_size = batch_size;
  c.distribution.present = mode != DistributionMode::None;
  c.distribution.mode = mode;
  return c;
}

TrainConfig train(int accumulate, int conditions = 0) {
  TrainConfig t;
  t.accumulate = accumulate;
  for (int k = 0; k < conditions; ++k) t.conditions.push_back(nlohmann::json::object());
  return t;
}

std::string refusal(const SimulationConfig& c, const TrainConfig* t, Launcher l, int world, bool training = true) {
  try {
    DistributionConfig::parse(c, t, l, world, training);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a refusal";
  return "";
}

bool starts(const std::string& m, const std::string& prefix) { return m.rfind(prefix, 0) == 0; }
bool has(const std::string& m, const std::string& part) { return m.find(part) != std::string::npos; }

}  // namespace

TEST(DistributionConfig, NoDistributionIsTheSerialRun) {
  // docs/multi-gpu.md: without run.distribution a run is the serial run: one replica; float64 and simulate allowed.
  SimulationConfig c = config(DistributionMode::None);
  c.precision = Precision::Float64;
  const DistributionConfig d = DistributionConfig::parse(c, nullptr, Launcher::Serial, 1, false);
  EXPECT_EQ(d.mode, DistributionMode::None);
  EXPECT_EQ(d.local_replicas(), 1);
  EXPECT_DOUBLE_EQ(d.timeout_s, 1800.0) << "docs/multi-gpu.md: default 1800 s";
}

TEST(DistributionConfig, LauncherAndModeMustAgree) {
  // dpointnet-mpi without mode "mpi" (or with "mirrored"); mode "mpi" under the serial dpointnet
  std::string m = refusal(config(DistributionMode::None), nullptr, Launcher::Mpi, 2);
  EXPECT_TRUE(starts(m, "/cfg/train.json: run.distribution: field 'mode': ")) << m;
  EXPECT_TRUE(has(m, "dpointnet-mpi")) << m;
  SimulationConfig mirrored = config(DistributionMode::Mirrored);
  mirrored.distribution.devices = {"cpu", "cpu"};
  m = refusal(mirrored, nullptr, Launcher::Mpi, 2);
  EXPECT_TRUE(starts(m, "/cfg/train.json: run.distribution: field 'mode': ")) << m;
  m = refusal(config(DistributionMode::Mpi), nullptr, Launcher::Serial, 1);
  EXPECT_TRUE(starts(m, "/cfg/train.json: run.distribution: field 'mode': ")) << m;
  EXPECT_TRUE(has(m, "mpirun")) << m;
}

TEST(DistributionConfig, ReplicasMustEqualTheRankCount) {
  SimulationConfig c = config(DistributionMode::Mpi);
  c.distribution.replicas_requested = 2;
  const std::string m = refusal(c, nullptr, Launcher::Mpi, 1);
  EXPECT_TRUE(starts(m, "/cfg/train.json: run.distribution: field 'replicas': ")) << m;
  EXPECT_TRUE(has(m, "2 replicas")) << m;
  EXPECT_TRUE(has(m, "1 rank")) << m;
  EXPECT_NO_THROW(DistributionConfig::parse(c, nullptr, Launcher::Mpi, 2, true));
}

TEST(DistributionConfig, GlobalBatchSizeMustBeBatchTimesAccumulateTimesReplicas) {
  // 4 ranks x batch 4 x accumulate 2 = 32
  SimulationConfig c = config(DistributionMode::Mpi, 4);
  const TrainConfig t = train(2);
  c.distribution.global_batch_size = 32;
  EXPECT_NO_THROW(DistributionConfig::parse(c, &t, Launcher::Mpi, 4, true));
  c.distribution.global_batch_size = 16;
  const std::string m = refusal(c, &t, Launcher::Mpi, 4);
  EXPECT_TRUE(starts(m, "/cfg/train.json: run: field 'global_batch_size': ")) << m;
  EXPECT_TRUE(has(m, "is 16")) << m;
  EXPECT_TRUE(has(m, "4 x 2 x 4 = 32")) << m;
}

TEST(DistributionConfig, GlobalBatchCountsConditionsAndLocalReplicas) {
  // mirrored over 2 devices, batch 3, accumulate 2 and 3 stimulus conditions: K = A x conditions = 6
  // (docs/model.md, "Sample indexing": G = P*K*B), G = 2 x 6 x 3 = 36
  SimulationConfig c = config(DistributionMode::Mirrored, 3);
  c.distribution.devices = {"cpu", "cpu"};
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL)
  c.distribution.devices = {"0", "0"};
#endif
  const TrainConfig t = train(2, 3);
  c.distribution.global_batch_size = 36;
  const DistributionConfig d = DistributionConfig::parse(c, &t, Launcher::Serial, 1, true);
  EXPECT_EQ(d.local_replicas(), 2);
  c.distribution.global_batch_size = 12;
  const std::string m = refusal(c, &t, Launcher::Serial, 1);
  EXPECT_TRUE(has(m, "field 'global_batch_size'")) << m;
  EXPECT_TRUE(has(m, "= 36")) << m;
  // without a train section (simulate would be refused later): accumulate counts as 1
  c.distribution.global_batch_size = 6;
  EXPECT_NO_THROW(DistributionConfig::parse(c, nullptr, Launcher::Serial, 1, true));
}

TEST(DistributionConfig, MirroredNeedsDevicesOnePerReplica) {
  SimulationConfig c = config(DistributionMode::Mirrored);
  std::string m = refusal(c, nullptr, Launcher::Serial, 1);
  EXPECT_TRUE(starts(m, "/cfg/train.json: run.distribution: field 'devices': ")) << m;
  EXPECT_TRUE(has(m, "required")) << m;
  c.distribution.devices = {"cpu", "cpu"};
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL)
  c.distribution.devices = {"0", "0"};
#endif
  c.distribution.replicas_requested = 3;
  m = refusal(c, nullptr, Launcher::Serial, 1);
  EXPECT_TRUE(starts(m, "/cfg/train.json: run.distribution: field 'replicas': ")) << m;
}

TEST(DistributionConfig, MirroredDevicesThisBuildCannotDriveAreRefused) {
  // docs/multi-gpu.md: on host builds every entry must be "cpu"; on GPU builds every entry the same device
  SimulationConfig c = config(DistributionMode::Mirrored);
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL)
  c.distribution.devices = {"0", "1"};
#else
  c.distribution.devices = {"cpu", "gpu1"};
#endif
  const std::string m = refusal(c, nullptr, Launcher::Serial, 1);
  EXPECT_TRUE(starts(m, "/cfg/train.json: run.distribution: field 'devices': ")) << m;
#if !(defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL))
  EXPECT_TRUE(has(m, "gpu1")) << m;
  EXPECT_TRUE(has(m, "\"cpu\"")) << m;
#endif
}

TEST(DistributionConfig, Float64IsRefusedUnderADistributionMode) {
  SimulationConfig c = config(DistributionMode::Mpi);
  c.precision = Precision::Float64;
  const std::string m = refusal(c, nullptr, Launcher::Mpi, 2);
  EXPECT_TRUE(starts(m, "/cfg/train.json: run: field 'precision': ")) << m;
  EXPECT_TRUE(has(m, "float32")) << m;
  EXPECT_TRUE(has(m, "\"float64\"")) << m;
}

TEST(DistributionConfig, SimulateIsRefusedUnderADistributionMode) {
  // "one job never both trains and runs inference"
  const std::string m = refusal(config(DistributionMode::Mpi), nullptr, Launcher::Mpi, 2, false);
  EXPECT_TRUE(starts(m, "/cfg/train.json: run: field 'distribution': ")) << m;
  EXPECT_TRUE(has(m, "simulate")) << m;
}

TEST(DistributionConfig, AnAdmittedMpiRunKeepsItsSettings) {
  SimulationConfig c = config(DistributionMode::Mpi, 2);
  c.distribution.replicas_requested = 4;
  c.distribution.timeout_s = 5;
  c.distribution.global_batch_size = 8;
  const DistributionConfig d = DistributionConfig::parse(c, nullptr, Launcher::Mpi, 4, true);
  EXPECT_EQ(d.mode, DistributionMode::Mpi);
  EXPECT_EQ(d.local_replicas(), 1) << "one replica per rank";
  EXPECT_EQ(d.replicas_requested, 4);
  EXPECT_EQ(d.global_batch_size, 8);
  EXPECT_DOUBLE_EQ(d.timeout_s, 5.0);
}
