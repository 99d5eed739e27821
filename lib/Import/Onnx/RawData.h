//===- RawData.h - initializer bytes left where they lie --------*- C++ -*-===//
//
// protobuf's parse copies every `bytes` field, so a model's embedded weights
// (TensorProto.raw_data) would sit in memory twice: in the mapped file and in
// the ModelProto. splitRawData reads the wire format of the few messages on
// the way to them (ModelProto.graph, GraphProto.initializer) and writes the
// model without those bytes, recording where each one lies in the file.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_LIB_IMPORT_ONNX_RAWDATA_H
#define PARC_LIB_IMPORT_ONNX_RAWDATA_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace parc::onnx_import {

struct SplitModel {
  /// The ModelProto with the raw_data of each main-graph initializer that
  /// holds a weight (floating point, 64 KiB or more) emptied; the field
  /// stays, so that has_raw_data() still says where the data is.
  std::string proto;
  /// Per initializer, in the graph's order: its raw_data in the file, or an
  /// empty StringRef where the proto keeps its data.
  std::vector<llvm::StringRef> rawData;
};

/// `file` split as above; nullopt when it is not well-formed protobuf wire
/// format (the full parse then reports the model as malformed).
std::optional<SplitModel> splitRawData(llvm::StringRef file);

} // namespace parc::onnx_import

#endif // PARC_LIB_IMPORT_ONNX_RAWDATA_H
