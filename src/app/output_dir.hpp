// Output directories: created before anything is written, or refused with an error naming the config key
// (a path component that is a regular file, no permission, a read-only or full file system).
#pragma once
#include <functional>
#include <string>

namespace dpointnet {

// Creates `dir` and its parents and checks that a file can be written in it (a probe file, removed again).
// Errors are InputError(config, section, key, ...) naming the path and the system's reason.
void prepare_output_dir(const std::string& dir, const std::string& config, const std::string& section,
                        const std::string& key);

// Creates a directory inside an output directory during a run (checkpoints/, network/): OutputError on failure.
void create_output_subdir(const std::string& dir);

// Writes a file through `writer` to path.tmp, then renames it to path, so that no partial file ever stands under
// the final name; on failure the temporary is removed and OutputError(path, "cannot write the <what>: <why>").
void write_atomically(const std::string& path, const std::string& what,
                      const std::function<void(const std::string&)>& writer);

}  // namespace dpointnet
