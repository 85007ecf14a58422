// Generates a V1-like SONATA network (recurrent GLIF3 E/I population, LGN-like virtual input, background).
#pragma once
#include <cstdint>
#include <string>

namespace dpointnet {

struct GeneratorOptions {
  std::int64_t n_neurons = 300;      // recurrent neurons, 10 .. 200000
  double synapses_per_neuron = 370;  // mean recurrent in-degree (capped at n_neurons - 1)
  std::int64_t n_lgn = 0;            // virtual LGN nodes; 0 = automatic (about n_neurons / 4, at least 10)
  double lgn_per_neuron = 30;        // mean LGN in-degree
  std::int64_t n_bkg = 100;          // background sources
  int bkg_per_neuron = 4;            // background connections per neuron
  std::uint32_t seed = 1;
  double dt = 1.0;  // written into the simulation config
  double tstop = 1000.0;
  double lgn_rate_hz = 10.0;   // Bernoulli rate of the LGN input in the simulation config
  double bkg_rate_hz = 250.0;  // Poisson rate of the background input
  std::string out_dir;         // directory to create
  bool overwrite = false;
  bool gzip = false;  // gzip-compress the edge datasets (smaller files, slower to write)
  // Visual networks (docs/generator.md): LGN units with the Allen V1 model's filter attributes, V1 cells of the
  // V1 papers' 17 types in a layered column, and the V1 model's LGN -> V1 rule. Off: the output is unchanged.
  bool visual = false;
  int lgn_tiles_x = 15, lgn_tiles_y = 10;  // LGN size in 8 x 8 degree tiles (visual); full = 15 x 10 = 17,400 units
  double column_radius = 0;                // V1 column radius in um (visual); 0 = min(400, what the LGN covers)
};

// Writes <out_dir>/network/{v1,lgn,bkg}_nodes.h5, *_node_types.csv, {v1_v1,lgn_v1,bkg_v1}_edges.h5 + types,
// <out_dir>/components/{cell_models,synaptic_models}/*.json, <out_dir>/config.circuit.json and
// <out_dir>/config.simulation.json; visual networks have the same files. Throws InputError on invalid options
// (before writing anything).
void generate_network(const GeneratorOptions& opt);

}  // namespace dpointnet
