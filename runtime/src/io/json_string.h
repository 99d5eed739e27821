//===- json_string.h - JSON string literals for runtime files ---*- C++ -*-===//
//
// Every JSON file the runtime writes (the safetensors header, the trace
// timeline, the run report, the MoE report) quotes its strings here, so
// that a name from an untrusted model always gives strict JSON in valid
// UTF-8: `"` and `\` are escaped, control bytes become \u00XX, and each byte
// that is not part of a valid UTF-8 sequence becomes U+FFFD (JSON has no way
// to carry a raw byte; \u00XX would claim the Latin-1 character). The
// runtime links no JSON library, so this is the one writer.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_IO_JSON_STRING_H
#define PARC_RUNTIME_IO_JSON_STRING_H

#include <cstdio>
#include <string>

namespace parc::rt {

/// Appends `s` to `out` as a JSON string literal (quotes included).
void appendJsonString(std::string &out, const std::string &s);

/// Writes `s` to `f` as a JSON string literal.
void writeJsonString(std::FILE *f, const std::string &s);

/// True when every byte of `s` belongs to a valid UTF-8 sequence (no
/// overlong forms, surrogates or code points past U+10FFFF).
bool isValidUtf8(const std::string &s);

} // namespace parc::rt

#endif // PARC_RUNTIME_IO_JSON_STRING_H
