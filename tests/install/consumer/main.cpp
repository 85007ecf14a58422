// Loads a SONATA simulation config and its network through the installed dpointnet library.
#include <cstdio>
#include <dpointnet/config/simulation_config.hpp>
#include <dpointnet/network/network_builder.hpp>
#include <dpointnet/util/kokkos_compat.hpp>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  dpointnet::compat::initialize({});
  {
    const auto cfg = dpointnet::SimulationConfig::load(argv[1]);
    const dpointnet::Network net = dpointnet::build_network(cfg);
    std::printf("dpointnet %s kokkos %s dt %g tstop %g steps %lld neurons %lld edges %zu\n", DPOINTNET_VERSION,
                dpointnet::compat::kokkos_version_string().c_str(), cfg.dt, cfg.tstop,
                static_cast<long long>(cfg.n_steps), static_cast<long long>(net.n_neurons), net.n_edges());
  }
  Kokkos::finalize();
  return 0;
}
