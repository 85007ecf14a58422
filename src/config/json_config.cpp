#include "dpointnet/config/json_config.hpp"

#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "dpointnet/util/error.hpp"
#include "dpointnet/util/json_reader.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace dpointnet {

namespace {

const std::regex& var_regex() {
  static const std::regex re(R"(\$\{?(\w+)\}?)");
  return re;
}

// What substituting the manifest variables may produce in all the strings of one file (a variable that refers to
// another one many times grows exponentially).
constexpr std::size_t kMaxExpansion = std::size_t(16) << 20;

struct Budget {
  const std::string& file;
  std::size_t left = kMaxExpansion;
  void spend(std::size_t n) {
    if (n > left)
      throw InputError(file, "manifest", "",
                       "substituting the manifest variables gives more than 16 MiB of text (a variable that refers "
                       "to another one many times?)");
    left -= n;
  }
};

std::string substitute(const std::string& s, const std::map<std::string, json>& vars, bool* unresolved,
                       Budget& budget) {
  std::string out;
  auto begin = std::sregex_iterator(s.begin(), s.end(), var_regex());
  std::size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    out += s.substr(last, static_cast<std::size_t>(m.position()) - last);
    auto v = vars.find(m[1].str());
    if (v == vars.end()) {
      out += m.str();
      if (unresolved) *unresolved = true;
    } else if (v->second.is_string()) {
      budget.spend(v->second.get_ref<const std::string&>().size());
      out += v->second.get<std::string>();
    } else {
      const std::string d = v->second.dump();
      budget.spend(d.size());
      out += d;
    }
    last = static_cast<std::size_t>(m.position() + m.length());
  }
  out += s.substr(last);
  return out;
}

std::map<std::string, json> resolve_manifest(const json& doc, const std::string& path, Budget& budget) {
  std::map<std::string, json> vars;
  fs::path p = fs::absolute(path);
  std::time_t now = std::time(nullptr);
  char buf[64];
  vars["configdir"] = p.parent_path().string();
  vars["workingdir"] = fs::current_path().string();
  vars["configfname"] = p.filename().string();
  std::strftime(buf, sizeof buf, "%H-%M-%S", std::localtime(&now));
  vars["time"] = std::string(buf);
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::localtime(&now));
  vars["date"] = std::string(buf);
  std::strftime(buf, sizeof buf, "%Y-%m-%d_%H-%M-%S", std::localtime(&now));
  vars["datetime"] = std::string(buf);
  if (!doc.contains("manifest")) return vars;
  if (!doc["manifest"].is_object()) throw InputError(path, "", "manifest", "must be an object");
  std::map<std::string, json> pending;
  for (auto& [k, v] : doc["manifest"].items()) {
    std::string name = (!k.empty() && k[0] == '$') ? k.substr(1) : k;
    pending[name] = v;
  }
  // Iterative resolution: a value is resolved once it contains no reference to another pending variable.
  for (int pass = 0; pass < 64 && !pending.empty(); ++pass) {
    bool progress = false;
    for (auto it = pending.begin(); it != pending.end();) {
      if (!it->second.is_string()) {
        vars[it->first] = it->second;
        it = pending.erase(it);
        progress = true;
        continue;
      }
      const std::string s = it->second.get<std::string>();
      bool refers_pending = false;
      for (auto m = std::sregex_iterator(s.begin(), s.end(), var_regex()); m != std::sregex_iterator(); ++m)
        if (pending.count((*m)[1].str())) refers_pending = true;
      if (refers_pending) {
        ++it;
        continue;
      }
      bool unresolved = false;
      vars[it->first] = substitute(s, vars, &unresolved, budget);
      if (unresolved) throw InputError(path, "manifest", "$" + it->first, "refers to an unknown variable: " + s);
      it = pending.erase(it);
      progress = true;
    }
    if (!progress) break;
  }
  if (!pending.empty()) {
    std::string names;
    for (auto& kv : pending) names += " $" + kv.first;
    throw InputError(path, "", "manifest", "unable to resolve manifest variables (cycle):" + names);
  }
  return vars;
}

json substitute_tree(const json& node, const std::map<std::string, json>& vars, Budget& budget) {
  if (node.is_string()) {
    const std::string s = node.get<std::string>();
    std::smatch m;
    if (std::regex_match(s, m, var_regex())) {  // exactly one variable: keep its type
      auto v = vars.find(m[1].str());
      if (v != vars.end()) {
        budget.spend(v->second.is_string() ? v->second.get_ref<const std::string&>().size() : v->second.dump().size());
        return v->second;
      }
    }
    return substitute(s, vars, nullptr, budget);
  }
  if (node.is_object()) {
    json out = json::object();
    for (auto& [k, v] : node.items()) out[k] = (k == "manifest") ? v : substitute_tree(v, vars, budget);
    return out;
  }
  if (node.is_array()) {
    json out = json::array();
    for (auto& v : node) out.push_back(substitute_tree(v, vars, budget));
    return out;
  }
  return node;
}

bool is_path_key(const std::string& k) {
  auto ends = [&](const char* suf) {
    std::string s(suf);
    return k.size() >= s.size() && k.compare(k.size() - s.size(), s.size(), s) == 0;
  };
  return ends("_file") || ends("_dir") || ends("_path") || ends("_files");
}

std::string anchor(const std::string& s, const fs::path& dir) {
  if (s.empty()) return s;
  fs::path p(s);
  if (p.is_absolute()) return p.lexically_normal().string();
  return (dir / p).lexically_normal().string();
}

void anchor_tree(json& node, const fs::path& dir, bool in_output, const std::string& parent_key) {
  if (node.is_object()) {
    for (auto& [k, v] : node.items()) {
      const bool out_section = in_output || k == "output" || k == "reports";
      if (v.is_string()) {
        const bool path_like = is_path_key(k) || parent_key == "components";
        if (path_like && (!in_output || k == "output_dir")) v = anchor(v.get<std::string>(), dir);
      } else {
        anchor_tree(v, dir, out_section, k);
      }
    }
  } else if (node.is_array()) {
    for (auto& v : node) anchor_tree(v, dir, in_output, parent_key);
  }
}

json load_recursive(const std::string& path, int depth) {
  if (depth > 16) throw InputError(path, "", "network", "config files nest too deeply (a cycle?)");
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(path, "", "", "is a directory, not a config file");
  json doc = parse_json_file(path);
  if (!doc.is_object()) throw InputError(path, "", "", "top level must be a JSON object");
  Budget budget{path};
  auto vars = resolve_manifest(doc, path, budget);
  json resolved = substitute_tree(doc, vars, budget);
  const fs::path dir = fs::absolute(path).parent_path();
  anchor_tree(resolved, dir, false, "");
  for (const char* child_key : {"network", "simulation"}) {
    if (resolved.contains(child_key) && resolved[child_key].is_string()) {
      std::string child = anchor(resolved[child_key].get<std::string>(), dir);
      // (a name too long for the file system is refused like a missing file)
      if (!fs::exists(child, ec))
        throw InputError(path, "", child_key,
                         "names a config file that does not exist: " + child + (ec ? " (" + ec.message() + ")" : ""));
      if (fs::is_directory(child, ec))
        throw InputError(path, "", child_key, "names a directory, not a config file: " + child);
      json c = load_recursive(child, depth + 1);
      for (auto& [k, v] : c.items()) resolved[k] = v;  // shallow merge, child wins
    }
  }
  return resolved;
}

}  // namespace

json load_sonata_config(const std::string& path) {
  json cfg = load_recursive(path, 0);
  // BMTK post-processing: output file names are relative to output_dir.
  if (cfg.contains("output") && cfg["output"].is_object()) {
    auto& out = cfg["output"];
    if (out.contains("output_dir") && out["output_dir"].is_string()) {
      const fs::path od = out["output_dir"].get<std::string>();
      for (auto& [k, v] : out.items()) {
        if (!v.is_string()) continue;
        if (k == "log_file" || k.rfind("spikes_file", 0) == 0) {
          fs::path p = v.get<std::string>();
          if (!p.is_absolute()) v = (od / p).lexically_normal().string();
        }
      }
    }
  }
  cfg["_config_path"] = fs::absolute(path).lexically_normal().string();
  return cfg;
}

}  // namespace dpointnet
