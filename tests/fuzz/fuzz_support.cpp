#include "fuzz_support.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>

#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/util/error.hpp"
#include "dpointnet/util/log.hpp"

namespace fs = std::filesystem;

namespace dpointnet::fuzz {

void init_quiet() {
  log::init("off");
  h5::silence_errors();
}

void run_one(const char* harness, const std::function<void()>& body) {
  static const bool verbose = std::getenv("DPOINTNET_FUZZ_VERBOSE") != nullptr;
  try {
    body();
    if (verbose) std::fprintf(stderr, "[fuzz %s] accepted\n", harness);
  } catch (const InputError& e) {
    // a named refusal: the expected outcome of a bad input (DPOINTNET_FUZZ_VERBOSE=1 prints it)
    if (verbose) std::fprintf(stderr, "[fuzz %s] refused: %s\n", harness, e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "[fuzz %s] FINDING: an exception other than InputError escaped (dpointnet would print "
                 "\"internal error\"): %s\n",
                 harness, e.what());
    std::abort();
  }
}

void check(bool ok, const char* harness, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "[fuzz %s] FINDING: accepted input breaks an invariant: %s\n", harness, what.c_str());
  std::abort();
}

namespace {
std::string make_scratch() {
  std::string base;
  if (const char* t = std::getenv("TMPDIR"); t && *t) base = t;
  if (base.empty()) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  std::string tmpl = base + "/dpointnet_fuzz_XXXXXX";
  if (!mkdtemp(tmpl.data())) {
    std::perror("[fuzz] mkdtemp");
    std::abort();
  }
  return tmpl;
}
struct Scratch {
  std::string dir = make_scratch();
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};
Scratch& scratch() {
  static Scratch s;
  return s;
}
}  // namespace

const std::string& scratch_dir() { return scratch().dir; }

std::string write_scratch(const std::string& name, const std::string& bytes) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "[fuzz] cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

void clear_scratch() {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(scratch_dir(), ec)) fs::remove_all(e.path(), ec);
}

std::vector<std::pair<std::string, std::string>> split_files(const std::string& text, const std::string& first) {
  std::vector<std::pair<std::string, std::string>> files{{first, ""}};
  bool keep = true;  // whether the current section's name was acceptable
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    const std::size_t next = end == std::string::npos ? text.size() : end + 1;
    const std::string line = text.substr(pos, next - pos);
    if (line.compare(0, 4, "=== ") == 0) {
      std::string name = line.substr(4);
      while (!name.empty() && (name.back() == '\n' || name.back() == '\r' || name.back() == ' ')) name.pop_back();
      keep = !name.empty() && name.size() <= 64 && name[0] != '.';
      for (char c : name)
        keep = keep && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                        c == '_' || c == '-');
      if (keep) files.emplace_back(name, "");
    } else if (keep) {
      files.back().second += line;
    }
    pos = next;
  }
  return files;
}

Network small_network() {
  Network net;
  net.dt = 1.0;
  Population v1;
  v1.name = "v1";
  v1.size = 4;
  v1.offset = 0;
  v1.node_ids = {0, 1, 2, 3};
  v1.node_type_ids = {100, 100, 101, 101};
  Population lgn;
  lgn.name = "lgn";
  lgn.is_virtual = true;
  lgn.size = 3;
  lgn.node_ids = {0, 1, 2};
  lgn.node_type_ids = {200, 200, 200};
  Population bkg;
  bkg.name = "bkg";
  bkg.is_virtual = true;
  bkg.size = 2;
  bkg.node_ids = {0, 1};
  bkg.node_type_ids = {300, 300};
  net.populations = {v1, lgn, bkg};
  net.n_neurons = 4;
  for (int i = 0; i < 4; ++i) {
    DerivedNeuron d;
    d.syn_decay = {0.5};
    d.psc_initial = {1.0};
    net.neurons.push_back(d);
    net.neuron_population.push_back(0);
    net.neuron_node_id.push_back(i);
  }
  Projection rec;
  rec.recurrent = true;
  rec.n_sources = 4;
  Projection from_lgn;
  from_lgn.source_population = "lgn";
  from_lgn.n_sources = 3;
  for (int e = 0; e < 3; ++e) {
    from_lgn.source.push_back(e);
    from_lgn.target.push_back(e);
    from_lgn.channel.push_back(0);
    from_lgn.delay_steps.push_back(1);
    from_lgn.weight_pA.push_back(1.0);
    from_lgn.nsyns.push_back(1.0);
    from_lgn.edge_population.push_back(0);
    from_lgn.edge_row.push_back(e);
  }
  net.projections = {rec, from_lgn};
  net.edge_populations = {{"lgn_to_v1", "lgn_v1_edges.h5", "lgn", "v1", 3}};
  net.finalize();
  return net;
}

std::string write_config_input(const std::uint8_t* data, std::size_t size) {
  clear_scratch();
  std::string top;
  for (const auto& [name, body] : split_files(std::string(reinterpret_cast<const char*>(data), size), "config.json")) {
    const std::string p = write_scratch(name, body);
    if (name == "config.json") top = p;
  }
  return top;
}

}  // namespace dpointnet::fuzz
