// MPI implementation of ReplicaContext. The library duplicates the communicator it is given and never uses
// MPI_COMM_WORLD itself. Host buffers (host MPI is the baseline).
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "dpointnet/parallel/replica_context.hpp"

namespace dpointnet {

class MpiContext final : public ReplicaContext {
 public:
  explicit MpiContext(MPI_Comm comm);
  ~MpiContext() override;
  MpiContext(const MpiContext&) = delete;
  MpiContext& operator=(const MpiContext&) = delete;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce_sum(float* data, std::size_t n) override;
  void allreduce_sum(double* data, std::size_t n) override;
  void allreduce_max(double* data, std::size_t n) override;
  void broadcast(double* data, std::size_t n) override;
  void broadcast(std::int64_t* data, std::size_t n) override;
  void gather(const double* send, std::size_t n, double* recv) override;
  void scatter(const double* send, double* recv, std::size_t n) override;
  void barrier() override;
  // The watchdog thread (started by the first set_timeout) checks the collective in flight; past the timeout it
  // prints the collective and the update and ends the process (exit code kExitTimeout), which ends the job.
  void set_timeout(double seconds) override;
  void set_update(std::int64_t update) override { update_ = update; }
  MPI_Comm comm() const { return comm_; }

 private:
  struct InFlight;  // RAII: marks one collective as in flight
  void watch();
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  double timeout_s_ = 0;
  std::atomic<std::int64_t> update_{0};
  std::atomic<const char*> in_flight_{nullptr};
  std::atomic<double> since_{0};
  std::atomic<bool> stop_{false};
  std::thread watchdog_;
};

// The rank's index among the ranks of its node, from the launcher's environment (Open MPI, Slurm, MVAPICH2,
// MPICH/Hydra, PMI), else from an MPI shared-memory split of `comm`. `source` names where it came from.
int local_rank(MPI_Comm comm, std::string* source);

}  // namespace dpointnet
