//===- formats.h - Conventions shared by compiler and runtime ---*- C++ -*-===//
//
// The few rules both sides of an artifact must apply identically: how a
// graph output's name becomes a file name, and the checksum of a weight
// shard's data. The compiler links these sources too (the parc_rt_formats
// library), so writer and reader cannot drift apart. Plain C++17, no MPI,
// no LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_IO_FORMATS_H
#define PARC_RUNTIME_IO_FORMATS_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace parc::rt {

/// The file (in the output folder) of the graph output `name`: bytes of
/// [A-Za-z0-9._-] stay, every other byte is %XX (upper-case hex), and so is
/// '%' and a leading '.', so that the map is injective and the result is
/// one plain file name (never '.', '..', hidden, or holding a '/'). An empty
/// name becomes "%". Ends in ".npy".
std::string outputFileName(const std::string &name);

/// True if `file` is one plain file name: non-empty, no '/', no NUL, not
/// '.' or '..' (what a manifest may name as an output file).
bool isPlainFileName(const std::string &file);

/// CRC-32C (Castagnoli, as in iSCSI and ext4) of `bytes`, continuing from
/// `crc` (0 to start): the checksum of a weight shard's tensors.
uint32_t crc32c(uint32_t crc, const void *data, size_t bytes);

/// `crc` as 8 lower-case hex digits, as the shard header stores it.
std::string crcHex(uint32_t crc);

} // namespace parc::rt

#endif // PARC_RUNTIME_IO_FORMATS_H
