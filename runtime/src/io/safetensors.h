//===- safetensors.h - Checks of a weight shard's parc header ---*- C++ -*-===//
//
// The runtime's own use of a shard's __metadata__ (the public ABI in
// parc/runtime.h maps and reads tensors): which rank and program the shard
// belongs to, and the checksums of its data.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_IO_SAFETENSORS_H
#define PARC_RUNTIME_IO_SAFETENSORS_H

#include "parc/runtime.h"

namespace parc::rt {

/// Fails, naming the file and both ranks and programs, unless the shard's
/// parc.rank and parc.program are `rank` and `program`; with `verifyData`,
/// also unless its data matches parc.checksum (naming the damaged tensor).
parc_rt_status_t checkShard(const parc_rt_weights_t *weights, int rank,
                            const char *program, bool verifyData);

} // namespace parc::rt

#endif // PARC_RUNTIME_IO_SAFETENSORS_H
