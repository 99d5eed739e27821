//===- Inputs.cpp - a compiled model's manifest and the run's inputs ------===//
//
// ONNX TensorProto (.pb) inputs, the format of ONNX's test data, are
// converted to .npy through the runtime's writer; every input is then
// checked against the manifest through the runtime's .npy reader, the one
// the rank programs load it with.
//
//===----------------------------------------------------------------------===//

#include "Inputs.h"

#include "parc/runtime.h"

#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <map>

using llvm::StringRef;

namespace parc::run {

std::string TensorSpec::describe() const {
  std::string dims;
  for (int64_t d : shape)
    dims += (dims.empty() ? "" : ",") + std::to_string(d);
  return dtype + "[" + dims + "]";
}

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(message);
}

TensorSpec tensorSpec(const llvm::json::Object &o) {
  TensorSpec t;
  t.name = o.getString("name").value_or("").str();
  t.dtype = o.getString("dtype").value_or("").str();
  if (auto *shape = o.getArray("shape"))
    for (const auto &d : *shape)
      t.shape.push_back(d.getAsInteger().value_or(-1));
  return t;
}

/// Per rank, the binary of its program.
llvm::Error readRanks(const llvm::json::Object &root, Manifest &m) {
  const llvm::json::Array *ranks = root.getArray("ranks");
  const llvm::json::Array *programs = root.getArray("programs");
  if (!ranks || !programs || ranks->empty())
    return error("'" + m.path + "' lists no ranks or programs");
  llvm::StringMap<std::string> binaries;
  for (const auto &p : *programs)
    if (auto *o = p.getAsObject())
      binaries[o->getString("name").value_or("")] =
          o->getString("binary").value_or("").str();
  for (size_t r = 0; r < ranks->size(); ++r) {
    const auto *o = (*ranks)[r].getAsObject();
    StringRef program = o ? o->getString("program").value_or("") : "";
    auto it = binaries.find(program);
    if (it == binaries.end() || it->second.empty())
      return error("'" + m.path + "' maps rank " + llvm::Twine(r) +
                   " to program '" + program +
                   "', which its \"programs\" do not list");
    m.rankBinaries.push_back(it->second);
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<Manifest> readManifest(StringRef dir) {
  Manifest m;
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "manifest.json");
  m.path = path.str().str();
  auto text = llvm::MemoryBuffer::getFile(path);
  if (!text)
    return error("cannot read '" + path + "': " + text.getError().message() +
                 " (is '" + dir + "' the output of `parc compile`?)");
  auto parsed = llvm::json::parse((*text)->getBuffer());
  if (!parsed)
    return error("'" + path +
                 "' is not valid JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root)
    return error("'" + path + "' lists no ranks or programs");
  if (auto err = readRanks(*root, m))
    return std::move(err);
  m.worldSize = root->getInteger("world_size").value_or(m.rankBinaries.size());
  m.outputRank = root->getInteger("output_rank").value_or(0);
  // Data-parallel replicas run the same programs: they learn their count.
  m.dataParallel = root->getInteger("data_parallel").value_or(1);
  m.generates = root->getObject("generation") != nullptr;
  if (auto *mesh = root->getObject("mesh"))
    if (auto *shape = mesh->getArray("shape"))
      for (auto &d : *shape)
        m.mesh += (m.mesh.empty() ? "" : "x") +
                  std::to_string(d.getAsInteger().value_or(0));
  if (auto *ins = root->getArray("inputs"))
    for (const auto &in : *ins)
      if (auto *o = in.getAsObject())
        m.inputs.push_back(tensorSpec(*o));
  if (auto *outs = root->getArray("outputs"))
    for (const auto &out : *outs)
      if (auto *o = out.getAsObject())
        if (auto name = o->getString("name"))
          if (auto file = o->getString("file"))
            m.outputFiles.emplace_back(name->str(), file->str());
  return m;
}

namespace {

/// Converts an ONNX TensorProto file to .npy through the runtime's writer,
/// for an input the program declares as `dtype` (a manifest name).
llvm::Error pbToNpy(StringRef pb, StringRef npy, StringRef dtype) {
  auto buffer = llvm::MemoryBuffer::getFile(pb);
  if (!buffer)
    return error("cannot read '" + pb + "'");
  onnx::TensorProto t;
  if (!t.ParseFromArray((*buffer)->getBufferStart(),
                        (*buffer)->getBufferSize()))
    return error("'" + pb + "' is not an ONNX TensorProto");
  struct Kind {
    parc_rt_dtype_t dtype;
    size_t size;
  };
  static const std::map<int, Kind> kinds = {
      {onnx::TensorProto::FLOAT, {PARC_RT_F32, 4}},
      {onnx::TensorProto::DOUBLE, {PARC_RT_F64, 8}},
      {onnx::TensorProto::FLOAT16, {PARC_RT_F16, 2}},
      {onnx::TensorProto::BFLOAT16, {PARC_RT_BF16, 2}},
      {onnx::TensorProto::INT64, {PARC_RT_I64, 8}},
      {onnx::TensorProto::INT32, {PARC_RT_I32, 4}},
      {onnx::TensorProto::INT8, {PARC_RT_I8, 1}},
      {onnx::TensorProto::UINT8, {PARC_RT_U8, 1}},
      {onnx::TensorProto::BOOL, {PARC_RT_BOOL, 1}}};
  // ONNX's own test data (before 1.14) stores bfloat16 as uint16 words.
  int type = t.data_type();
  if (type == onnx::TensorProto::UINT16 && dtype == "bf16")
    type = onnx::TensorProto::BFLOAT16;
  auto kind = kinds.find(type);
  if (kind == kinds.end())
    return error("'" + pb + "' has a data type parc-run cannot convert");
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  std::string bytes = t.raw_data();
  if (!t.has_raw_data()) {
    auto put = [&](const void *p, size_t size) {
      bytes.append(static_cast<const char *>(p), size);
    };
    for (float v : t.float_data())
      put(&v, 4);
    for (double v : t.double_data())
      put(&v, 8);
    for (int64_t v : t.int64_data())
      put(&v, 8);
    // int32_data also carries the narrower types, one element per entry.
    for (int32_t v : t.int32_data()) {
      if (kind->second.size == 4) {
        put(&v, 4);
      } else if (kind->second.size == 2) {
        uint16_t h = v;
        put(&h, 2);
      } else {
        int8_t b = v;
        put(&b, 1);
      }
    }
  }
  if ((int64_t)bytes.size() != n * (int64_t)kind->second.size)
    return error("'" + pb + "' holds " + std::to_string(bytes.size()) +
                 " bytes for " + std::to_string(n) + " elements");
  std::string path = npy.str();
  if (parc_rt_npy_write(path.c_str(), kind->second.dtype, dims.size(),
                        dims.data(), bytes.data()) != PARC_RT_OK)
    return error(parc_rt_last_error());
  return llvm::Error::success();
}

/// The dtype and shape `file` holds, against what the model declares.
llvm::Error checkInput(const TensorSpec &want, StringRef given,
                       StringRef file) {
  parc_rt_dtype_t dtype;
  int64_t rank = 0, dims[PARC_RT_MAX_RANK];
  std::string path = file.str();
  if (parc_rt_npy_info(path.c_str(), &dtype, &rank, dims) != PARC_RT_OK)
    return error("input '" + want.name + "': " + parc_rt_last_error());
  TensorSpec got{want.name, parc_rt_dtype_name(dtype),
                 std::vector<int64_t>(dims, dims + rank)};
  if (got.dtype == want.dtype && got.shape == want.shape)
    return llvm::Error::success();
  return error("input '" + want.name + "': '" + given + "' holds " +
               got.describe() + ", but the model expects " + want.describe());
}

/// One NAME=PATH: its file, made absolute so that every node reads the
/// same path, and converted from .pb when needed.
llvm::Expected<std::string> inputFile(const TensorSpec &want, StringRef file,
                                      llvm::SmallVectorImpl<char> &tmpDir) {
  if (!llvm::sys::fs::exists(file))
    return error("input file '" + file + "' does not exist");
  llvm::SmallString<256> path(file);
  if (file.ends_with(".pb")) {
    if (tmpDir.empty() &&
        llvm::sys::fs::createUniqueDirectory("parc-run", tmpDir))
      return error("cannot create a temporary directory");
    path.assign(tmpDir.begin(), tmpDir.end());
    llvm::sys::path::append(path, want.name + ".npy");
    if (auto err = pbToNpy(file, path, want.dtype))
      return std::move(err);
  }
  if (auto err = checkInput(want, file, path))
    return std::move(err);
  llvm::sys::fs::make_absolute(path);
  return path.str().str();
}

} // namespace

llvm::Expected<std::vector<std::string>>
prepareInputs(const Manifest &m, llvm::ArrayRef<std::string> specs,
              llvm::SmallVectorImpl<char> &tmpDir) {
  llvm::StringMap<std::string> given; // name -> path
  for (const std::string &spec : specs) {
    auto [name, file] = StringRef(spec).split('=');
    if (name.empty() || file.empty())
      return error("--input '" + spec + "' is not NAME=PATH");
    if (llvm::none_of(m.inputs,
                      [&](const TensorSpec &t) { return t.name == name; }))
      return error(
          "the model has no input '" + name + "' (inputs: " +
          llvm::join(llvm::map_range(
                         m.inputs, [](const TensorSpec &t) { return t.name; }),
                     ", ") +
          ")");
    auto [it, inserted] = given.try_emplace(name, file.str());
    if (!inserted)
      return error("input '" + name + "' is given twice ('" + it->second +
                   "' and '" + file + "')");
  }
  std::vector<std::string> missing, args;
  for (const TensorSpec &t : m.inputs) {
    auto it = given.find(t.name);
    if (it == given.end()) {
      missing.push_back("'" + t.name + "' (" + t.describe() + ")");
      continue;
    }
    auto path = inputFile(t, it->second, tmpDir);
    if (!path)
      return path.takeError();
    args.push_back("--input=" + t.name + "=" + *path);
  }
  if (!missing.empty())
    return error("missing --input NAME=PATH for " + llvm::join(missing, ", ") +
                 " of the model's " + std::to_string(m.inputs.size()) +
                 " input(s)");
  return args;
}

} // namespace parc::run
