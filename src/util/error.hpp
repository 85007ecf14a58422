// Errors for bad input: every message names the file, the object (population, node type, input) and the field.
#pragma once
#include <stdexcept>
#include <string>

namespace dpointnet {

class InputError : public std::runtime_error {
 public:
  InputError(const std::string& file, const std::string& where, const std::string& field, const std::string& what)
      : std::runtime_error(compose(file, where, field, what)) {}
  explicit InputError(const std::string& msg) : std::runtime_error(msg) {}

 private:
  static std::string compose(const std::string& file, const std::string& where, const std::string& field,
                             const std::string& what) {
    std::string m;
    if (!file.empty()) m += file + ": ";
    if (!where.empty()) m += where + ": ";
    if (!field.empty()) m += "field '" + field + "': ";
    return m + what;
  }
};

}  // namespace dpointnet
