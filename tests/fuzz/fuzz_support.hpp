// Shared by the fuzz harnesses (docs/reliability.md#fuzzing): the outcome rule, a per-process scratch
// directory, a reader of fuzz bytes, and the small fixed network the config harnesses check against.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "dpointnet/network/network.hpp"

namespace dpointnet::fuzz {

// Quiet logging (spdlog off) and no HDF5 error stack printing; every harness calls it once.
void init_quiet();
// The libFuzzer initializer of every harness: init_quiet().
#define DPOINTNET_FUZZ_INITIALIZE()                    \
  extern "C" int LLVMFuzzerInitialize(int*, char***) { \
    dpointnet::fuzz::init_quiet();                     \
    return 0;                                          \
  }

// Runs one input through `body`. An InputError (a refusal that names the file and field) is the expected
// outcome of a bad input. Any other exception would reach the user as "dpointnet: internal error: ..." and
// is a finding: it is printed and the process aborts, so that libFuzzer keeps the input (and replay fails).
void run_one(const char* harness, const std::function<void()>& body);

// An invariant the readers promise for what they accept; a violation is a finding (abort).
void check(bool ok, const char* harness, const std::string& what);

// This process's scratch directory (under $TMPDIR, else /dev/shm, else /tmp; removed at exit).
const std::string& scratch_dir();
// Writes `bytes` to scratch_dir()/name (name: a plain file name) and returns the path.
std::string write_scratch(const std::string& name, const std::string& bytes);
// Removes everything in the scratch directory, so that no file of one input is seen by the next.
void clear_scratch();

// Splits a text input into files: the text before the first line "=== NAME" is `first`; each such line
// starts a file NAME (letters, digits, '.', '_', '-'; at most 64 characters; other names are dropped).
std::vector<std::pair<std::string, std::string>> split_files(const std::string& text, const std::string& first);
// A fresh scratch directory holding the files of a text input (split_files with first "config.json"); returns
// the path of config.json.
std::string write_config_input(const std::uint8_t* data, std::size_t size);

// Reads fuzz bytes front to back; past the end every read gives zeros (so any input decodes).
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : d_(data), n_(size) {}
  bool empty() const { return i_ >= n_; }
  std::uint8_t u8() { return i_ < n_ ? d_[i_++] : 0; }
  // A choice among n (0 when n == 0).
  std::size_t pick(std::size_t n) { return n ? u8() % n : 0; }
  template <class T>
  T raw() {
    std::uint8_t b[sizeof(T)];
    for (auto& x : b) x = u8();
    T v;
    std::memcpy(&v, b, sizeof v);
    return v;
  }
  // A string of up to `max` bytes: a length byte, then the bytes.
  std::string str(std::size_t max) {
    const std::size_t len = pick(max + 1);
    std::string s;
    for (std::size_t k = 0; k < len; ++k) s += static_cast<char>(u8());
    return s;
  }

 private:
  const std::uint8_t* d_;
  std::size_t n_;
  std::size_t i_ = 0;
};

// The network the train/distribution sections are checked against: population "v1" (4 simulated neurons,
// node types 100 and 101), virtual "lgn" (3 nodes, type 200, edges into v1: projection 1) and virtual "bkg"
// (2 nodes, no edges).
Network small_network();

}  // namespace dpointnet::fuzz
