//===- formats.cpp - conventions shared by the compiler and the runtime ---===//

#include "formats.h"

#include <cstdio>
#include <cstring>

namespace parc::rt {

std::string outputFileName(const std::string &name) {
  if (name.empty())
    return "%.npy";
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                      (c >= '0' && c <= '9') || c == '_' || c == '-' ||
                      (c == '.' && i > 0);
    if (keep) {
      out += char(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out + ".npy";
}

bool isPlainFileName(const std::string &file) {
  return !file.empty() && file != "." && file != ".." &&
         file.find('/') == std::string::npos &&
         file.find('\0') == std::string::npos;
}

namespace {

/// Slicing-by-8 tables of the reflected polynomial 0x82F63B78.
struct Crc32cTables {
  uint32_t t[8][256];
  Crc32cTables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s)
        t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
};

#if defined(__x86_64__)
/// SSE 4.2's crc32 instruction computes the same CRC-32C about ten times as
/// fast as the tables: weight shards are checksummed at disk speed.
__attribute__((target("sse4.2"))) uint32_t crc32cSse42(uint32_t crc,
                                                        const unsigned char *p,
                                                        size_t bytes) {
  uint64_t c = ~crc;
  for (; bytes >= 8; bytes -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = __builtin_ia32_crc32di(c, word);
  }
  uint32_t c32 = uint32_t(c);
  for (; bytes; --bytes, ++p)
    c32 = __builtin_ia32_crc32qi(c32, *p);
  return ~c32;
}
#endif

} // namespace

uint32_t crc32c(uint32_t crc, const void *data, size_t bytes) {
#if defined(__x86_64__)
  static const bool sse42 = __builtin_cpu_supports("sse4.2");
  if (sse42)
    return crc32cSse42(crc, static_cast<const unsigned char *>(data), bytes);
#endif
  static const Crc32cTables tables;
  const auto &t = tables.t;
  const unsigned char *p = static_cast<const unsigned char *>(data);
  crc = ~crc;
  for (; bytes >= 8; bytes -= 8, p += 8) {
    const uint32_t lo = crc ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 |
                               uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^
          t[4][lo >> 24] ^ t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
  }
  for (; bytes; --bytes, ++p)
    crc = (crc >> 8) ^ t[0][(crc ^ *p) & 0xFF];
  return ~crc;
}

std::string crcHex(uint32_t crc) {
  char text[9];
  std::snprintf(text, sizeof(text), "%08x", crc);
  return text;
}

} // namespace parc::rt
