#include "dpointnet/generator/visual_types.hpp"

namespace dpointnet::generator {

// Approximate mouse V1 layer depths (um below the pia), a choice of this generator.
const Layer kLayers[kNumLayers] = {
    {"L1", 0, 100}, {"L2/3", 100, 310}, {"L4", 310, 430}, {"L5", 430, 650}, {"L6", 650, 850},
};

// Shares (this generator's choice; the V1 model's cell counts are not bundled): the E types split the 80 % E
// neurons in proportion to their layer's thickness (uniform density); the I types split the 20 % I neurons in
// proportion to layer thickness x class share, with L1 all Htr3a and PV : SST : VIP = 0.4 : 0.3 : 0.3 in L2/3-L6
// (the usual cortical interneuron proportions).
//
// LGN columns: base_props/lgn_params.json of AllenInstitute/biorealistic-v1-model @
// 44819cb89104b789e4e76382ff6b6cbac9027cd5, rows i1Htr3a, e23, i23Pvalb, i23Sst, i23Vip, e4, i4Pvalb, i4Sst, i4Vip,
// e5IT (for e5Rbp4, the Billeh et al. 2020 name of the L5 Exc population; IT is the largest L5 Exc class of the newer
// model), i5Pvalb, i5Sst, i5Vip, e6, i6Pvalb, i6Sst, i6Vip.
const VisualType kVisualTypes[kNumVisualTypes] = {
    {110, "i1Htr3a", "L1 Htr3a", 0, 4, 100, 2.0, 4.1, 0.099, 0.75},
    {111, "e23Cux2", "L2/3 Exc", 1, 1, 210, 1.5, 2.8, 0.60, 0.90},
    {112, "i23Pvalb", "L2/3 PV", 1, 3, 84, 2.0, 2.4, 0.90, 0.75},
    {113, "i23Sst", "L2/3 SST", 1, 4, 63, 2.0, 3.6, 0.25, 0.75},
    {114, "i23Vip", "L2/3 VIP", 1, 4, 63, 2.0, 4.1, 0.42, 0.75},
    {115, "e4Scnn1a", "L4 Exc", 2, 0, 120, 2.0, 3.1, 1.0, 0.90},
    {116, "i4Pvalb", "L4 PV", 2, 3, 48, 2.0, 2.4, 2.76, 0.75},
    {117, "i4Sst", "L4 SST", 2, 4, 36, 2.0, 3.6, 0.96, 0.75},
    {118, "i4Vip", "L4 VIP", 2, 4, 36, 2.0, 4.1, 0.78, 0.75},
    {119, "e5Rbp4", "L5 Exc", 3, 2, 220, 1.5, 4.0, 0.35, 0.50},
    {120, "i5Pvalb", "L5 PV", 3, 3, 88, 2.0, 2.4, 1.42, 0.50},
    {121, "i5Sst", "L5 SST", 3, 4, 66, 2.0, 3.6, 0.49, 0.50},
    {122, "i5Vip", "L5 VIP", 3, 4, 66, 2.0, 4.1, 0.27, 0.50},
    {123, "e6Ntsr1", "L6 Exc", 4, 1, 200, 1.5, 3.4, 0.11, 0.90},
    {124, "i6Pvalb", "L6 PV", 4, 3, 80, 2.0, 2.4, 0.20, 0.75},
    {125, "i6Sst", "L6 SST", 4, 4, 60, 2.0, 3.6, 0.080, 0.75},
    {126, "i6Vip", "L6 VIP", 4, 4, 60, 2.0, 4.1, 0.025, 0.75},
};

// opt_wts, opt_kpeaks, opt_delays of base_props/filter_components/model_templates/<name>_ic.json of
// AllenInstitute/biorealistic-v1-model @ 330276625b95462710bc57791b6e8b077d2f0ff6 (copied in the project's shared
// data as data/lgn/filter_components/model_templates/; the same numbers as the builder's lgn_fitted_models pickles).
const LgnTemplate kLgnTemplates[kNumLgnTemplates] = {
    {"sON_TF1_3.5_-2.0_50.0_140.0_15.0",
     {1.0000309341936413, -0.4461605742545549},
     {56.52557576288437, 137.4409331206289},
     {0, 15}},
    {"sON_TF2_3.5_-2.0_50.0_140.0_5.0",
     {4.28233151216993, -1.427545109507161},
     {31.208438436597525, 137.0623970626708},
     {0, 5}},
    {"sON_TF4_3.5_-2.0_30.0_60.0_25.0",
     {3.59404059587911, -1.8145831206023941},
     {30.758868538755, 58.35845979325414},
     {0, 25}},
    {"sON_TF8_3.5_-2.0_10.0_20.0_25.0",
     {3.7052596759285548, -1.7538397094416842},
     {12.941033214060901, 28.27807659299407},
     {0, 25}},
    {"sOFF_TF1_3.5_-2.0_50.0_140.0_5.0",
     {2.114240294638181, -1.2215255706921226},
     {54.48070427796576, 127.92115511653763},
     {0, 5}},
    {"sOFF_TF2_3.5_-2.0_10.0_100.0_25.0",
     {3.1825793747512723, -1.1407120251016956},
     {19.84561654687027, 92.02360682394006},
     {0, 25}},
    {"sOFF_TF4_3.5_-2.0_10.0_60.0_15.0",
     {3.229814878308509, -1.6587975171052909},
     {22.246197660260687, 56.10036268151849},
     {0, 15}},
    {"sOFF_TF8_3.5_-2.0_10.0_60.0_15.0",
     {3.250647903236935, -1.683809890149441},
     {18.03400571601442, 51.21537412884131},
     {0, 15}},
    {"sOFF_TF15_6.23741017_-2.1430682_4.59332686_20.0_5.0",
     {10.0, -3.260571234217411},
     {4.73623985160301, 21.59707569315522},
     {0, 5}},
    {"tOFF_TF4_3.5_-2.0_30.0_60.0_15.0",
     {3.3459807668160377, -2.1819897785340467},
     {29.15797185312565, 59.36268031326181},
     {0, 15}},
    {"tOFF_TF8_4.222_-2.404_8.545_23.019_0.0",
     {4.21848979193672, -2.404989833331929},
     {8.524645232832142, 23.246816713624384},
     {0, 0}},
    {"tOFF_TF15_3.44215357_-2.11509939_8.27421573_20.0_0.0",
     {3.4416603571978417, -2.1155994819051305},
     {8.269733598229024, 19.99148791096526},
     {0, 0}},
};

// base_props/lgn_models.csv (class, N per tile, min_size, max_size) of the same commit, in its row order (= the
// builder's node order). The composite classes take their dominant (OFF) subunit from the sOFF_TF4 / tOFF_TF8
// fits and the non-dominant (ON) one from sON_TF4, with sf_sep 6 / 4 (node_funcs.py:79-193 of that commit).
const LgnClass kLgnClasses[kNumLgnClasses] = {
    {"sON_TF1", 7, 2, 9, LgnKind::SustainedOn, 1, 0, -1, 0},
    {"sON_TF2", 5, 2, 9, LgnKind::SustainedOn, 2, 1, -1, 0},
    {"sON_TF4", 7, 2, 9, LgnKind::SustainedOn, 4, 2, -1, 0},
    {"sON_TF8", 15, 2, 9, LgnKind::SustainedOn, 8, 3, -1, 0},
    {"sOFF_TF1", 8, 2, 9, LgnKind::SustainedOff, 1, 4, -1, 0},
    {"sOFF_TF2", 8, 2, 9, LgnKind::SustainedOff, 2, 5, -1, 0},
    {"sOFF_TF4", 15, 2, 9, LgnKind::SustainedOff, 4, 6, -1, 0},
    {"sOFF_TF8", 8, 2, 9, LgnKind::SustainedOff, 8, 7, -1, 0},
    {"sOFF_TF15", 7, 2, 9, LgnKind::SustainedOff, 15, 8, -1, 0},
    {"tOFF_TF4", 10, 2, 9, LgnKind::TransientOff, 4, 9, -1, 0},
    {"tOFF_TF8", 5, 2, 9, LgnKind::TransientOff, 8, 10, -1, 0},
    {"tOFF_TF15", 8, 2, 9, LgnKind::TransientOff, 15, 11, -1, 0},
    {"sONsOFF_001", 8, 6, 6, LgnKind::Composite, 0, 6, 2, 6.0},
    {"sONtOFF_001", 5, 9, 9, LgnKind::Composite, 0, 10, 2, 4.0},
};

// 16 pA x 30 / 500 and 13 pA x 30 / 500 (kLgnTypes, the default lgn_per_neuron, kE4LgnSynapses).
const SynType kVisualLgnTypes[2] = {
    {200, "ei=='e'", "*", "LGN_to_GLIF.json", 1, 0.96, 1.7},
    {201, "ei=='i'", "*", "LGN_to_GLIF.json", 1, 0.78, 1.7},
};

}  // namespace dpointnet::generator
