#include "dpointnet/io/csv_table.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "dpointnet/util/error.hpp"

namespace dpointnet {

namespace {
// Splits on runs of spaces/tabs; double-quoted fields may contain spaces.
std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> out;
  std::size_t i = 0, n = line.size();
  while (i < n) {
    while (i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    if (i >= n) break;
    std::string f;
    if (line[i] == '"') {
      ++i;
      while (i < n && line[i] != '"') f += line[i++];
      ++i;
    } else {
      while (i < n && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') f += line[i++];
    }
    out.push_back(f);
  }
  return out;
}
}  // namespace

CsvTable CsvTable::read(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "", "cannot open types table (file missing or unreadable)");
  CsvTable t;
  t.path_ = path;
  std::string line;
  bool have_header = false;
  std::size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    auto f = split_fields(line);
    if (f.empty()) continue;
    if (!have_header) {
      t.header_ = f;
      for (std::size_t i = 0; i < f.size(); ++i) t.index_[f[i]] = i;
      have_header = true;
      continue;
    }
    if (f.size() != t.header_.size())
      throw InputError(
          path, "line " + std::to_string(lineno), "",
          "has " + std::to_string(f.size()) + " fields but the header has " + std::to_string(t.header_.size()));
    t.cells_.push_back(std::move(f));
  }
  if (!have_header) throw InputError(path, "", "", "types table is empty (no header row)");
  return t;
}

std::optional<std::string> CsvTable::get(std::size_t row, const std::string& col) const {
  auto it = index_.find(col);
  if (it == index_.end() || row >= cells_.size()) return std::nullopt;
  const std::string& v = cells_[row][it->second];
  if (v.empty() || v == "NONE" || v == "None" || v == "NULL") return std::nullopt;
  return v;
}

std::optional<double> CsvTable::get_double(std::size_t row, const std::string& col,
                                           const std::string& row_label) const {
  auto s = get(row, col);
  if (!s) return std::nullopt;
  try {
    std::size_t pos = 0;
    double d = std::stod(*s, &pos);
    if (pos != s->size()) throw std::invalid_argument("trailing");
    return d;
  } catch (const std::exception&) {
    throw InputError(path_, row_label, col, "value '" + *s + "' is not a number");
  }
}

long CsvTable::find_row(const std::string& key_col, long long key) const {
  auto it = index_.find(key_col);
  if (it == index_.end()) return -1;
  for (std::size_t r = 0; r < cells_.size(); ++r) {
    try {
      if (std::stoll(cells_[r][it->second]) == key) return static_cast<long>(r);
    } catch (const std::exception&) {
      throw InputError(path_, "row " + std::to_string(r + 1), key_col,
                       "value '" + cells_[r][it->second] + "' is not an integer id");
    }
  }
  return -1;
}

}  // namespace dpointnet
