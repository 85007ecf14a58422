// V1-like SONATA network generator (see docs/generator.md).
//
// Layout written (SONATA.md sections 2, 3): one nodes file and one node-types CSV per population (v1, lgn, bkg),
// one edges file and one edge-types CSV per projection (v1->v1, lgn->v1, bkg->v1), the GLIF3 and synapse
// component JSONs, a circuit config and a simulation config.
//
// Randomness: the generator has its own streams, std::mt19937_64 seeded from (options.seed, purpose) through
// splitmix64; one stream per purpose (node placement, topology and weights of each projection), so that e.g.
// changing a weight constant keeps the topology. All distributions are implemented here (not std::*_distribution,
// whose output is library-specific), so a seed and a set of options give the same network with any standard
// library; only libm's log/exp/sqrt/cos could differ in the last bit between platforms.
//
// Memory: edges are generated target by target into flat columns (source uint32, type uint8, weight and delay
// float64: 21 bytes per edge), then written dataset by dataset; 200,000 x 370 synapses (74 M edges) peaks at
// about 3 GB.
#include "generator/network_generator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "io/hdf5_file.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

namespace dpointnet {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------------------------
// Cell types: the five Allen GLIF3 models of BMTK's examples/point_components (NEST-native glif_psc parameters,
// copied verbatim; md5 as in SONATA.md 5.3). 80 % of the neurons are excitatory (split evenly over the three
// E types), 20 % inhibitory (split evenly over the two PV types); node ids are assigned in type blocks.

struct CellType {
  int node_type_id;
  const char* pop_name;
  char ei;
  const char* file;
  const char* json_text;
};

const CellType kCellTypes[] = {
    {100, "Scnn1a", 'e', "593618144_glif_lif_asc_psc.json",
     R"json({
  "V_m": -69.4755859375,
  "V_th": -46.40370561385434,
  "g": 5.875377136608159,
  "E_L": -69.4755859375,
  "C_m": 58.60769058316611,
  "t_ref": 2.6000000000000005,
  "V_reset": -69.4755859375,
  "asc_init": [
    0.0,
    0.0
  ],
  "asc_decay": [
    0.1,
    0.3
  ],
  "asc_amps": [
    -36.93387266,
    -65.30848816
  ],
  "tau_syn": [
    5.5,
    8.5,
    2.8,
    5.8
  ],
  "spike_dependent_threshold": false,
  "after_spike_currents": true,
  "adapting_threshold": false
}
)json"},
    {101, "Rorb", 'e', "480124551_glif_lif_asc_psc.json",
     R"json({
  "V_m": -73.30062357584633,
  "V_th": -37.57837016608795,
  "g": 6.846284605100222,
  "E_L": -73.30062357584633,
  "C_m": 52.353697808027725,
  "t_ref": 3.2,
  "V_reset": -73.30062357584633,
  "asc_init": [0.0, 0.0], "asc_decay": [0.003, 0.1  ], "asc_amps": [ -10.17435274, -119.53883788], "tau_syn": [5.5, 8.5, 2.8, 5.8], "spike_dependent_threshold": false, "after_spike_currents": true, "adapting_threshold": false}
)json"},
    {102, "Nr5a1", 'e', "318808427_glif_lif_asc_psc.json",
     R"json({
  "V_m": -76.1691640218099,
  "V_th": -40.8824438029048,
  "g": 3.93819351064843,
  "E_L": -76.1691640218099,
  "C_m": 68.14035162092856,
  "t_ref": 2.4000000000000004,
  "V_reset": -76.1691640218099,
  "asc_init": [
    0.0,
    0.0
  ],
  "asc_decay": [
    0.003,
    0.1
  ],
  "asc_amps": [
    -13.00889622,
    -200.00774016
  ],
  "tau_syn": [
    5.5,
    8.5,
    2.8,
    5.8
  ],
  "spike_dependent_threshold": false,
  "after_spike_currents": true,
  "adapting_threshold": false
}
)json"},
    {103, "PV1", 'i', "478958894_glif_lif_asc_psc.json",
     R"json({
  "V_m": -70.45950889587401,
  "V_th": -44.23152364988978,
  "g": 9.195230009748064,
  "E_L": -70.45950889587401,
  "C_m": 81.21058405283176,
  "t_ref": 1.5,
  "V_reset": -70.45950889587401,
  "asc_init": [
    0.0,
    0.0
  ],
  "asc_decay": [
    0.003,
    0.3
  ],
  "asc_amps": [
    -4.08182729,
    -291.97668209
  ],
  "tau_syn": [
    5.5,
    8.5,
    2.8,
    5.8
  ],
  "spike_dependent_threshold": false,
  "after_spike_currents": true,
  "adapting_threshold": false
}
)json"},
    {104, "PV2", 'i', "487667205_glif_lif_asc_psc.json",
     R"json({"V_m": -72.08961296081546, "V_th": -45.793386052222445, "g": 7.5964352092785585, "E_L": -72.08961296081546, "C_m": 64.02349624649017, "t_ref": 1.4, "V_reset": -72.08961296081546, "asc_init": [0.0, 0.0], "asc_decay": [0.003, 0.3  ], "asc_amps": [-3.28747057, 63.80635645], "tau_syn": [5.5, 8.5, 2.8, 5.8], "spike_dependent_threshold": false, "after_spike_currents": true, "adapting_threshold": false}
)json"},
};
constexpr int kNumCellTypes = 5;
constexpr int kNumExcTypes = 3;
constexpr double kExcFraction = 0.8;
constexpr int kLgnNodeType = 200;
constexpr int kBkgNodeType = 300;

// Geometry (um): a cylinder of radius 400 um around the y axis (y = cortical depth, negative below the pia).
constexpr double kColumnRadius = 400.0;
constexpr double kDepthTop = -100.0, kDepthBottom = -500.0;

// ---------------------------------------------------------------------------------------------------------------
// Synapses. Weights are peak PSC amplitudes in pA (SONATA.md 3.4), given here for a target whose rheobase current
// g * (V_th - E_L) equals the mean rheobase of the five types (about 192 pA); every drawn weight is multiplied
// by rheobase(target type) / mean rheobase, so that a given input moves every cell type by the same fraction of
// its threshold gap (MODEL.md 2 normalizes by V_th - E_L in the same spirit). Magnitudes are log-normal with
// mean `weight_pA` and coefficient of variation kWeightCv, truncated (by redrawing) to [mean/3, 3 * mean].
//
// Why these values (details, and the runs behind them, in docs/generator.md): with ~370 recurrent inputs (296 E,
// 74 I) the recurrent charge is large even for small PSCs: at 5 Hz, 296 E inputs of 1 pA (tau 5.5 ms) give
// 296 * 0.005/ms * 1 pA * e * 5.5 ms = 22 pA of mean current, i.e. ~12 % of the rheobase. Literature-scale single
// connection weights (E->E 2-6 pA, I->E 10-25 pA) were run through the Python oracle (regression/) with these
// inputs: they either run away (E and I near 300 Hz when I->E is too weak) or produce 15-20 Hz population bursts
// with silent gaps (pop-rate CV > 1). The values below keep an inhibition-dominated state (summed over a
// neuron's inputs, I->E charge per unit presynaptic rate is 74 * 5 pA * 8.5 ms = 1.9x the E->E 296 * 1 pA * 5.5 ms)
// that stays asynchronous at about 9-12 Hz for N = 300 .. 50,000.
// The external drive alone (no recurrence) gives about 19 Hz; LGN and background weights are slightly lower for
// I targets so that PV cells are not driven independently of the E population.

struct SynType {
  int edge_type_id;
  const char* target_query;
  const char* source_query;
  const char* dynamics_params;
  int receptor;      // glif_psc port (1-based): 1 = 5.5 ms, 2 = 8.5 ms, 3 = 2.8 ms, 4 = 5.8 ms
  double weight_pA;  // signed mean peak PSC at the reference rheobase
  double delay_ms;   // CSV value (the per-edge h5 delay overrides it)
};

// Recurrent: index = 2 * (source is I) + (target is I).
const SynType kRecurrentTypes[4] = {
    {100, "ei=='e'", "ei=='e'", "e2e.json", 1, 1.0, 2.8},
    {101, "ei=='i'", "ei=='e'", "e2i.json", 3, 2.0, 2.8},
    {102, "ei=='e'", "ei=='i'", "i2e.json", 2, -5.0, 2.8},
    {103, "ei=='i'", "ei=='i'", "i2i.json", 4, -4.0, 2.8},
};
// Inputs: index = (target is I).
const SynType kLgnTypes[2] = {
    {200, "ei=='e'", "*", "LGN_to_GLIF.json", 1, 16.0, 1.7},
    {201, "ei=='i'", "*", "LGN_to_GLIF.json", 1, 13.0, 1.7},
};
const SynType kBkgTypes[2] = {
    {300, "ei=='e'", "*", "BKG_to_GLIF.json", 1, 10.0, 1.0},
    {301, "ei=='i'", "*", "BKG_to_GLIF.json", 1, 8.0, 1.0},
};
constexpr double kWeightCv = 0.5;
constexpr double kWeightTruncation = 3.0;

// Recurrent delay = 1 ms + distance / kAxonVelocity + U(0, kDelayJitter), limited to [max(1 ms, dt), 5 ms].
constexpr double kAxonVelocity = 300.0;  // um/ms (0.3 m/s, unmyelinated intracortical axons)
constexpr double kDelayJitter = 1.0;     // ms
constexpr double kMaxDelay = 5.0;        // ms

// Limits that keep the generator within memory and the SONATA index types.
constexpr std::int64_t kMinNeurons = 10, kMaxNeurons = 200000;
constexpr double kMaxEdgesPerProjection = 4.0e8;  // about 8.4 GB of columns; edge_group_index is uint32
constexpr std::int64_t kMaxVirtualNodes = 10000000;

// ---------------------------------------------------------------------------------------------------------------
// Random numbers.

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

enum Purpose : std::uint64_t {
  kPurposeNodes = 1,
  kPurposeRecurrentTopology = 2,
  kPurposeRecurrentWeights = 3,
  kPurposeLgnTopology = 4,
  kPurposeLgnWeights = 5,
  kPurposeBkgTopology = 6,
  kPurposeBkgWeights = 7,
};

class Rng {
 public:
  Rng(std::uint32_t seed, Purpose purpose)
      : eng_(splitmix64(splitmix64(static_cast<std::uint64_t>(seed)) ^ (static_cast<std::uint64_t>(purpose) << 56))) {}
  double uniform() { return static_cast<double>(eng_() >> 11) * 0x1.0p-53; }            // [0, 1)
  double uniform_pos() { return static_cast<double>((eng_() >> 11) + 1) * 0x1.0p-53; }  // (0, 1]
  std::uint64_t below(std::uint64_t n) {                                                // uniform in 0..n-1, unbiased
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t limit = max - (max % n + 1) % n;  // accept x <= limit: (limit + 1) is a multiple of n
    std::uint64_t x;
    do {
      x = eng_();
    } while (x > limit);
    return x % n;
  }
  double normal() {  // Box-Muller, one value per call
    const double r = std::sqrt(-2.0 * std::log(uniform_pos()));
    return r * std::cos(6.283185307179586 * uniform());
  }

 private:
  std::mt19937_64 eng_;
};

// Calls f(c) for each c in 0..n-1 independently with probability p, in increasing order, by geometric skips
// (cost proportional to the number of picks).
template <class F>
void bernoulli_subset(Rng& rng, std::uint64_t n, double p, F&& f) {
  if (n == 0 || !(p > 0)) return;
  if (p >= 1.0) {
    for (std::uint64_t c = 0; c < n; ++c) f(c);
    return;
  }
  const double inv_log_q = 1.0 / std::log1p(-p);
  std::uint64_t c = 0;
  bool first = true;
  for (;;) {
    const double skip = std::floor(std::log(rng.uniform_pos()) * inv_log_q);
    if (!(skip < static_cast<double>(n))) return;
    const std::uint64_t step = static_cast<std::uint64_t>(skip) + (first ? 0 : 1);
    if (step >= n - c) return;
    c += step;
    first = false;
    f(c);
  }
}

class WeightSampler {
 public:
  explicit WeightSampler(double cv) : sigma_(std::sqrt(std::log1p(cv * cv))), mu_(-0.5 * sigma_ * sigma_) {}
  // Magnitude with mean `mean` (> 0), truncated to [mean / T, mean * T].
  double draw(Rng& rng, double mean) const {
    for (int k = 0; k < 32; ++k) {
      const double x = mean * std::exp(mu_ + sigma_ * rng.normal());
      if (x >= mean / kWeightTruncation && x <= mean * kWeightTruncation) return x;
    }
    return mean;
  }

 private:
  double sigma_, mu_;
};

// ---------------------------------------------------------------------------------------------------------------
// Options.

[[noreturn]] void bad_option(const std::string& option, const std::string& flag, const std::string& what) {
  throw InputError("generate: option " + option + " (" + flag + "): " + what);
}

std::string num(double v) {
  std::ostringstream s;
  s.precision(10);
  s << v;
  return s.str();
}

struct Plan {
  std::int64_t n = 0, n_exc = 0;
  std::int64_t type_count[kNumCellTypes] = {0, 0, 0, 0, 0};
  std::int64_t n_lgn = 0, n_bkg = 0;
  double k_rec = 0;  // effective mean recurrent in-degree
  double k_lgn = 0;  // effective mean LGN in-degree
  std::int64_t k_bkg = 0;
  double min_delay = 1.0;
};

Plan validate(const GeneratorOptions& o) {
  Plan p;
  if (o.out_dir.empty()) bad_option("out_dir", "--out", "must name a directory");
  if (o.n_neurons < kMinNeurons || o.n_neurons > kMaxNeurons)
    bad_option("n_neurons", "--neurons",
               "must be in " + std::to_string(kMinNeurons) + ".." + std::to_string(kMaxNeurons) + ", got " +
                   std::to_string(o.n_neurons));
  p.n = o.n_neurons;
  if (!std::isfinite(o.synapses_per_neuron) || !(o.synapses_per_neuron > 0))
    bad_option("synapses_per_neuron", "--synapses-per-neuron",
               "must be a finite number > 0, got " + num(o.synapses_per_neuron));
  p.k_rec = std::min(o.synapses_per_neuron, static_cast<double>(p.n - 1));
  if (static_cast<double>(p.n) * p.k_rec > kMaxEdgesPerProjection)
    bad_option("synapses_per_neuron", "--synapses-per-neuron",
               "n_neurons * synapses_per_neuron = " + num(static_cast<double>(p.n) * p.k_rec) +
                   " recurrent edges exceeds the generator's limit of " + num(kMaxEdgesPerProjection));
  if (o.n_lgn < 0 || o.n_lgn > kMaxVirtualNodes)
    bad_option("n_lgn", "--lgn",
               "must be 0 (automatic) or 1.." + std::to_string(kMaxVirtualNodes) + ", got " + std::to_string(o.n_lgn));
  p.n_lgn = o.n_lgn > 0 ? o.n_lgn : std::max<std::int64_t>(10, (p.n + 2) / 4);
  if (!std::isfinite(o.lgn_per_neuron) || !(o.lgn_per_neuron > 0))
    bad_option("lgn_per_neuron", "--lgn-per-neuron", "must be a finite number > 0, got " + num(o.lgn_per_neuron));
  p.k_lgn = std::min(o.lgn_per_neuron, static_cast<double>(p.n_lgn));
  if (static_cast<double>(p.n) * p.k_lgn > kMaxEdgesPerProjection)
    bad_option("lgn_per_neuron", "--lgn-per-neuron",
               "too many LGN edges (" + num(static_cast<double>(p.n) * p.k_lgn) + ")");
  if (o.n_bkg < 1 || o.n_bkg > kMaxVirtualNodes)
    bad_option("n_bkg", "--bkg",
               "must be in 1.." + std::to_string(kMaxVirtualNodes) + ", got " + std::to_string(o.n_bkg));
  p.n_bkg = o.n_bkg;
  if (o.bkg_per_neuron < 1 || o.bkg_per_neuron > p.n_bkg)
    bad_option("bkg_per_neuron", "--bkg-per-neuron",
               "must be in 1..n_bkg (" + std::to_string(p.n_bkg) + "), got " + std::to_string(o.bkg_per_neuron));
  p.k_bkg = o.bkg_per_neuron;
  if (static_cast<double>(p.n) * static_cast<double>(p.k_bkg) > kMaxEdgesPerProjection)
    bad_option("bkg_per_neuron", "--bkg-per-neuron", "too many background edges");
  if (!std::isfinite(o.dt) || !(o.dt > 0) || o.dt > kMaxDelay)
    bad_option("dt", "--dt", "must be > 0 and <= " + num(kMaxDelay) + " ms, got " + num(o.dt));
  if (!std::isfinite(o.tstop) || !(o.tstop >= o.dt))
    bad_option("tstop", "--tstop", "must be a finite number >= dt, got " + num(o.tstop));
  {
    const double steps = std::round(o.tstop / o.dt);
    if (std::fabs(steps * o.dt - o.tstop) > 1e-6 * o.dt)
      bad_option("tstop", "--tstop",
                 "must be a whole number of steps of dt (" + num(o.dt) + " ms), got " + num(o.tstop));
  }
  if (!std::isfinite(o.lgn_rate_hz) || !(o.lgn_rate_hz > 0))
    bad_option("lgn_rate_hz", "--lgn-rate", "must be a finite rate > 0 Hz, got " + num(o.lgn_rate_hz));
  if (!std::isfinite(o.bkg_rate_hz) || !(o.bkg_rate_hz > 0))
    bad_option("bkg_rate_hz", "--bkg-rate", "must be a finite rate > 0 Hz, got " + num(o.bkg_rate_hz));

  std::error_code ec;
  const fs::path out(o.out_dir);
  if (fs::exists(out, ec)) {
    if (!fs::is_directory(out, ec)) bad_option("out_dir", "--out", "'" + o.out_dir + "' exists and is not a directory");
    if (!o.overwrite && !fs::is_empty(out, ec))
      bad_option("out_dir", "--out",
                 "directory '" + o.out_dir + "' exists and is not empty (use --overwrite to replace its files)");
  }

  p.n_exc = std::llround(kExcFraction * static_cast<double>(p.n));
  const std::int64_t n_inh = p.n - p.n_exc;
  for (int t = 0; t < kNumExcTypes; ++t)
    p.type_count[t] = p.n_exc / kNumExcTypes + (t < p.n_exc % kNumExcTypes ? 1 : 0);
  const int n_inh_types = kNumCellTypes - kNumExcTypes;
  for (int t = 0; t < n_inh_types; ++t)
    p.type_count[kNumExcTypes + t] = n_inh / n_inh_types + (t < n_inh % n_inh_types ? 1 : 0);
  p.min_delay = std::max(1.0, o.dt);
  return p;
}

// ---------------------------------------------------------------------------------------------------------------
// Small writers.

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(path.string(), "", "", "cannot create file");
  out << text;
  out.close();
  if (!out) throw InputError(path.string(), "", "", "cannot write file");
}

// Nodes file: /nodes/<pop>/{node_id, node_type_id, node_group_id, node_group_index} and group 0 with `props`.
void write_nodes_file(const fs::path& path, const std::string& pop, const std::vector<std::uint64_t>& node_type_id,
                      const std::vector<std::pair<std::string, std::vector<double>>>& props, bool overwrite) {
  auto f = h5::File::create(path.string(), overwrite);
  f.write_sonata_header();
  const std::string base = "/nodes/" + pop;
  const std::size_t n = node_type_id.size();
  std::vector<std::uint64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = i;
  f.create_group(base + "/0");
  f.write_uint64(base + "/node_id", ids);
  f.write_uint64(base + "/node_type_id", node_type_id);
  f.write_uint32(base + "/node_group_id", std::vector<std::uint32_t>(n, 0));
  f.write_uint64(base + "/node_group_index", ids);
  for (const auto& [name, values] : props) f.write_double(base + "/0/" + name, values);
}

// Edges of one projection, sorted by target, in flat columns.
struct EdgeSet {
  std::vector<std::uint32_t> source;
  std::vector<std::uint64_t> target_offset;  // [n_target + 1]: edges of target t are rows offset[t]..offset[t+1)
  std::vector<std::uint8_t> type_index;      // index into the projection's SynType table
  std::vector<double> weight, delay;

  std::size_t size() const { return source.size(); }
  void reserve(std::size_t n, std::size_t n_target) {
    source.reserve(n);
    type_index.reserve(n);
    weight.reserve(n);
    delay.reserve(n);
    target_offset.reserve(n_target + 1);
    target_offset.assign(1, 0);
  }
  void push(std::uint32_t s, std::uint8_t t, double w, double d) {
    source.push_back(s);
    type_index.push_back(t);
    weight.push_back(w);
    delay.push_back(d);
  }
  void end_target() { target_offset.push_back(source.size()); }
};

std::size_t reserve_estimate(double n_targets, double mean_in_degree) {
  const double mean = n_targets * mean_in_degree;
  return static_cast<std::size_t>(mean + 6.0 * std::sqrt(mean) + 16.0);
}

// SONATA index groups (SONATA.md 3.1): node_id_to_range [n, 2] are half-open row ranges of range_to_edge_id,
// whose rows are half-open edge ranges. Edges are sorted by target, so target_to_source has one range per
// target with edges; source_to_target merges consecutive edge ids of a source into one range.
void write_indices(h5::File& f, const std::string& base, const EdgeSet& e, std::uint64_t n_source,
                   std::uint64_t n_target) {
  {
    std::vector<std::uint64_t> n2r(2 * n_target), r2e;
    r2e.reserve(2 * n_target);
    std::uint64_t rows = 0;
    for (std::uint64_t t = 0; t < n_target; ++t) {
      const std::uint64_t a = e.target_offset[t], b = e.target_offset[t + 1];
      n2r[2 * t] = rows;
      if (b > a) {
        r2e.push_back(a);
        r2e.push_back(b);
        ++rows;
      }
      n2r[2 * t + 1] = rows;
    }
    f.write_uint64_2d(base + "/indices/target_to_source/node_id_to_range", n2r, n_target, 2);
    f.write_uint64_2d(base + "/indices/target_to_source/range_to_edge_id", r2e, rows, 2);
  }
  {
    const std::size_t n_edges = e.size();
    std::vector<std::uint64_t> start(n_source + 1, 0);
    for (std::uint32_t s : e.source) ++start[s + 1];
    for (std::uint64_t s = 0; s < n_source; ++s) start[s + 1] += start[s];
    std::vector<std::uint32_t> order(n_edges);  // edge ids grouped by source, ascending within a source
    {
      std::vector<std::uint64_t> fill(start.begin(), start.end() - 1);
      for (std::size_t i = 0; i < n_edges; ++i) order[fill[e.source[i]]++] = static_cast<std::uint32_t>(i);
    }
    std::uint64_t rows = 0;
    for (std::uint64_t s = 0; s < n_source; ++s)
      for (std::uint64_t k = start[s]; k < start[s + 1]; ++k)
        if (k == start[s] || order[k] != order[k - 1] + 1) ++rows;
    std::vector<std::uint64_t> n2r(2 * n_source), r2e(2 * rows);
    std::uint64_t row = 0;
    for (std::uint64_t s = 0; s < n_source; ++s) {
      n2r[2 * s] = row;
      for (std::uint64_t k = start[s]; k < start[s + 1]; ++k) {
        if (k == start[s] || order[k] != order[k - 1] + 1) {
          r2e[2 * row] = order[k];
          ++row;
        }
        r2e[2 * (row - 1) + 1] = static_cast<std::uint64_t>(order[k]) + 1;
      }
      n2r[2 * s + 1] = row;
    }
    order.clear();
    order.shrink_to_fit();
    f.write_uint64_2d(base + "/indices/source_to_target/node_id_to_range", n2r, n_source, 2);
    f.write_uint64_2d(base + "/indices/source_to_target/range_to_edge_id", r2e, rows, 2);
  }
}

struct Projection {
  std::string file, population, source_pop, target_pop;
  std::uint64_t n_source = 0, n_target = 0;
  const SynType* types = nullptr;
  int n_types = 0;
};

// Writes the edges file and frees the columns as it goes.
void write_edges_file(const fs::path& path, const Projection& pr, EdgeSet& e, bool overwrite, bool gzip) {
  auto f = h5::File::create(path.string(), overwrite);
  f.write_sonata_header();
  const std::string base = "/edges/" + pr.population;
  const std::size_t n = e.size();
  f.create_group(base + "/0");
  {
    std::vector<std::uint64_t> v(e.source.begin(), e.source.end());
    f.write_uint64(base + "/source_node_id", v, gzip);
  }
  f.write_attr_string(base + "/source_node_id", "node_population", pr.source_pop);
  {
    std::vector<std::uint64_t> v(n);
    for (std::uint64_t t = 0; t < pr.n_target; ++t)
      std::fill(v.begin() + static_cast<std::ptrdiff_t>(e.target_offset[t]),
                v.begin() + static_cast<std::ptrdiff_t>(e.target_offset[t + 1]), t);
    f.write_uint64(base + "/target_node_id", v, gzip);
  }
  f.write_attr_string(base + "/target_node_id", "node_population", pr.target_pop);
  {
    std::vector<std::uint32_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint32_t>(pr.types[e.type_index[i]].edge_type_id);
    f.write_uint32(base + "/edge_type_id", v, gzip);
    std::vector<std::uint8_t>().swap(e.type_index);
    f.write_uint16(base + "/edge_group_id", std::vector<std::uint16_t>(n, 0), gzip);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint32_t>(i);
    f.write_uint32(base + "/edge_group_index", v, gzip);
    std::fill(v.begin(), v.end(), 1u);
    f.write_uint32(base + "/0/nsyns", v, gzip);
  }
  f.write_double(base + "/0/syn_weight", e.weight, gzip);
  std::vector<double>().swap(e.weight);
  f.write_double(base + "/0/delay", e.delay, gzip);
  std::vector<double>().swap(e.delay);
  write_indices(f, base, e, pr.n_source, pr.n_target);
}

std::string edge_types_csv(const SynType* types, int n) {
  std::ostringstream s;
  s << "edge_type_id target_query source_query model_template syn_weight dynamics_params delay\n";
  for (int i = 0; i < n; ++i)
    s << types[i].edge_type_id << ' ' << types[i].target_query << ' ' << types[i].source_query << " static_synapse "
      << num(types[i].weight_pA) << ' ' << types[i].dynamics_params << ' ' << num(types[i].delay_ms) << '\n';
  return s.str();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void generate_network(const GeneratorOptions& opt) {
  const Plan plan = validate(opt);  // throws before anything is written
  const auto t_start = std::chrono::steady_clock::now();
  auto logger = log::get();

  // Parse the embedded cell models (rheobase scaling of the weights) before touching the disk.
  double rheobase[kNumCellTypes];
  double rheobase_mean = 0;
  for (int t = 0; t < kNumCellTypes; ++t) {
    const json j = json::parse(kCellTypes[t].json_text);
    rheobase[t] = j.at("g").get<double>() * (j.at("V_th").get<double>() - j.at("E_L").get<double>());
    rheobase_mean += rheobase[t] / kNumCellTypes;
  }
  double weight_scale[kNumCellTypes];
  for (int t = 0; t < kNumCellTypes; ++t) weight_scale[t] = rheobase[t] / rheobase_mean;

  const fs::path out(opt.out_dir);
  std::error_code ec;
  const bool created_out = !fs::exists(out, ec);
  try {
    const fs::path net_dir = out / "network";
    const fs::path cell_dir = out / "components" / "cell_models";
    const fs::path syn_dir = out / "components" / "synaptic_models";
    for (const fs::path& d : {net_dir, cell_dir, syn_dir}) {
      fs::create_directories(d, ec);
      if (ec) throw InputError(d.string(), "", "", "cannot create directory: " + ec.message());
    }
    const std::int64_t n = plan.n;
    const std::size_t nz = static_cast<std::size_t>(n);
    logger->info("generate: {} neurons ({} E, {} I), {} LGN, {} background sources, seed {} -> {}", n, plan.n_exc,
                 n - plan.n_exc, plan.n_lgn, plan.n_bkg, opt.seed, out.string());
    if (plan.k_rec < opt.synapses_per_neuron)
      logger->warn("generate: synapses_per_neuron {} capped at n_neurons - 1 = {}", opt.synapses_per_neuron,
                   plan.k_rec);
    if (plan.k_lgn < opt.lgn_per_neuron)
      logger->warn("generate: lgn_per_neuron {} capped at the number of LGN nodes {}", opt.lgn_per_neuron, plan.k_lgn);

    // ---- components
    for (const CellType& c : kCellTypes) write_text(cell_dir / c.file, c.json_text);
    auto write_syn = [&](const SynType& s) {
      write_text(syn_dir / s.dynamics_params, "{\n  \"receptor_type\": " + std::to_string(s.receptor) + "\n}\n");
    };
    for (const SynType& s : kRecurrentTypes) write_syn(s);
    write_syn(kLgnTypes[0]);
    write_syn(kBkgTypes[0]);

    // ---- v1 nodes: type blocks, positions in the column, tuning angles
    std::vector<std::uint8_t> type_of(nz);
    std::vector<std::uint64_t> node_type_id(nz);
    {
      std::size_t i = 0;
      for (int t = 0; t < kNumCellTypes; ++t)
        for (std::int64_t k = 0; k < plan.type_count[t]; ++k, ++i) {
          type_of[i] = static_cast<std::uint8_t>(t);
          node_type_id[i] = static_cast<std::uint64_t>(kCellTypes[t].node_type_id);
        }
    }
    std::vector<double> x(nz), y(nz), z(nz), tuning(nz);
    {
      Rng rng(opt.seed, kPurposeNodes);
      for (std::size_t i = 0; i < nz; ++i) {
        const double r = kColumnRadius * std::sqrt(rng.uniform());
        const double phi = 6.283185307179586 * rng.uniform();
        x[i] = r * std::cos(phi);
        z[i] = r * std::sin(phi);
        y[i] = kDepthTop + (kDepthBottom - kDepthTop) * rng.uniform();
        tuning[i] = 360.0 * rng.uniform();
      }
    }
    write_nodes_file(net_dir / "v1_nodes.h5", "v1", node_type_id,
                     {{"x", x}, {"y", y}, {"z", z}, {"tuning_angle", tuning}}, opt.overwrite);
    {
      std::ostringstream s;
      s << "node_type_id model_type model_template pop_name ei dynamics_params\n";
      for (const CellType& c : kCellTypes)
        s << c.node_type_id << " point_process nest:glif_psc " << c.pop_name << ' ' << c.ei << ' ' << c.file << '\n';
      write_text(net_dir / "v1_node_types.csv", s.str());
    }
    std::vector<std::uint64_t>().swap(node_type_id);
    std::vector<double>().swap(tuning);
    write_nodes_file(net_dir / "lgn_nodes.h5", "lgn",
                     std::vector<std::uint64_t>(static_cast<std::size_t>(plan.n_lgn), kLgnNodeType), {}, opt.overwrite);
    write_text(net_dir / "lgn_node_types.csv",
               "node_type_id model_type pop_name ei\n" + std::to_string(kLgnNodeType) + " virtual lgn e\n");
    write_nodes_file(net_dir / "bkg_nodes.h5", "bkg",
                     std::vector<std::uint64_t>(static_cast<std::size_t>(plan.n_bkg), kBkgNodeType), {}, opt.overwrite);
    write_text(net_dir / "bkg_node_types.csv",
               "node_type_id model_type pop_name ei\n" + std::to_string(kBkgNodeType) + " virtual bkg e\n");

    const WeightSampler sampler(kWeightCv);
    auto is_inh = [&](std::size_t node) { return kCellTypes[type_of[node]].ei == 'i'; };
    // Writes a projection's edges file and its edge types table, and logs the count.
    auto write_projection = [&](const Projection& pr, EdgeSet& e, const std::string& types_csv,
                                std::chrono::steady_clock::time_point t0) {
      const std::size_t n_edges = e.size();
      write_edges_file(net_dir / pr.file, pr, e, opt.overwrite, opt.gzip);
      write_text(net_dir / types_csv, edge_types_csv(pr.types, pr.n_types));
      logger->info("generate: {}: {} edges (mean in-degree {:.1f}) in {:.1f} s", pr.population, n_edges,
                   static_cast<double>(n_edges) / static_cast<double>(n), seconds_since(t0));
    };

    // ---- recurrent v1 -> v1: each ordered pair (s, t), s != t, independently with p = k_rec / (n - 1)
    {
      const auto t0 = std::chrono::steady_clock::now();
      Projection pr{
          "v1_v1_edges.h5", "v1_to_v1", "v1", "v1", static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(n),
          kRecurrentTypes,  4};
      EdgeSet e;
      e.reserve(reserve_estimate(static_cast<double>(n), plan.k_rec), nz);
      Rng topo(opt.seed, kPurposeRecurrentTopology), wrng(opt.seed, kPurposeRecurrentWeights);
      const double p = plan.k_rec / static_cast<double>(n - 1);
      for (std::size_t t = 0; t < nz; ++t) {
        const int t_inh = is_inh(t) ? 1 : 0;
        const double scale = weight_scale[type_of[t]];
        bernoulli_subset(topo, nz - 1, p, [&](std::uint64_t c) {
          const std::size_t s = c < t ? c : c + 1;  // skip the self-connection
          const int k = 2 * (is_inh(s) ? 1 : 0) + t_inh;
          const SynType& st = kRecurrentTypes[k];
          const double w = std::copysign(sampler.draw(wrng, std::fabs(st.weight_pA) * scale), st.weight_pA);
          const double dx = x[s] - x[t], dy = y[s] - y[t], dz = z[s] - z[t];
          const double dist = std::sqrt(dx * dx + dy * dy + dz * dz);
          double d = 1.0 + dist / kAxonVelocity + kDelayJitter * wrng.uniform();
          d = std::min(std::max(d, plan.min_delay), std::max(kMaxDelay, plan.min_delay));
          e.push(static_cast<std::uint32_t>(s), static_cast<std::uint8_t>(k), w, d);
        });
        e.end_target();
      }
      write_projection(pr, e, "v1_v1_edge_types.csv", t0);
    }

    // ---- LGN -> v1: each (lgn, t) pair independently with p = k_lgn / n_lgn
    {
      const auto t0 = std::chrono::steady_clock::now();
      Projection pr{"lgn_v1_edges.h5",
                    "lgn_to_v1",
                    "lgn",
                    "v1",
                    static_cast<std::uint64_t>(plan.n_lgn),
                    static_cast<std::uint64_t>(n),
                    kLgnTypes,
                    2};
      EdgeSet e;
      e.reserve(reserve_estimate(static_cast<double>(n), plan.k_lgn), nz);
      Rng topo(opt.seed, kPurposeLgnTopology), wrng(opt.seed, kPurposeLgnWeights);
      const double p = plan.k_lgn / static_cast<double>(plan.n_lgn);
      const double delay = std::max(kLgnTypes[0].delay_ms, plan.min_delay);
      for (std::size_t t = 0; t < nz; ++t) {
        const int k = is_inh(t) ? 1 : 0;
        const double mean = kLgnTypes[k].weight_pA * weight_scale[type_of[t]];
        bernoulli_subset(topo, static_cast<std::uint64_t>(plan.n_lgn), p, [&](std::uint64_t s) {
          e.push(static_cast<std::uint32_t>(s), static_cast<std::uint8_t>(k), sampler.draw(wrng, mean), delay);
        });
        e.end_target();
      }
      write_projection(pr, e, "lgn_v1_edge_types.csv", t0);
    }

    // ---- background -> v1: exactly k_bkg distinct sources per target (Floyd's sampling), sorted
    {
      const auto t0 = std::chrono::steady_clock::now();
      Projection pr{"bkg_v1_edges.h5",
                    "bkg_to_v1",
                    "bkg",
                    "v1",
                    static_cast<std::uint64_t>(plan.n_bkg),
                    static_cast<std::uint64_t>(n),
                    kBkgTypes,
                    2};
      EdgeSet e;
      e.reserve(nz * static_cast<std::size_t>(plan.k_bkg), nz);
      Rng topo(opt.seed, kPurposeBkgTopology), wrng(opt.seed, kPurposeBkgWeights);
      const double delay = std::max(kBkgTypes[0].delay_ms, plan.min_delay);
      const std::uint64_t m = static_cast<std::uint64_t>(plan.n_bkg);
      const std::uint64_t k_bkg = static_cast<std::uint64_t>(plan.k_bkg);
      std::vector<char> chosen(static_cast<std::size_t>(m), 0);
      std::vector<std::uint32_t> picks;
      picks.reserve(static_cast<std::size_t>(k_bkg));
      for (std::size_t t = 0; t < nz; ++t) {
        picks.clear();
        for (std::uint64_t j = m - k_bkg; j < m; ++j) {
          std::uint64_t c = topo.below(j + 1);
          if (chosen[c]) c = j;
          chosen[c] = 1;
          picks.push_back(static_cast<std::uint32_t>(c));
        }
        std::sort(picks.begin(), picks.end());
        const int k = is_inh(t) ? 1 : 0;
        const double mean = kBkgTypes[k].weight_pA * weight_scale[type_of[t]];
        for (std::uint32_t s : picks) {
          chosen[s] = 0;
          e.push(s, static_cast<std::uint8_t>(k), sampler.draw(wrng, mean), delay);
        }
        e.end_target();
      }
      write_projection(pr, e, "bkg_v1_edge_types.csv", t0);
    }

    // ---- configs
    json circuit = {
        {"manifest",
         {{"$BASE_DIR", "${configdir}"},
          {"$NETWORK_DIR", "$BASE_DIR/network"},
          {"$COMPONENTS_DIR", "$BASE_DIR/components"}}},
        {"components",
         {{"point_neuron_models_dir", "$COMPONENTS_DIR/cell_models"},
          {"synaptic_models_dir", "$COMPONENTS_DIR/synaptic_models"}}},
        {"networks", {{"nodes", json::array()}, {"edges", json::array()}}},
    };
    for (const char* pop : {"v1", "lgn", "bkg"})
      circuit["networks"]["nodes"].push_back(
          {{"nodes_file", std::string("$NETWORK_DIR/") + pop + "_nodes.h5"},
           {"node_types_file", std::string("$NETWORK_DIR/") + pop + "_node_types.csv"}});
    for (const char* src : {"v1", "lgn", "bkg"})
      circuit["networks"]["edges"].push_back(
          {{"edges_file", std::string("$NETWORK_DIR/") + src + "_v1_edges.h5"},
           {"edge_types_file", std::string("$NETWORK_DIR/") + src + "_v1_edge_types.csv"}});
    write_text(out / "config.circuit.json", circuit.dump(2) + "\n");

    json sim = {
        {"network", "config.circuit.json"},
        {"target_simulator", "NEST"},
        {"run", {{"dt", opt.dt}, {"tstop", opt.tstop}, {"seed", opt.seed}}},
        {"inputs",
         {{"LGN", {{"input_type", "rates"}, {"node_set", "lgn"}, {"rate", opt.lgn_rate_hz}}},
          {"BKG", {{"input_type", "poisson"}, {"node_set", "bkg"}, {"rate", opt.bkg_rate_hz}}}}},
        {"output",
         {{"output_dir", "output"},
          {"spikes_file", "spikes.h5"},
          {"log_file", "log.txt"},
          {"overwrite_output_dir", true}}},
    };
    write_text(out / "config.simulation.json", sim.dump(2) + "\n");
    logger->info("generate: wrote {} in {:.1f} s", (out / "config.simulation.json").string(), seconds_since(t_start));
  } catch (...) {
    // Leave nothing half-written behind in a directory that this call created.
    if (created_out) fs::remove_all(out, ec);
    throw;
  }
}

}  // namespace dpointnet
