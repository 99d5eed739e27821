//===- status.cpp - Status names, last error, dtype table -----------------===//

#include "status.h"

#include <cstdarg>
#include <cstdio>

namespace parc::rt {

static thread_local std::string lastError;

parc_rt_status_t fail(parc_rt_status_t status, const char *format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  lastError = buffer;
  return status;
}

std::string shapeString(int64_t rank, const int64_t *dims) {
  std::string s = "[";
  for (int64_t i = 0; i < rank && dims; ++i) {
    if (i)
      s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

} // namespace parc::rt

extern "C" {

const char *parc_rt_status_string(parc_rt_status_t status) {
  switch (status) {
  case PARC_RT_OK:
    return "PARC_RT_OK";
  case PARC_RT_INVALID_ARGUMENT:
    return "PARC_RT_INVALID_ARGUMENT";
  case PARC_RT_IO_ERROR:
    return "PARC_RT_IO_ERROR";
  case PARC_RT_OUT_OF_MEMORY:
    return "PARC_RT_OUT_OF_MEMORY";
  case PARC_RT_COMM_ERROR:
    return "PARC_RT_COMM_ERROR";
  case PARC_RT_TIMEOUT:
    return "PARC_RT_TIMEOUT";
  case PARC_RT_UNSUPPORTED:
    return "PARC_RT_UNSUPPORTED";
  case PARC_RT_INTERNAL:
    return "PARC_RT_INTERNAL";
  }
  return "PARC_RT_<unknown status>";
}

const char *parc_rt_last_error(void) { return parc::rt::lastError.c_str(); }

size_t parc_rt_dtype_size(parc_rt_dtype_t dtype) {
  switch (dtype) {
  case PARC_RT_F64:
  case PARC_RT_I64:
    return 8;
  case PARC_RT_F32:
  case PARC_RT_I32:
    return 4;
  case PARC_RT_F16:
  case PARC_RT_BF16:
    return 2;
  case PARC_RT_I8:
  case PARC_RT_U8:
  case PARC_RT_BOOL:
    return 1;
  case PARC_RT_DTYPE_COUNT:
    break;
  }
  return 0;
}

const char *parc_rt_dtype_name(parc_rt_dtype_t dtype) {
  switch (dtype) {
  case PARC_RT_F32:
    return "f32";
  case PARC_RT_F16:
    return "f16";
  case PARC_RT_BF16:
    return "bf16";
  case PARC_RT_F64:
    return "f64";
  case PARC_RT_I64:
    return "i64";
  case PARC_RT_I32:
    return "i32";
  case PARC_RT_I8:
    return "i8";
  case PARC_RT_U8:
    return "u8";
  case PARC_RT_BOOL:
    return "bool";
  case PARC_RT_DTYPE_COUNT:
    break;
  }
  return "invalid";
}

} // extern "C"
