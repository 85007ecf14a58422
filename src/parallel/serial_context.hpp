// The ReplicaContext of a job of one process: collectives are identities.
#pragma once
#include <algorithm>

#include "dpointnet/parallel/replica_context.hpp"

namespace dpointnet {

class SerialContext final : public ReplicaContext {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allreduce_sum(float*, std::size_t) override {}
  void allreduce_sum(double*, std::size_t) override {}
  void allreduce_max(double*, std::size_t) override {}
  void broadcast(double*, std::size_t) override {}
  void broadcast(std::int64_t*, std::size_t) override {}
  void gather(const double* send, std::size_t n, double* recv) override { std::copy(send, send + n, recv); }
  void scatter(const double* send, double* recv, std::size_t n) override { std::copy(send, send + n, recv); }
  void barrier() override {}
};

}  // namespace dpointnet
