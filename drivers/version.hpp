// What `dpointnet --version` and `dpointnet-mpi --version` print (and `dpointnet info`, with the concurrency of the
// initialized Kokkos when >= 0): the dpointnet and Kokkos versions, the Kokkos backends, the precisions and
// kernel shapes of the build. Needs no initialized Kokkos when concurrency < 0.
#pragma once
#include <string>

namespace dpointnet::cli {

std::string version_text(int concurrency = -1);

}  // namespace dpointnet::cli
