#include "dpointnet/util/host_caches.hpp"

#include <unistd.h>

#include <cctype>
#include <fstream>

namespace dpointnet {

std::int64_t parse_cache_size(const std::string& text) {
  std::size_t k = 0;
  while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
  std::int64_t v = 0;
  const std::size_t first = k;
  while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k])) && v < (std::int64_t(1) << 40))
    v = v * 10 + (text[k++] - '0');
  if (k == first || v >= (std::int64_t(1) << 40)) return 0;
  std::int64_t unit = 1;
  if (k < text.size() && (text[k] == 'K' || text[k] == 'k'))
    unit = 1024, ++k;
  else if (k < text.size() && text[k] == 'M')
    unit = 1024 * 1024, ++k;
  else if (k < text.size() && text[k] == 'G')
    unit = std::int64_t(1024) * 1024 * 1024, ++k;
  while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
  return k == text.size() ? v * unit : 0;
}

namespace {

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

}  // namespace

std::int64_t host_cache_bytes(int level) {
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string lv = read_line(dir + "level");
    if (lv.empty()) break;
    const std::string type = read_line(dir + "type");
    if (lv == std::to_string(level) && (type == "Unified" || type == "Data")) {
      const std::int64_t b = parse_cache_size(read_line(dir + "size"));
      if (b > 0) return b;
    }
  }
#if defined(_SC_LEVEL2_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL1_DCACHE_SIZE)
  const long v = sysconf(level == 1   ? _SC_LEVEL1_DCACHE_SIZE
                         : level == 2 ? _SC_LEVEL2_CACHE_SIZE
                                      : _SC_LEVEL3_CACHE_SIZE);
  if (level >= 1 && level <= 3 && v > 0) return v;
#endif
  return 0;
}

}  // namespace dpointnet
