// Logging: spdlog to stderr, optionally also to a log file in the output directory.
#pragma once
#include <spdlog/spdlog.h>

#include <string>

namespace dpointnet::log {

void init(const std::string& level = "info");
void add_file(const std::string& path, bool truncate = true);
// Removes the file sinks added by add_file (end of a run).
void remove_files();
std::shared_ptr<spdlog::logger> get();

}  // namespace dpointnet::log
