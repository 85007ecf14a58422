// MPI implementation of ReplicaContext. The library duplicates the communicator it is given and never uses
// MPI_COMM_WORLD itself. Host buffers (host MPI is the baseline).
#pragma once
#include <mpi.h>

#include <string>

#include "parallel/replica_context.hpp"

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
  MPI_Comm comm() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

// The rank's index among the ranks of its node, from the launcher's environment (Open MPI, Slurm, MVAPICH2,
// MPICH/Hydra, PMI), else from an MPI shared-memory split of `comm`. `source` names where it came from.
int local_rank(MPI_Comm comm, std::string* source);

}  // namespace dpointnet
