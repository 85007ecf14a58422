// Writing SONATA files from plain columns.
#pragma once
#include <string>
#include <vector>

namespace dpointnet {

// Copies the edge populations `populations` of the SONATA edges file `src` into a new file `dst` (written to
// dst + ".tmp", then renamed) and replaces each one's syn_weight: syn_weight[q][row] for the population's row
// `row`, placed into its edge group (edge_group_id / edge_group_index, or group 0 in row order).
void write_edges_with_weights(const std::string& src, const std::string& dst,
                              const std::vector<std::string>& populations,
                              const std::vector<std::vector<double>>& syn_weight);

}  // namespace dpointnet
