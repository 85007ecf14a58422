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
  virtual void allreduce_max(double* data, std::size_t n) = 0;
  // From the chief to everyone, in place.
  virtual void broadcast(double* data, std::size_t n) = 0;
  virtual void broadcast(std::int64_t* data, std::size_t n) = 0;
  // The chief receives every process's n values in rank order (recv: size() x n values, used on the chief only).
  virtual void gather(const double* send, std::size_t n, double* recv) = 0;
  // The chief's size() x n values (send, read on the chief only), n to each process in rank order.
  virtual void scatter(const double* send, double* recv, std::size_t n) = 0;
  virtual void barrier() = 0;
  // Hang watchdog (run.distribution.timeout_s): a collective not completed within `seconds` ends the job with a
  // message naming it and the update (set_update). No-ops for a job of one process.
  virtual void set_timeout(double /*seconds*/) {}
  virtual void set_update(std::int64_t /*update*/) {}
};

}  // namespace dpointnet
