//===- json_string.cpp - JSON string literals for runtime files -----------===//

#include "json_string.h"

namespace parc::rt {

namespace {

/// The length of the valid UTF-8 sequence that starts at s[i], or 0 if the
/// byte there does not start one (RFC 3629's table of well-formed bytes).
size_t utf8Length(const std::string &s, size_t i) {
  const auto at = [&](size_t k) {
    return i + k < s.size() ? (unsigned char)s[i + k] : 0u;
  };
  const unsigned c = at(0);
  if (c < 0x80)
    return 1;
  // The allowed range of the second byte narrows for E0, ED, F0 and F4 to
  // exclude overlong forms, surrogates and code points past U+10FFFF.
  unsigned lo = 0x80, hi = 0xBF;
  size_t n = 0;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF)
    n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4)
    n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else
    return 0;
  if (at(1) < lo || at(1) > hi)
    return 0;
  for (size_t k = 2; k < n; ++k)
    if (at(k) < 0x80 || at(k) > 0xBF)
      return 0;
  return n;
}

} // namespace

void appendJsonString(std::string &out, const std::string &s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = (unsigned char)s[i];
    const size_t n = utf8Length(s, i);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
      out += buffer;
    } else if (n == 0) {
      out += "\xEF\xBF\xBD"; // U+FFFD for this one byte
    } else {
      out.append(s, i, n);
    }
    i += n ? n : 1;
  }
  out += '"';
}

void writeJsonString(std::FILE *f, const std::string &s) {
  std::string quoted;
  appendJsonString(quoted, s);
  std::fputs(quoted.c_str(), f);
}

bool isValidUtf8(const std::string &s) {
  for (size_t i = 0, n = 0; i < s.size(); i += n)
    if ((n = utf8Length(s, i)) == 0)
      return false;
  return true;
}

} // namespace parc::rt
