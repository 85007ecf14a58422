// The data caches of the host CPU, for the host kernels' cache blocking (the spike adjoint's target blocks).
#pragma once
#include <cstdint>
#include <string>

namespace dpointnet {

// Bytes of a cache size as sysfs writes it ("512K", "16384K", "2M", "32768"); 0 when it cannot be read.
std::int64_t parse_cache_size(const std::string& text);

// The unified (or data) cache of `level` of CPU 0, bytes: from /sys/devices/system/cpu/cpu0/cache (sysconf's
// figures can be wrong: a 2-core virtual machine reported 256 MiB of L3 for the 16 MiB that sysfs lists), else
// sysconf; 0 when neither tells.
std::int64_t host_cache_bytes(int level);

}  // namespace dpointnet
