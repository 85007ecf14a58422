// SONATA JSON configuration files: manifest variables, child files, path anchoring (docs/simulation.md).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace dpointnet {

// Loads a SONATA simulation or circuit config and returns the merged, resolved tree:
//  * manifest variables ($VAR, ${VAR}, built-ins configdir, workingdir, configfname, time, date, datetime)
//    substituted in every string, iteratively; a cycle or unknown manifest reference is an error;
//  * `network` / `simulation` child files parsed recursively (relative to the parent's directory) and merged
//    shallowly, the child's keys winning;
//  * every relative path (keys ending in _file, _dir, _path, the components section) made absolute against
//    the directory of the JSON file that contains it; output file names are joined to output.output_dir.
// The key "_config_path" holds the absolute path of the top file.
nlohmann::json load_sonata_config(const std::string& path);

}  // namespace dpointnet
