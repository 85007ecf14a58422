// Harness: the node/edge types table reader (src/io/csv_table.*): space separated, header row, quoted fields,
// NONE/empty as null. The input is the table; every cell is then read as a string, as a number and as a row
// key, the way the nodes and edges readers use it.
#include "dpointnet/io/csv_table.hpp"
#include "fuzz_support.hpp"

using namespace dpointnet;
using namespace dpointnet::fuzz;

DPOINTNET_FUZZ_INITIALIZE()

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = write_scratch("types.csv", std::string(reinterpret_cast<const char*>(data), size));
  run_one("csv_table", [&] {
    const CsvTable t = CsvTable::read(path);
    // the columns the readers ask for, and the header's own names
    std::vector<std::string> cols = {"node_type_id", "edge_type_id", "model_type", "model_template", "dynamics_params",
                                     "syn_weight",   "delay",        "nsyns",      "rate_hz",        "missing"};
    for (std::size_t r = 0; r < t.rows() + 1; ++r) {
      for (const std::string& c : cols) {
        const auto s = t.get(r, c);
        check(!s || (!s->empty() && *s != "NONE"), "csv_table", "a null cell read as a value");
        check(t.has_column(c) || !s, "csv_table", "a value in a column that does not exist");
        run_one("csv_table", [&] { (void)t.get_double(r, c, "row " + std::to_string(r + 1)); });
      }
    }
    for (const std::string& c : cols)
      for (long long key : {0LL, 100LL, -1LL, 9223372036854775807LL})
        run_one("csv_table", [&] {
          const long row = t.find_row(c, key);
          check(row >= -1 && row < static_cast<long>(t.rows()), "csv_table", "find_row out of range");
        });
  });
  return 0;
}
