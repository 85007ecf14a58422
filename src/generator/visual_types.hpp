// The tables of the generator's visual mode (docs/generator.md, "Visual networks"): the 17 V1 cell types of the
// V1 papers with their layers, shares and LGN -> V1 rule parameters, and the 14 LGN filter classes of the Allen
// V1 model with their fitted temporal filters. Compiled in: the generator reads no data file at run time.
#pragma once
#include "dpointnet/generator/cell_types.hpp"

namespace dpointnet::generator {

// ---------------------------------------------------------------------------------------------------------------
// V1 cell types. One SONATA node type per cell type of the V1 papers (L1 Htr3a; L2/3, L4, L5, L6 x Exc, PV, SST,
// VIP); the pop_names follow the Allen V1 model's naming (layer digits after the e/i letter, marker gene after),
// so that the papers' pop_name -> cell type rule maps each onto its type. Dynamics are the five Allen GLIF3
// models of kCellTypes (`glif`): E types use the three E models, PV types 478958894, the other interneurons
// 487667205. The V1 model's own per-type GLIF fits and cell counts are not bundled.

struct Layer {
  const char* name;
  double top, bottom;  // depth below the pia (um); y = -depth
};
constexpr int kNumLayers = 5;
extern const Layer kLayers[kNumLayers];

struct VisualType {
  int node_type_id;
  const char* pop_name;
  const char* cell_type;  // the papers' type name, e.g. "L2/3 PV"
  int layer;              // index into kLayers
  int glif;               // index into kCellTypes
  double share;           // weight of the type within its E or I group
  // LGN -> V1 rule, the target population's row of the V1 model's lgn_params.json
  double lgn_poisson;    // poissonParameter: mean of the cell's temporal-frequency draw
  double lgn_yule;       // yuleParameter: Yule-Simon exponent of the synapses per connection
  double lgn_syn_ratio;  // synapse_ratio_against_e4: LGN synapses relative to an L4 Exc cell
  double lgn_son_ratio;  // sON_ratio: probability that the sustained subfield is ON
};
constexpr int kNumVisualTypes = 17;
extern const VisualType kVisualTypes[kNumVisualTypes];

// ---------------------------------------------------------------------------------------------------------------
// LGN filter classes and their fitted temporal filters (two cosine bumps: weights, peak times, delays).

struct LgnTemplate {
  const char* name;
  double weight[2], kpeaks[2], delay[2];
};
constexpr int kNumLgnTemplates = 12;
extern const LgnTemplate kLgnTemplates[kNumLgnTemplates];

enum class LgnKind { SustainedOn, SustainedOff, TransientOff, Composite };

struct LgnClass {
  const char* pop_name;
  int per_tile;  // units per 8 x 8 degree tile
  double min_size, max_size;
  LgnKind kind;
  double tf;      // temporal frequency (Hz) in the class name; 0 for the composite classes
  int dom;        // index into kLgnTemplates of the (dominant) subunit
  int non_dom;    // of the non-dominant (ON) subunit of a composite class; -1 otherwise
  double sf_sep;  // nominal subfield separation (degrees) of a composite class; 0 otherwise
};
constexpr int kNumLgnClasses = 14;
extern const LgnClass kLgnClasses[kNumLgnClasses];
constexpr int kLgnUnitsPerTile = 116;  // sum of per_tile
constexpr int kLgnNodeTypeBase = 200;  // node_type_id of class c = 200 + c

// Screen and tiles (degrees): the full LGN tiles the 120 x 80 screen with 15 x 10 tiles; a smaller LGN is a
// block of tiles centred on the screen centre.
constexpr double kLgnTileDeg = 8.0;
constexpr int kLgnMaxTilesX = 15, kLgnMaxTilesY = 10;
constexpr double kScreenCentreX = 60.0, kScreenCentreY = 40.0;
constexpr double kLgnJitter = 0.025;  // temporal parameters x U(1 - j, 1 + j)

// ---------------------------------------------------------------------------------------------------------------
// LGN -> V1 rule constants (lgn_edges.cpp).
constexpr double kDegPerUmX = 0.07, kDegPerUmZ = 0.04;  // cortex (x, z) -> visual field (azimuth, elevation)
constexpr double kLgnPoolRadius = 40.0;                 // candidate LGN units: RF centre within this of the cell's
constexpr double kLgnSubfieldShift = 2.5;               // subfield offset along the tuning direction (degrees)
constexpr double kLgnAspectRatio = 1.5;                 // subfield elongation (orthogonal to the offset)
constexpr double kLgnGaussRadius = 5.0;                 // sigma of the distance weight (degrees)
constexpr double kLgnOrientationWindow = 15.0;          // composite units within this of the cell's orientation
constexpr double kE4LgnSynapses = 500.0;                // mean LGN synapses of an L4 Exc cell
constexpr double kVisualColumnRadius = 400.0;           // default radius (um), reduced to fit a smaller LGN

// LGN -> V1 synapse types of visual networks: the weight is per synapse (edges carry nsyns); the means spread
// the default projection's total (30 inputs of kLgnTypes) over an L4 Exc cell's kE4LgnSynapses synapses.
extern const SynType kVisualLgnTypes[2];  // index = (target is I)

}  // namespace dpointnet::generator
