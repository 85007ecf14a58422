// Allen Cell Types GLIF configs (the AIBS neuron_config JSON: "type": "GLIF", El_reference, th_inf, coeffs,
// ...) under BMTK's legacy model templates nest:glif_lif_psc (GLIF1) and nest:glif_lif_asc_psc (GLIF3): converted
// to NEST glif_psc parameters with BMTK's formulas (bmtk.simulator.pointnet.glif_utils.converter_builtin), as
// BMTK PointNet does before it creates the NEST cells.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace dpointnet {

// True for the legacy templates this module converts ("glif_lif_psc", "glif_lif_asc_psc", without "nest:").
bool is_legacy_glif_template(const std::string& model);
// True when `params` is an Allen neuron_config ("type": "GLIF"), not NEST parameters.
bool is_allen_glif_config(const nlohmann::json& params);
// The NEST glif_psc parameters of an Allen config under `model` (a legacy template); errors name the file.
nlohmann::json convert_allen_glif(const std::string& model, const nlohmann::json& config, const std::string& file,
                                  const std::string& label);

}  // namespace dpointnet
