// The one JSON reader: files parsed with errors that name the file, and typed access to keys with errors that
// name the file, the section and the key.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dpointnet {

// Parses a JSON file (comments allowed). A missing file or a parse error throws InputError naming `path`.
nlohmann::json parse_json_file(const std::string& path);

// Parses a JSON file referred to by `referrer` (a types table, a config) under `label` / `field`: a missing
// file names the referrer; a number that does not fit a double (1e999) names its key.
nlohmann::json read_json_file(const std::string& path, const std::string& referrer, const std::string& label,
                              const std::string& field);

class JsonReader {
 public:
  enum class Range { Any, Positive, NonNegative };
  JsonReader(std::string file, std::string section) : file_(std::move(file)), section_(std::move(section)) {}
  JsonReader at(const std::string& section) const { return JsonReader(file_, section); }
  const std::string& file() const { return file_; }
  const std::string& section() const { return section_; }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;

  // Optional keys: the default when absent (or null for numbers).
  double number(const nlohmann::json& o, const std::string& key, double dflt, Range r = Range::Any) const;
  std::int64_t integer(const nlohmann::json& o, const std::string& key, std::int64_t dflt, std::int64_t min) const;
  std::string string(const nlohmann::json& o, const std::string& key, const std::string& dflt) const;
  bool boolean(const nlohmann::json& o, const std::string& key, bool dflt) const;
  // Required keys.
  double required_number(const nlohmann::json& o, const std::string& key) const;
  std::string required_string(const nlohmann::json& o, const std::string& key) const;
  // Every key of `o` must be in `known`; `hint` (e.g. "(mode, devices)") is appended to the message.
  void reject_unknown(const nlohmann::json& o, std::initializer_list<const char*> known,
                      const std::string& hint = "") const;
  void reject_unknown(const nlohmann::json& o, const std::vector<std::string>& known,
                      const std::string& hint = "") const;

 private:
  std::string file_, section_;
};

}  // namespace dpointnet
