#include "dpointnet/util/log.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace dpointnet::log {
namespace {
std::shared_ptr<spdlog::logger> g_logger;
}

void init(const std::string& level) {
  if (!g_logger) {
    auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    g_logger = std::make_shared<spdlog::logger>("dpointnet", sink);
    g_logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
    spdlog::set_default_logger(g_logger);
  }
  g_logger->set_level(spdlog::level::from_str(level));
}

void add_file(const std::string& path, bool truncate) {
  get();
  auto fsink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, truncate);
  fsink->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
  g_logger->sinks().push_back(fsink);
}

void remove_files() {
  if (!g_logger) return;
  auto& sinks = g_logger->sinks();
  if (sinks.size() > 1) sinks.erase(sinks.begin() + 1, sinks.end());
}

std::shared_ptr<spdlog::logger> get() {
  if (!g_logger) init();
  return g_logger;
}

}  // namespace dpointnet::log
