//===- header_cursor.h - Reading a text header byte by byte -----*- C++ -*-===//
//
// Both tensor formats start with a small text header: a Python dict literal
// in .npy, JSON in .safetensors. Their parsers share this cursor: white
// space, punctuation and the first error, which is the one reported.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_IO_HEADER_CURSOR_H
#define PARC_RUNTIME_IO_HEADER_CURSOR_H

#include <string>

namespace parc::rt {

class HeaderCursor {
protected:
  HeaderCursor(const char *begin, const char *end)
      : start_(begin), p_(begin), end_(end) {}

  void skipSpace() {
    while (p_ < end_ &&
           (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r'))
      ++p_;
  }
  /// Records the first error; false, for `return failAt(...)`.
  bool failAt(const std::string &message) {
    if (error_.empty())
      error_ = message;
    return false;
  }
  /// Consumes c if it is next (after white space).
  bool peek(char c) {
    skipSpace();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool expect(char c) {
    return peek(c) || failAt(std::string("expected '") + c + "'");
  }

  const char *start_, *p_, *end_;
  std::string error_;
};

} // namespace parc::rt

#endif // PARC_RUNTIME_IO_HEADER_CURSOR_H
