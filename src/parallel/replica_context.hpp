// The cross-process side of sample-parallel training, as seen by the (MPI-free) training run: rank, size and
// the few collectives it needs. The MPI implementation lives in src/parallel/mpi/ and is linked only
// into the MPI driver; the serial library never sees MPI.
#pragma once
#include <cstddef>
#include <cstdint>

namespace dpointnet {

class ReplicaContext {
 public:
  virtual ~ReplicaContext() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  bool chief() const { return rank() == 0; }
  // In place, sum over all processes.
  virtual void allreduce_sum(float* data, std::size_t n) = 0;
  virtual void allreduce_sum(double* data, std::size_t n) = 0;
  // From the chief to everyone, in place.
  virtual void broadcast(double* data, std::size_t n) = 0;
  virtual void broadcast(std::int64_t* data, std::size_t n) = 0;
  virtual void barrier() = 0;
};

}  // namespace dpointnet
