//===- MappedFiles.h - files whose mapping the IR borrows -------*- C++ -*-===//
//
// The importer maps a model file and lets the blobs of its embedded weights
// borrow their bytes from the mapping. Reading those bytes through the
// mapping would fault every page into the compiler's memory; a reader that
// finds them here reads the file instead (the weight writer moves them by
// copy_file_range), so that embedded weights stream as external data does.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_SUPPORT_MAPPEDFILES_H
#define PARC_SUPPORT_MAPPEDFILES_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace parc {

/// Records that `bytes` are the read-only mapping of the file at `path`,
/// until forgetMappedFile(bytes.data()).
void rememberMappedFile(llvm::StringRef path, llvm::StringRef bytes);
void forgetMappedFile(const char *start);

struct FileSpan {
  std::string path;
  uint64_t offset;
};

/// The file and offset that hold `bytes`, when they lie inside a mapping
/// rememberMappedFile recorded.
std::optional<FileSpan> findMappedFile(llvm::StringRef bytes);

} // namespace parc

#endif // PARC_SUPPORT_MAPPEDFILES_H
