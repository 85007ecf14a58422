// FNV-1a hashes: 32-bit for RNG purposes (input names), 64-bit hex for run identities.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace dpointnet {

inline std::uint32_t fnv1a32(const std::string& s) {
  std::uint32_t h = 0x811C9DC5u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x01000193u;
  }
  return h;
}

inline std::string fnv1a64_hex(const void* data, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t k = 0; k < n; ++k) {
    h ^= p[k];
    h *= 0x100000001b3ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

inline std::string fnv1a64_hex(const std::string& bytes) { return fnv1a64_hex(bytes.data(), bytes.size()); }

}  // namespace dpointnet
