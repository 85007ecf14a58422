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

// A failure to write an output after the run started (full disk, read-only or vanished file system): names the
// file and the system's reason. Exit code 3 (docs/reliability.md).
class OutputError : public std::runtime_error {
 public:
  OutputError(const std::string& file, const std::string& what) : std::runtime_error(file + ": " + what) {}
};

// Training cannot go on: a non-finite loss or gradient (nothing of the update was applied). Exit code 4.
class TrainingError : public std::runtime_error {
 public:
  explicit TrainingError(const std::string& what) : std::runtime_error(what) {}
};

// Exit codes of the executables (docs/reliability.md).
inline constexpr int kExitInternal = 1, kExitInput = 2, kExitOutput = 3, kExitNumerical = 4, kExitTimeout = 5;
inline constexpr int kExitPreempted = 75;  // EX_TEMPFAIL: stopped by a signal after a complete checkpoint

}  // namespace dpointnet
