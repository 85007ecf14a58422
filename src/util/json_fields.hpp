// Declarative config sections: a section is a table of fields, each naming the keys it reads and how it reads
// them into a target struct (type, default, range or allowed values), with the errors of JsonReader. One call
// reads a section: it rejects the keys no field names (the allowed keys come from the table), then runs the
// fields in table order. A row without keys is a check between reads (its errors come at that point of the
// order); a key that needs its own handling is a `custom` row.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "dpointnet/util/json_reader.hpp"

namespace dpointnet::fields {

template <class T>
struct Field {
  std::vector<std::string> keys;  // the keys it reads; none: a check
  std::function<void(const JsonReader& r, const nlohmann::json& o, T& out)> read;
};
template <class T>
using Table = std::vector<Field<T>>;

// What read() does with a key that no field names: the error of JsonReader::reject_unknown, with the allowed keys
// listed ("(mode, devices)") or not; or nothing (SONATA sections with keys dpointnet ignores).
enum class Unknown { Reject, RejectListingKeys, Accept };

// "a, b or c" (last = " or "), "a, b, c" (last = ", ").
std::string join(const std::vector<std::string>& names, const std::string& sep, const std::string& last);
// The error of an unsupported value: "\"v\" is not supported (a, b or c)".
std::string unsupported(const std::string& value, const std::vector<std::string>& names);

template <class T>
std::vector<std::string> keys(const Table<T>& table) {
  std::vector<std::string> k;
  for (const Field<T>& f : table) k.insert(k.end(), f.keys.begin(), f.keys.end());
  return k;
}

// Reads section `o` (errors name r's file and section) into `out`.
template <class T>
void read(const JsonReader& r, const nlohmann::json& o, const Table<T>& table, T& out,
          Unknown unknown = Unknown::Reject) {
  if (unknown != Unknown::Accept) {
    const std::vector<std::string> k = keys(table);
    r.reject_unknown(o, k, unknown == Unknown::RejectListingKeys ? "(" + join(k, ", ", ", ") + ")" : "");
  }
  for (const Field<T>& f : table) f.read(r, o, out);
}

// Rows. `m` is the member of T the value goes to; a key that is absent gives `dflt`.

// JsonReader::integer: an integer >= min.
template <class T, class M>
Field<T> integer(const std::string& key, M T::*m, std::int64_t dflt, std::int64_t min) {
  return {{key}, [=](const JsonReader& r, const nlohmann::json& o, T& t) {
            t.*m = static_cast<M>(r.integer(o, key, dflt, min));
          }};
}
// ... and at most max, `above` the error otherwise.
template <class T, class M>
Field<T> integer(const std::string& key, M T::*m, std::int64_t dflt, std::int64_t min, std::int64_t max,
                 const std::string& above) {
  return {{key}, [=](const JsonReader& r, const nlohmann::json& o, T& t) {
            const std::int64_t v = r.integer(o, key, dflt, min);
            if (v > max) r.fail(key, above);
            t.*m = static_cast<M>(v);
          }};
}
// An integer in min..max; anything else is the error `what` (followed by ", got VALUE" when `got`).
template <class T, class M>
Field<T> integer_in(const std::string& key, M T::*m, long long dflt, long long min, long long max,
                    const std::string& what, bool got = false) {
  return {{key}, [=](const JsonReader& r, const nlohmann::json& o, T& t) {
            if (!o.contains(key)) {
              t.*m = static_cast<M>(dflt);
              return;
            }
            const nlohmann::json& v = o[key];
            if (!v.is_number_integer() || v.get<long long>() < min || v.get<long long>() > max)
              r.fail(key, got ? what + ", got " + v.dump() : what);
            t.*m = static_cast<M>(v.get<long long>());
          }};
}
// JsonReader::number: a finite number (null: the default) in range.
template <class T, class M>
Field<T> number(const std::string& key, M T::*m, double dflt, JsonReader::Range range = JsonReader::Range::Any) {
  return {{key}, [=](const JsonReader& r, const nlohmann::json& o, T& t) { t.*m = r.number(o, key, dflt, range); }};
}
// JsonReader::required_number when present.
template <class T, class M>
Field<T> present_number(const std::string& key, M T::*m, double dflt) {
  return {{key}, [=](const JsonReader& r, const nlohmann::json& o, T& t) {
            t.*m = o.contains(key) ? r.required_number(o, key) : dflt;
          }};
}
template <class T>
Field<T> boolean(const std::string& key, bool T::*m, bool dflt) {
  return {{key}, [=](const JsonReader& r, const nlohmann::json& o, T& t) { t.*m = r.boolean(o, key, dflt); }};
}
template <class T>
Field<T> string(const std::string& key, std::string T::*m, const std::string& dflt) {
  return {{key}, [=](const JsonReader& r, const nlohmann::json& o, T& t) { t.*m = r.string(o, key, dflt); }};
}
template <class T>
Field<T> required_string(const std::string& key, std::string T::*m) {
  return {{key}, [=](const JsonReader& r, const nlohmann::json& o, T& t) { t.*m = r.required_string(o, key); }};
}

// A string naming one of `options` (name -> value of m); another name is the error `message(value)`, by default
// unsupported(value, the names).
template <class M>
using Options = std::vector<std::pair<std::string, M>>;
using Message = std::function<std::string(const std::string& value)>;
template <class T, class M>
Field<T> choice(const std::string& key, M T::*m, const std::string& dflt, const Options<M>& options,
                Message message = nullptr) {
  return {{key}, [=](const JsonReader& r, const nlohmann::json& o, T& t) {
            const std::string v = r.string(o, key, dflt);
            for (const auto& [name, value] : options)
              if (name == v) {
                t.*m = value;
                return;
              }
            std::vector<std::string> names;
            for (const auto& option : options) names.push_back(option.first);
            r.fail(key, message ? message(v) : unsupported(v, names));
          }};
}
// A string that must be one of `names` and sets nothing (the only optimizer, a file format).
template <class T>
Field<T> one_of(const std::string& key, const std::string& dflt, const std::vector<std::string>& names,
                Message message = nullptr) {
  return {{key}, [=](const JsonReader& r, const nlohmann::json& o, T&) {
            const std::string v = r.string(o, key, dflt);
            for (const std::string& n : names)
              if (n == v) return;
            r.fail(key, message ? message(v) : unsupported(v, names));
          }};
}
// A nested object read with its own table, when present; its errors name `section`.
template <class T>
Field<T> object(const std::string& key, const std::string& section, Table<T> table, Unknown unknown = Unknown::Reject) {
  return {{key}, [=](const JsonReader& r, const nlohmann::json& o, T& t) {
            if (o.contains(key)) read(r.at(section), o[key], table, t, unknown);
          }};
}
// Keys read by hand: `f` runs whether they are present or not.
template <class T>
Field<T> custom(std::vector<std::string> keys,
                std::function<void(const JsonReader& r, const nlohmann::json& o, T& out)> f) {
  return {std::move(keys), std::move(f)};
}
// A check of what the rows before it read.
template <class T>
Field<T> check(std::function<void(const JsonReader& r, const nlohmann::json& o, T& out)> f) {
  return {{}, std::move(f)};
}

// A table of kinds (losses, input types): the row whose name is `name`, or null.
template <class Row>
const Row* find_kind(const std::vector<Row>& rows, const std::string& name) {
  for (const Row& row : rows)
    if (name == row.name) return &row;
  return nullptr;
}
template <class Row>
std::vector<std::string> kind_names(const std::vector<Row>& rows) {
  std::vector<std::string> names;
  for (const Row& row : rows) names.push_back(row.name);
  return names;
}

}  // namespace dpointnet::fields
