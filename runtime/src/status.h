//===- status.h - Error reporting shared by the runtime ---------*- C++ -*-===//
//
// Every failing ABI call goes through fail(): it records a formatted
// message in the thread-local last error and returns the status, so that
// `return fail(...)` is the single error idiom.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_STATUS_H
#define PARC_RUNTIME_STATUS_H

#include "parc/runtime.h"

#include <string>

namespace parc::rt {

parc_rt_status_t fail(parc_rt_status_t status, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/// "[2,3,4]" for messages.
std::string shapeString(int64_t rank, const int64_t *dims);

} // namespace parc::rt

#define PARC_RT_RETURN_IF_ERROR(expr)                                          \
  do {                                                                         \
    parc_rt_status_t parc_rt_status_ = (expr);                                 \
    if (parc_rt_status_ != PARC_RT_OK)                                         \
      return parc_rt_status_;                                                  \
  } while (0)

#endif // PARC_RUNTIME_STATUS_H
