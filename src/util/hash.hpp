// FNV-1a hashes: 32-bit for RNG purposes (input names), 64-bit hex for run identities.
#pragma once
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

inline std::string fnv1a64_hex(const std::string& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace dpointnet
