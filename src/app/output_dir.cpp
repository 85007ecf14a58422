#include "dpointnet/app/output_dir.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "dpointnet/util/error.hpp"

namespace fs = std::filesystem;

namespace dpointnet {

void prepare_output_dir(const std::string& dir, const std::string& config, const std::string& section,
                        const std::string& key) {
  if (dir.empty()) throw InputError(config, section, key, "is empty");
  // every existing component must be a directory
  fs::path prefix;
  for (const auto& part : fs::path(dir)) {
    prefix /= part;
    std::error_code ec;
    const auto st = fs::status(prefix, ec);
    if (ec || !fs::exists(st)) break;
    if (!fs::is_directory(st))
      throw InputError(config, section, key, "'" + dir + "': " + prefix.string() + " exists and is not a directory");
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(config, section, key, "cannot create '" + dir + "': " + ec.message());
  // a probe: permission, read-only and full file systems show here, before any output
  const std::string probe = (fs::path(dir) / ".dpointnet-write-probe").string();
  errno = 0;
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  bool ok = f != nullptr;
  int err = errno;
  if (f) {
    const char buf[4096] = {};
    ok = std::fwrite(buf, 1, sizeof buf, f) == sizeof buf && std::fflush(f) == 0;
    if (!ok) err = errno;
    ok = (std::fclose(f) == 0) && ok;
    if (!ok && err == 0) err = errno;
  }
  std::remove(probe.c_str());
  if (!ok) throw InputError(config, section, key, "cannot write in '" + dir + "': " + std::strerror(err ? err : EIO));
}

void create_output_subdir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw OutputError(dir, "cannot create the directory: " + ec.message());
}

void write_atomically(const std::string& path, const std::string& what,
                      const std::function<void(const std::string&)>& writer) {
  const std::string tmp = path + ".tmp";
  std::error_code ec;
  try {
    writer(tmp);
  } catch (const std::exception& e) {
    fs::remove(tmp, ec);
    throw OutputError(path, "cannot write the " + what + ": " + e.what());
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    throw OutputError(path, "cannot write the " + what + ": " + why);
  }
}

}  // namespace dpointnet
