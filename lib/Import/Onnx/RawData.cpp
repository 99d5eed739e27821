//===- RawData.cpp - initializer bytes left where they lie ----------------===//

#include "RawData.h"

#include "llvm/ADT/STLFunctionalExtras.h"

using llvm::StringRef;

namespace parc::onnx_import {
namespace {

// Field numbers of onnx.proto on the way to the bytes.
constexpr uint64_t kModelGraph = 7, kGraphInitializer = 5, kTensorDataType = 2,
                   kTensorRawData = 9;
constexpr unsigned kVarint = 0, kFixed64 = 1, kLengthDelimited = 2,
                   kFixed32 = 5;

bool readVarint(StringRef data, size_t &pos, uint64_t &value) {
  value = 0;
  for (unsigned shift = 0; shift < 64 && pos < data.size(); shift += 7) {
    uint8_t byte = data[pos++];
    value |= uint64_t(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return true;
  }
  return false;
}

void writeVarint(std::string &out, uint64_t value) {
  for (; value >= 0x80; value >>= 7)
    out.push_back(char(value | 0x80));
  out.push_back(char(value));
}

void writeLengthDelimited(std::string &out, uint64_t field, StringRef value) {
  writeVarint(out, field << 3 | kLengthDelimited);
  writeVarint(out, value.size());
  out += value;
}

/// Calls `f(field, value, whole)` for each field of the message `data`:
/// `value` is a length-delimited field's payload, `whole` the field's bytes
/// from its tag on. False on malformed wire format (groups included).
bool forEachField(StringRef data,
                  llvm::function_ref<bool(uint64_t, unsigned, StringRef,
                                          StringRef)>
                      f) {
  for (size_t pos = 0; pos < data.size();) {
    size_t start = pos;
    uint64_t tag, length;
    if (!readVarint(data, pos, tag))
      return false;
    unsigned wire = tag & 7;
    size_t valueStart = pos;
    if (wire == kVarint) {
      if (!readVarint(data, pos, length))
        return false;
    } else if (wire == kFixed64 || wire == kFixed32) {
      pos += wire == kFixed64 ? 8 : 4;
    } else if (wire == kLengthDelimited) {
      if (!readVarint(data, pos, length) || length > data.size() - pos)
        return false;
      valueStart = pos;
      pos += length;
    } else {
      return false;
    }
    if (pos > data.size() ||
        !f(tag >> 3, wire, data.slice(valueStart, pos),
           data.slice(start, pos)))
      return false;
  }
  return true;
}

/// Whether an initializer's bytes are left in the file: floating-point
/// tensors of 64 KiB or more (weights). Shape constants and indices stay in
/// the proto, where ONNX shape inference reads them.
bool leftInFile(uint64_t dataType, StringRef raw) {
  // TensorProto.DataType: FLOAT, FLOAT16, DOUBLE, BFLOAT16.
  bool isFloat = dataType == 1 || dataType == 10 || dataType == 11 ||
                 dataType == 16;
  return isFloat && raw.size() >= (64 << 10);
}

bool splitTensor(StringRef tensor, std::string &out, StringRef &raw) {
  uint64_t dataType = 0;
  bool ok = forEachField(tensor, [&](uint64_t field, unsigned wire,
                                     StringRef value, StringRef) {
    size_t pos = 0;
    if (field == kTensorDataType && wire == kVarint)
      readVarint(value, pos, dataType);
    if (field == kTensorRawData && wire == kLengthDelimited)
      raw = value; // the last one wins, as in protobuf's parse
    return true;
  });
  if (!ok)
    return false;
  if (!leftInFile(dataType, raw)) {
    raw = StringRef();
    out += tensor;
    return true;
  }
  return forEachField(tensor, [&](uint64_t field, unsigned wire, StringRef,
                                  StringRef whole) {
    if (field == kTensorRawData && wire == kLengthDelimited)
      writeLengthDelimited(out, field, "");
    else
      out += whole;
    return true;
  });
}

bool splitGraph(StringRef graph, std::string &out,
                std::vector<StringRef> &rawData) {
  return forEachField(graph, [&](uint64_t field, unsigned wire,
                                 StringRef value, StringRef whole) {
    if (field != kGraphInitializer || wire != kLengthDelimited) {
      out += whole;
      return true;
    }
    std::string tensor;
    StringRef raw;
    if (!splitTensor(value, tensor, raw))
      return false;
    rawData.push_back(raw);
    writeLengthDelimited(out, field, tensor);
    return true;
  });
}

} // namespace

std::optional<SplitModel> splitRawData(StringRef file) {
  SplitModel split;
  bool graphSeen = false;
  bool ok = forEachField(file, [&](uint64_t field, unsigned wire,
                                   StringRef value, StringRef whole) {
    if (field != kModelGraph || wire != kLengthDelimited) {
      split.proto += whole;
      return true;
    }
    // A second graph field would merge into the first: left to protobuf.
    if (graphSeen)
      return false;
    graphSeen = true;
    std::string graph;
    if (!splitGraph(value, graph, split.rawData))
      return false;
    writeLengthDelimited(split.proto, field, graph);
    return true;
  });
  if (!ok)
    return std::nullopt;
  return split;
}

} // namespace parc::onnx_import
