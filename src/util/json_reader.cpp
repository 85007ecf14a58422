#include "dpointnet/util/json_reader.hpp"

#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "dpointnet/util/error.hpp"

using nlohmann::json;

namespace dpointnet {

json parse_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "", "config file does not exist or cannot be read");
  try {
    return json::parse(in, nullptr, true, /*ignore_comments=*/true);
  } catch (const json::exception& e) {
    throw InputError(path, "", "", std::string("invalid JSON: ") + e.what());
  }
}

json read_json_file(const std::string& path, const std::string& referrer, const std::string& label,
                    const std::string& field) {
  if (std::filesystem::is_directory(path))
    throw InputError(referrer, label, field, "names a directory, not a JSON file: " + path);
  std::ifstream in(path);
  if (!in) throw InputError(referrer, label, field, "names a JSON file that does not exist: " + path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    // the parser reports a number that does not fit a double (1e999) without its key: find the key
    // ("key": number pairs scanned by hand, in linear time: a std::regex can exhaust the stack on large files)
    const std::size_t n = text.size();
    auto space = [&](std::size_t r) {
      while (r < n && std::isspace(static_cast<unsigned char>(text[r]))) ++r;
      return r;
    };
    for (std::size_t p = text.find('"'); p != std::string::npos && p + 1 < n;) {
      const std::size_t q = text.find('"', p + 1);
      if (q == std::string::npos) break;
      std::size_t r = space(q + 1);
      if (r < n && text[r] == ':') {
        const std::size_t s0 = r = space(r + 1);
        if (r < n && text[r] == '-') ++r;
        if (r < n && std::isdigit(static_cast<unsigned char>(text[r]))) {
          while (r < n && (std::isdigit(static_cast<unsigned char>(text[r])) || std::strchr(".eE+-", text[r]))) ++r;
          const std::string tok = text.substr(s0, r - s0);
          if (!std::isfinite(std::strtod(tok.c_str(), nullptr)))
            throw InputError(path, label, text.substr(p + 1, q - p - 1), "value " + tok + " is not a finite number");
        }
      }
      p = text.find('"', q + 1);
    }
    throw InputError(path, label, "", std::string("invalid JSON: ") + e.what());
  }
}

void JsonReader::fail(const std::string& key, const std::string& what) const {
  throw InputError(file_, section_, key, what);
}

double JsonReader::number(const json& o, const std::string& key, double dflt, Range r) const {
  if (!o.contains(key) || o[key].is_null()) return dflt;
  if (!o[key].is_number() || !std::isfinite(o[key].get<double>()))
    fail(key, "must be a finite number, got " + o[key].dump());
  const double v = o[key].get<double>();
  if (r == Range::Positive && !(v > 0)) fail(key, "must be > 0, got " + o[key].dump());
  if (r == Range::NonNegative && v < 0) fail(key, "must be >= 0, got " + o[key].dump());
  return v;
}

std::int64_t JsonReader::integer(const json& o, const std::string& key, std::int64_t dflt, std::int64_t min) const {
  if (!o.contains(key)) return dflt;
  if (!o[key].is_number_integer() || o[key].get<std::int64_t>() < min)
    fail(key, "must be an integer >= " + std::to_string(min) + ", got " + o[key].dump());
  return o[key].get<std::int64_t>();
}

std::string JsonReader::string(const json& o, const std::string& key, const std::string& dflt) const {
  if (!o.contains(key)) return dflt;
  if (!o[key].is_string()) fail(key, "must be a string, got " + o[key].dump());
  return o[key].get<std::string>();
}

bool JsonReader::boolean(const json& o, const std::string& key, bool dflt) const {
  if (!o.contains(key)) return dflt;
  if (!o[key].is_boolean()) fail(key, "must be true or false, got " + o[key].dump());
  return o[key].get<bool>();
}

double JsonReader::required_number(const json& o, const std::string& key) const {
  if (!o.contains(key)) fail(key, "is required");
  const json& v = o.at(key);
  if (!v.is_number()) fail(key, "must be a number, got " + v.dump());
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(key, "must be finite");
  return d;
}

std::string JsonReader::required_string(const json& o, const std::string& key) const {
  if (!o.contains(key)) fail(key, "is required");
  const json& v = o.at(key);
  if (!v.is_string()) fail(key, "must be a string, got " + v.dump());
  return v.get<std::string>();
}

void JsonReader::reject_unknown(const json& o, std::initializer_list<const char*> known,
                                const std::string& hint) const {
  reject_unknown(o, std::vector<std::string>(known.begin(), known.end()), hint);
}

void JsonReader::reject_unknown(const json& o, const std::vector<std::string>& known, const std::string& hint) const {
  for (auto& [k, v] : o.items()) {
    bool ok = false;
    for (const std::string& n : known) ok = ok || k == n;
    if (!ok) fail(k, "is not a known key" + (hint.empty() ? std::string() : " " + hint));
  }
}

}  // namespace dpointnet
