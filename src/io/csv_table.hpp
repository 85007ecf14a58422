// SONATA types tables (node_types.csv, edge_types.csv): space separated, header row, NONE or empty = null.
#pragma once
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace dpointnet {

class CsvTable {
 public:
  static CsvTable read(const std::string& path);

  const std::string& path() const { return path_; }
  bool has_column(const std::string& c) const { return index_.count(c) > 0; }
  std::size_t rows() const { return cells_.size(); }
  // Null (NONE / empty / missing column) gives nullopt.
  std::optional<std::string> get(std::size_t row, const std::string& col) const;
  // Numeric value; throws InputError naming file, row key and column if it does not parse.
  std::optional<double> get_double(std::size_t row, const std::string& col, const std::string& row_label) const;
  // Row with the given integer key in column key_col (e.g. node_type_id); -1 if absent.
  long find_row(const std::string& key_col, long long key) const;

 private:
  std::string path_;
  std::vector<std::string> header_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<std::vector<std::string>> cells_;
};

}  // namespace dpointnet
