#include "dpointnet/parallel/mpi/mpi_context.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "dpointnet/util/error.hpp"

namespace dpointnet {

namespace {
void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI error in ") + what);
}
// MPI counts are int: split large buffers into chunks.
template <class F>
void chunked(std::size_t n, F f) {
  const std::size_t chunk = static_cast<std::size_t>(INT_MAX / 2);
  for (std::size_t off = 0; off < n; off += chunk) f(off, static_cast<int>(std::min(chunk, n - off)));
}
}  // namespace

MpiContext::MpiContext(MPI_Comm comm) {
  check(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

namespace {
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

struct MpiContext::InFlight {
  MpiContext& c;
  InFlight(MpiContext& ctx, const char* name) : c(ctx) {
    c.since_ = now_s();
    c.in_flight_ = name;
  }
  ~InFlight() { c.in_flight_ = nullptr; }
};

void MpiContext::set_timeout(double seconds) {
  timeout_s_ = seconds;
  if (!watchdog_.joinable() && seconds > 0) watchdog_ = std::thread([this] { watch(); });
}

void MpiContext::watch() {
  const double tick = std::min(1.0, timeout_s_ / 10);
  while (!stop_) {
    std::this_thread::sleep_for(std::chrono::duration<double>(tick));
    const char* name = in_flight_;
    if (name && now_s() - since_ > timeout_s_) {
      std::fprintf(stderr,
                   "dpointnet-mpi: rank %d: %s of update %lld has not completed in %g s "
                   "(run.distribution.timeout_s): another rank is stalled or dead; ending the job\n",
                   rank_, name, static_cast<long long>(update_.load()), timeout_s_);
      std::fflush(stderr);
      // MPI_Abort from this thread: the one call made here, to end the job (the launcher kills every rank,
      // stopped ones too); the process ends even if it returns
      MPI_Abort(comm_, kExitTimeout);
      std::_Exit(kExitTimeout);
    }
  }
}

MpiContext::~MpiContext() {
  stop_ = true;
  if (watchdog_.joinable()) watchdog_.join();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiContext::allreduce_sum(float* data, std::size_t n) {
  const InFlight busy(*this, "MPI_Allreduce");
  chunked(n, [&](std::size_t off, int c) {
    check(MPI_Allreduce(MPI_IN_PLACE, data + off, c, MPI_FLOAT, MPI_SUM, comm_), "MPI_Allreduce");
  });
}
void MpiContext::allreduce_sum(double* data, std::size_t n) {
  const InFlight busy(*this, "MPI_Allreduce");
  chunked(n, [&](std::size_t off, int c) {
    check(MPI_Allreduce(MPI_IN_PLACE, data + off, c, MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce");
  });
}
void MpiContext::allreduce_max(double* data, std::size_t n) {
  const InFlight busy(*this, "MPI_Allreduce (max)");
  chunked(n, [&](std::size_t off, int c) {
    check(MPI_Allreduce(MPI_IN_PLACE, data + off, c, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce");
  });
}
void MpiContext::broadcast(double* data, std::size_t n) {
  const InFlight busy(*this, "MPI_Bcast");
  chunked(n, [&](std::size_t off, int c) { check(MPI_Bcast(data + off, c, MPI_DOUBLE, 0, comm_), "MPI_Bcast"); });
}
void MpiContext::broadcast(std::int64_t* data, std::size_t n) {
  const InFlight busy(*this, "MPI_Bcast");
  chunked(n, [&](std::size_t off, int c) { check(MPI_Bcast(data + off, c, MPI_INT64_T, 0, comm_), "MPI_Bcast"); });
}
// Chunk by chunk through a staging buffer, so that the result is rank-major over the whole n.
void MpiContext::gather(const double* send, std::size_t n, double* recv) {
  const InFlight busy(*this, "MPI_Gather");
  std::vector<double> stage;
  chunked(n, [&](std::size_t off, int c) {
    if (rank_ == 0) stage.resize(static_cast<std::size_t>(c) * static_cast<std::size_t>(size_));
    check(MPI_Gather(send + off, c, MPI_DOUBLE, stage.data(), c, MPI_DOUBLE, 0, comm_), "MPI_Gather");
    if (rank_ == 0)
      for (int r = 0; r < size_; ++r)
        std::copy_n(stage.data() + static_cast<std::size_t>(r) * c, c, recv + static_cast<std::size_t>(r) * n + off);
  });
}
void MpiContext::scatter(const double* send, double* recv, std::size_t n) {
  const InFlight busy(*this, "MPI_Scatter");
  std::vector<double> stage;
  chunked(n, [&](std::size_t off, int c) {
    if (rank_ == 0) {
      stage.resize(static_cast<std::size_t>(c) * static_cast<std::size_t>(size_));
      for (int r = 0; r < size_; ++r)
        std::copy_n(send + static_cast<std::size_t>(r) * n + off, c, stage.data() + static_cast<std::size_t>(r) * c);
    }
    check(MPI_Scatter(stage.data(), c, MPI_DOUBLE, recv + off, c, MPI_DOUBLE, 0, comm_), "MPI_Scatter");
  });
}
void MpiContext::barrier() {
  const InFlight busy(*this, "MPI_Barrier");
  check(MPI_Barrier(comm_), "MPI_Barrier");
}

int local_rank(MPI_Comm comm, std::string* source) {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MV2_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                        "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID"}) {
    if (const char* s = std::getenv(v)) {
      if (source) *source = v;
      return std::atoi(s);
    }
  }
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int r = 0;
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  if (source) *source = "MPI_COMM_TYPE_SHARED split";
  return r;
}

}  // namespace dpointnet
