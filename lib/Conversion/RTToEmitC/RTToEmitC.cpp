//===- RTToEmitC.cpp - convert-rt-to-emitc ----------------------*- C++ -*-===//
//
// Turns one rank's rt program into an emitc module that
// emitc::translateToCpp prints as a C++ translation unit: a `parc_forward`
// function that calls the runtime's kernels on pointers into the arena, the
// weights and the inputs, the program's metadata (tensor names, dtypes,
// shapes) as static tables, and a `main` that hands both to the runtime's
// program driver. Every shape is a static `int64_t` table, so the generated
// code has no arithmetic of its own: the runtime is the only thing that
// computes. Its one loop is an rt.repeat's (rolled layers): the body's
// calls once, reading each iteration's buffers and node names from a
// static table. Every name is bytes in one numeric table, so a model's
// strings never become source text.
//
//===----------------------------------------------------------------------===//

#include "parc/Conversion/Passes.h"
#include "nn/NNDialect.h"
#include "nn/NodeLocation.h"
#include "rt/RTDTypes.h"
#include "rt/RTDialect.h"
#include "rt/RTKernels.h"

#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/JSON.h"

#define DEBUG_TYPE "convert-rt-to-emitc"

namespace parc {
#define GEN_PASS_DEF_CONVERTRTTOEMITC
#include "parc/Conversion/Passes.h.inc"
} // namespace parc

using namespace mlir;
namespace nn = parc::nn;
namespace rt = parc::rt;

namespace {

MemRefType memrefOf(Value v) { return cast<MemRefType>(v.getType()); }

using parc::nn::nodeName;

/// Builds one kernel call: operands are collected as they are referenced,
/// literals go straight into `args`.
struct Call {
  SmallVector<Attribute> args;
  SmallVector<Value> operands;
  MLIRContext *ctx;

  explicit Call(MLIRContext *ctx) : ctx(ctx) {}
  Call &value(Value v) {
    args.push_back(IntegerAttr::get(IndexType::get(ctx), operands.size()));
    operands.push_back(v);
    return *this;
  }
  Call &lit(int64_t v) {
    args.push_back(IntegerAttr::get(IntegerType::get(ctx, 64), v));
    return *this;
  }
  Call &real(double v) {
    args.push_back(FloatAttr::get(Float32Type::get(ctx), v));
    return *this;
  }
  /// C text parc generates (enumerators, table names): never a model string.
  Call &text(StringRef s) {
    args.push_back(emitc::OpaqueAttr::get(ctx, s));
    return *this;
  }
};

/// The rt.kernel being emitted, with typed reads of the attributes its
/// family's runtime call takes.
struct Kernel {
  rt::KernelOp op;
  StringRef name;
  /// Its declaration in RTKernels.td (the verifier made sure there is one).
  const rt::KernelDecl *decl;
  /// What the emitters dispatch on within a family.
  rt::Kernel kind;
  Location loc;
  ValueRange ins, outs;

  explicit Kernel(rt::KernelOp op)
      : op(op), name(op.getCallee()), decl(rt::lookupKernel(name)),
        kind(decl ? decl->kernel : rt::Kernel()), loc(op.getLoc()), ins(op.getIns()), outs(op.getOuts()) {}
  Attribute attr(StringRef n) const { return op->getAttr(n); }
  int64_t intAttr(StringRef n) const {
    return cast<IntegerAttr>(attr(n)).getInt();
  }
  bool boolAttr(StringRef n) const { return cast<BoolAttr>(attr(n)).getValue(); }
  double floatAttr(StringRef n) const {
    return cast<FloatAttr>(attr(n)).getValueAsDouble();
  }
  ArrayRef<int64_t> arrayAttr(StringRef n) const {
    return cast<DenseI64ArrayAttr>(attr(n)).asArrayRef();
  }
};

class Emitter {
public:
  Emitter(ModuleOp module) : module(module), b(module.getContext()) {}

  /// Emits `program` (and, when not null, its prefill program sharing its
  /// weight table) with `main`.
  LogicalResult run(func::FuncOp program, func::FuncOp prefill);

private:
  // --- module-level tables ------------------------------------------------
  /// Name of a static `int64_t[]` holding `values` (shared by content).
  std::string table(ArrayRef<int64_t> values);
  std::string descriptors(StringRef name,
                          ArrayRef<std::tuple<std::string, MemRefType>> tensors);
  void global(StringRef name, Type type, Attribute init);
  /// A C expression for `s` as a `const char *` into the string table.
  /// Model strings (node, tensor and program names) are data, never source
  /// text: no byte of a hostile name can end a literal or a comment, or
  /// smuggle a trigraph or a format into the generated C++.
  std::string str(StringRef s) {
    return "(const char *)parc_strings + " + std::to_string(strOffset(s));
  }
  int64_t strOffset(StringRef s);
  /// The string table, once every string is known: NUL-terminated bytes,
  /// printed as numbers.
  void emitStrings(Operation *after);
  /// Refuses a name the runtime's C strings cannot carry (an embedded NUL),
  /// or a tensor name the JSON of the manifest and weights cannot (not
  /// UTF-8).
  LogicalResult checkNames(func::FuncOp program);

  /// A program's own descriptor tables, once its forward is emitted.
  struct ProgramTables {
    SmallVector<std::tuple<std::string, MemRefType>> inputs, outputs;
    SmallVector<int64_t> roles;
  };
  /// Element types the runtime has and names it can carry.
  LogicalResult check(func::FuncOp program);
  /// The C initializer of `program`'s parc_rt_program_t (`prefillRef`: the
  /// address of its prefill program, or empty).
  std::string programInit(func::FuncOp program, StringRef name,
                          StringRef fnName, StringRef prefix, ProgramTables &t,
                          std::string &wTable, StringRef prefillRef);
  void emitProgramGlobal(StringRef name, std::string init);

  // --- the forward function -----------------------------------------------
  /// `program`'s forward function `fnName`, and its tables.
  FailureOr<ProgramTables> emitForward(func::FuncOp program, StringRef fnName);
  /// A buffer's definition (its C pointer) or its publication as an output.
  LogicalResult emitBuffer(Operation &op);
  /// rt.kernel, rt.start or rt.wait.
  LogicalResult emitCallOp(Operation &op);
  /// The body once, in a loop over a table of every iteration's bindings
  /// (arena offsets, weight and input slots) and node names.
  LogicalResult emitRepeat(rt::RepeatOp op);
  /// The ONNX node of the call being emitted, as a `const char *`: from the
  /// string table, or the current iteration's row inside a repeat.
  Call &node(Call &call, Location loc) {
    return nodeOverride ? call.value(nodeOverride) : call.text(str(nodeName(loc)));
  }
  /// A pointer from `args` (base, offset or slot): parc_rt_at (base +
  /// offset) or parc_rt_slot (slot of base).
  Value pointerCall(Location loc, StringRef helper, Call &args);
  /// An rt.kernel: the emitter of its family (RTKernels.td).
  LogicalResult emitKernel(rt::KernelOp op);
  using KernelEmitter = LogicalResult (Emitter::*)(const Kernel &);
  /// The member that emits the runtime calls of a family's kernels.
  static KernelEmitter familyEmitter(rt::KernelFamily family);
  // One emitter per rt::KernelFamily.
  LogicalResult emitElementwise(const Kernel &k);
  LogicalResult emitLinalg(const Kernel &k);
  LogicalResult emitNorm(const Kernel &k);
  LogicalResult emitMovement(const Kernel &k);
  LogicalResult emitConcatSplit(const Kernel &k);
  LogicalResult emitWindowed(const Kernel &k);
  LogicalResult emitAttention(const Kernel &k);
  LogicalResult emitCollective(const Kernel &k);
  /// `comm` names the communication for the run's trace (empty: compute).
  void emitCall(Location loc, StringRef callee, Call &call, StringRef comm = "");
  /// The communicator of the group a collective or send/recv runs in.
  Value meshComm(Operation *op);
  /// Arguments of a collective or send/recv on `ins`/`outs` (the request
  /// is appended by emitStart when it is started).
  LogicalResult commCall(Operation *op, rt::Kernel kind, ValueRange ins,
                         ValueRange outs, Call &call);
  void emitStart(rt::StartOp op, Call &call);
  void emitWait(rt::WaitOp op);
  /// One poll of every request in flight: MPI progresses a non-blocking
  /// collective only inside MPI calls, so compute between start and wait
  /// hides communication only if something drives it.
  void emitProgress(Location loc);
  LogicalResult emitMoe(const Kernel &k);
  /// The steps of an expert-parallel nn.moe and its all_to_all_v's.
  LogicalResult emitMoeStep(const Kernel &k);
  Value pointer(Value buffer) { return pointers.lookup(buffer); }
  /// The pointer of vs[i], or nullptr for an absent optional operand.
  Call &ptrOrNull(Call &c, ValueRange vs, size_t i) {
    return i < vs.size() ? c.value(pointer(vs[i])) : c.text("nullptr");
  }
  Call &shape(Call &call, Value buffer) {
    auto t = memrefOf(buffer);
    return call.lit(t.getRank()).text(table(t.getShape()));
  }
  std::string dtype(Value buffer) {
    return rt::dtypeOf(memrefOf(buffer).getElementType())->enumerator.str();
  }
  Type opaque(StringRef s) { return emitc::OpaqueType::get(b.getContext(), s); }
  Type ptr(Type t) { return emitc::PointerType::get(t); }
  Type voidPtr() { return ptr(opaque("void")); }

  ModuleOp module;
  OpBuilder b;
  Operation *anchor = nullptr; // the forward function
  Value ctx, arena, inputs, weights, outputs;
  llvm::DenseMap<Value, Value> pointers;
  Value nodeOverride;
  SmallVector<std::tuple<std::string, MemRefType>> inputDescs, weightDescs,
      outputDescs;
  // parc_rt_input_role_t of each input, when the program generates.
  SmallVector<int64_t> inputRoles;
  llvm::StringMap<int64_t> weightIndex;
  /// The C variable of each request, and those started but not yet waited.
  llvm::DenseMap<Value, Value> requests;
  llvm::SetVector<Value> inFlight;
  llvm::StringMap<std::string> tables;
  SmallVector<int8_t> stringBytes;
  llvm::StringMap<size_t> stringOffsets;
  int counter = 0;
};

void Emitter::global(StringRef name, Type type, Attribute init) {
  // Tables go before the function that reads them.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(anchor);
  emitc::GlobalOp::create(b, module.getLoc(), name, type, init,
                          /*extern=*/false, /*static=*/true, /*const=*/true);
}

int64_t Emitter::strOffset(StringRef s) {
  assert(!s.contains('\0') && "checkNames refuses embedded NULs");
  auto [it, inserted] = stringOffsets.try_emplace(s, stringBytes.size());
  if (inserted) {
    for (char c : s)
      stringBytes.push_back(static_cast<int8_t>(c));
    stringBytes.push_back(0);
  }
  return it->second;
}

void Emitter::emitStrings(Operation *after) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(after);
  auto size = static_cast<int64_t>(stringBytes.size());
  emitc::GlobalOp::create(
      b, module.getLoc(), "parc_strings",
      emitc::ArrayType::get({size}, b.getI8Type()),
      DenseIntElementsAttr::get(RankedTensorType::get({size}, b.getI8Type()),
                                ArrayRef<int8_t>(stringBytes)),
      /*extern=*/false, /*static=*/true, /*const=*/true);
}

LogicalResult Emitter::checkNames(func::FuncOp program) {
  auto check = [](Operation *op, StringRef what, StringRef s,
                  bool json) -> LogicalResult {
    bool nul = s.contains('\0');
    if (!nul && (!json || llvm::json::isUTF8(s)))
      return success();
    std::string escaped;
    llvm::raw_string_ostream os(escaped);
    llvm::printEscapedString(s, os);
    InFlightDiagnostic diag = emitError(op->getLoc())
                              << what << " '" << escaped;
    if (nul)
      return diag << "' holds a NUL byte, which the runtime's names cannot "
                     "carry: rename it in the model";
    return diag << "' is not valid UTF-8, which the manifest and the weight "
                   "files (JSON) cannot carry: rename it in the model";
  };
  if (auto n = module->getAttrOfType<StringAttr>("rt.program"))
    if (failed(check(module, "program name", n.getValue(), /*json=*/true)))
      return failure();
  WalkResult result = program.walk([&](Operation *op) {
    // Node names only reach messages and traces: any bytes but NUL.
    if (failed(check(op, "node name", nodeName(op->getLoc()), /*json=*/false)))
      return WalkResult::interrupt();
    if (auto repeat = dyn_cast<rt::RepeatOp>(op))
      for (Attribute loc : repeat.getLocations())
        if (failed(check(op, "node name", nodeName(cast<LocationAttr>(loc)),
                         /*json=*/false)))
          return WalkResult::interrupt();
    StringRef name;
    if (auto in = dyn_cast<rt::InputOp>(op))
      name = in.getName();
    else if (auto w = dyn_cast<rt::WeightOp>(op))
      name = w.getName();
    else if (auto out = dyn_cast<rt::OutputOp>(op))
      name = out.getName();
    if (failed(check(op, "tensor name", name, /*json=*/true)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

std::string Emitter::table(ArrayRef<int64_t> values) {
  if (values.empty())
    return "nullptr";
  std::string key = llvm::join(llvm::map_range(values, [](int64_t v) {
                                 return std::to_string(v);
                               }),
                               ",");
  auto [it, inserted] = tables.try_emplace(key, "");
  if (inserted) {
    it->second = "parc_dims_" + std::to_string(tables.size() - 1);
    auto type = RankedTensorType::get({(int64_t)values.size()}, b.getI64Type());
    global(it->second,
           emitc::ArrayType::get({(int64_t)values.size()}, b.getI64Type()),
           DenseIntElementsAttr::get(type, values));
  }
  return it->second;
}

std::string Emitter::descriptors(
    StringRef name, ArrayRef<std::tuple<std::string, MemRefType>> tensors) {
  if (tensors.empty())
    return "nullptr";
  std::string init = "{";
  for (auto &[tensorName, type] : tensors)
    init += "{" + str(tensorName) + ", " +
            rt::dtypeOf(type.getElementType())->enumerator.str() + ", " +
            std::to_string(type.getRank()) + ", " +
            table(type.getShape()) + "}, ";
  init += "}";
  global(name,
         emitc::ArrayType::get({(int64_t)tensors.size()},
                               opaque("parc_rt_tensor_desc_t")),
         emitc::OpaqueAttr::get(b.getContext(), init));
  return name.str();
}

Value Emitter::meshComm(Operation *op) {
  // Bit j: mesh axis j is in the group; the runtime split the world along
  // the mesh at start-up (a group spanning every axis is the world).
  int64_t mask = 0;
  auto mesh = module->getAttrOfType<DictionaryAttr>("rt.mesh");
  auto axes = op->getAttrOfType<ArrayAttr>("mesh_axes");
  if (mesh && axes)
    if (auto names = mesh.getAs<ArrayAttr>("axes"))
      for (auto [j, name] : llvm::enumerate(names))
        if (llvm::is_contained(axes, name))
          mask |= int64_t(1) << j;
  Call c(b.getContext());
  c.value(ctx).lit(mask);
  return emitc::CallOpaqueOp::create(b, op->getLoc(), ptr(opaque("parc_rt_comm_t")),
                                     "parc_rt_mesh_comm", b.getArrayAttr(c.args),
                                     ArrayAttr(), c.operands)
      .getResult(0);
}

void Emitter::emitCall(Location loc, StringRef callee, Call &call, StringRef comm) {
  // Every call is to an entry point RTKernels.td declares (and runtime.h
  // was checked against) with the arguments it declares.
  std::optional<unsigned> arity = rt::getEntryArity(callee);
  if (!arity || *arity != call.args.size())
    llvm::report_fatal_error(llvm::Twine("convert-rt-to-emitc: call of ") +
                             callee + " with " + llvm::Twine(call.args.size()) +
                             " arguments, which RTKernels.td does not declare");
  auto status = emitc::CallOpaqueOp::create(b, loc, opaque("parc_rt_status_t"),
                                            callee, b.getArrayAttr(call.args),
                                            ArrayAttr(), call.operands);
  // A failing kernel aborts every rank, naming the ONNX node it came from.
  Call check(b.getContext());
  check.value(ctx).value(status.getResult(0));
  node(check, loc);
  if (!comm.empty())
    check.text(str(comm));
  emitc::CallOpaqueOp::create(b, loc, TypeRange{},
                              comm.empty() ? "parc_rt_check" : "parc_rt_check_comm",
                              b.getArrayAttr(check.args), ArrayAttr(),
                              check.operands);
}

/// The unary, binary and reduction kinds by kernel: the runtime's
/// enumerator suffix (PARC_RT_UNARY_NEG, ...).
using KindNames = llvm::DenseMap<rt::Kernel, StringRef>;
static const KindNames &unaryKinds() {
  using K = rt::Kernel;
  static const KindNames kinds = {
      {K::Neg, "NEG"}, {K::Exp, "EXP"}, {K::Log, "LOG"}, {K::Sqrt, "SQRT"},
      {K::Reciprocal, "RECIPROCAL"}, {K::Tanh, "TANH"}, {K::Erf, "ERF"},
      {K::Sigmoid, "SIGMOID"}, {K::Relu, "RELU"}, {K::Not, "NOT"},
      {K::Silu, "SILU"}, {K::Gelu, "GELU"}};
  return kinds;
}
static const KindNames &binaryKinds() {
  using K = rt::Kernel;
  static const KindNames kinds = {
      {K::Add, "ADD"}, {K::Sub, "SUB"}, {K::Mul, "MUL"}, {K::Div, "DIV"},
      {K::Pow, "POW"}, {K::Min, "MIN"}, {K::Max, "MAX"}, {K::Equal, "EQUAL"},
      {K::Less, "LESS"}, {K::Greater, "GREATER"}, {K::And, "AND"},
      {K::Or, "OR"}};
  return kinds;
}
static const KindNames &reductionKinds() {
  using K = rt::Kernel;
  static const KindNames kinds = {
      {K::ReduceSum, "SUM"}, {K::ReduceMean, "MEAN"}, {K::ReduceMax, "MAX"},
      {K::ReduceMin, "MIN"}, {K::ReduceProd, "PROD"}};
  return kinds;
}

Emitter::KernelEmitter Emitter::familyEmitter(rt::KernelFamily family) {
  switch (family) {
  case rt::KernelFamily::Elementwise:
    return &Emitter::emitElementwise;
  case rt::KernelFamily::Linalg:
    return &Emitter::emitLinalg;
  case rt::KernelFamily::Norm:
    return &Emitter::emitNorm;
  case rt::KernelFamily::Movement:
    return &Emitter::emitMovement;
  case rt::KernelFamily::ConcatSplit:
    return &Emitter::emitConcatSplit;
  case rt::KernelFamily::Windowed:
    return &Emitter::emitWindowed;
  case rt::KernelFamily::Attention:
    return &Emitter::emitAttention;
  case rt::KernelFamily::Collective:
    return &Emitter::emitCollective;
  case rt::KernelFamily::Moe:
    return &Emitter::emitMoe;
  case rt::KernelFamily::MoeStep:
    return &Emitter::emitMoeStep;
  }
  llvm_unreachable("an rt::KernelFamily without an emitter");
}

/// Kernels by their RTKernels.td family: the emitter that knows how the
/// runtime call's arguments are laid out.
LogicalResult Emitter::emitKernel(rt::KernelOp op) {
  Kernel k(op);
  if (!k.decl)
    return op.emitOpError() << "no runtime kernel named '" << k.name << "'";
  return (this->*familyEmitter(k.decl->family))(k);
}

/// Pointwise and reducing kernels: unary (with GELU's tanh form), binary
/// and reductions by kind, where, cast and copy.
LogicalResult Emitter::emitElementwise(const Kernel &k) {
  ValueRange ins = k.ins, outs = k.outs;
  Call call(b.getContext());
  if (auto it = unaryKinds().find(k.kind); it != unaryKinds().end()) {
    std::string kind = it->second.str();
    auto approx =
        dyn_cast_or_null<nn::GeluApproximationAttr>(k.attr("approximation"));
    if (approx && approx.getValue() == nn::GeluApproximation::tanh)
      kind = "GELU_TANH";
    call.text("PARC_RT_UNARY_" + kind).text(dtype(ins[0]))
        .value(pointer(ins[0])).value(pointer(outs[0])).lit(memrefOf(ins[0]).getNumElements());
    emitCall(k.loc, k.decl->entry, call);
    return success();
  }
  if (auto it = binaryKinds().find(k.kind); it != binaryKinds().end()) {
    call.text(("PARC_RT_BINARY_" + it->second).str()).text(dtype(ins[0]));
    for (Value v : {ins[0], ins[1], outs[0]})
      shape(call.value(pointer(v)), v);
    emitCall(k.loc, k.decl->entry, call);
    return success();
  }
  if (auto it = reductionKinds().find(k.kind); it != reductionKinds().end()) {
    ArrayRef<int64_t> axes = k.arrayAttr("axes");
    call.text(("PARC_RT_REDUCTION_" + it->second).str()).text(dtype(ins[0]))
        .value(pointer(ins[0]));
    shape(call, ins[0]).lit(axes.size()).text(table(axes)).value(pointer(outs[0]));
    emitCall(k.loc, k.decl->entry, call);
    return success();
  }
  if (k.kind == rt::Kernel::Where) {
    call.text(dtype(ins[1]));
    for (Value v : {ins[0], ins[1], ins[2], outs[0]})
      shape(call.value(pointer(v)), v);
    emitCall(k.loc, k.decl->entry, call);
    return success();
  }
  if (k.kind == rt::Kernel::Cast) {
    call.text(dtype(ins[0])).value(pointer(ins[0])).text(dtype(outs[0]))
        .value(pointer(outs[0])).lit(memrefOf(ins[0]).getNumElements());
    emitCall(k.loc, k.decl->entry, call);
    return success();
  }
  // copy: bytes, at least one per element.
  auto t = memrefOf(ins[0]);
  call.value(pointer(outs[0])).value(pointer(ins[0]))
      .lit(t.getNumElements() * std::max<int64_t>(t.getElementTypeBitWidth() / 8, 1));
  emitCall(k.loc, k.decl->entry, call);
  return success();
}

/// matmul (batched, broadcasting) and gemm; linear is a gemm over the
/// flattened leading dims of its input.
LogicalResult Emitter::emitLinalg(const Kernel &k) {
  ValueRange ins = k.ins, outs = k.outs;
  Call call(b.getContext());
  if (k.kind == rt::Kernel::Matmul) {
    call.text(dtype(ins[0]));
    for (Value v : {ins[0], ins[1], outs[0]})
      shape(call.value(pointer(v)), v);
    emitCall(k.loc, k.decl->entry, call);
    return success();
  }
  bool isLinear = k.kind == rt::Kernel::Linear;
  auto a = memrefOf(ins[0]), w = memrefOf(ins[1]);
  bool transA = !isLinear && k.boolAttr("trans_a");
  bool transB = k.boolAttr(isLinear ? "transpose_weight" : "trans_b");
  int64_t kDim = isLinear ? a.getShape().back() : a.getDimSize(transA ? 0 : 1);
  int64_t m = isLinear ? a.getNumElements() / kDim : a.getDimSize(transA ? 1 : 0);
  int64_t n = w.getDimSize(transB ? 0 : 1);
  call.text(dtype(ins[0])).value(pointer(ins[0])).value(pointer(ins[1]));
  if (ins.size() > 2)
    shape(call.value(pointer(ins[2])), ins[2]);
  else
    call.text("nullptr").lit(0).text("nullptr");
  call.value(pointer(outs[0])).lit(m).lit(n).lit(kDim).lit(transA).lit(transB);
  if (isLinear)
    call.real(1.0).real(1.0);
  else
    call.real(k.floatAttr("alpha")).real(k.floatAttr("beta"));
  emitCall(k.loc, k.decl->entry, call);
  return success();
}

/// softmax, layer_norm and rms_norm: along one axis of the input.
LogicalResult Emitter::emitNorm(const Kernel &k) {
  ValueRange ins = k.ins, outs = k.outs;
  Call call(b.getContext());
  if (k.kind == rt::Kernel::Softmax) {
    call.text(dtype(ins[0])).value(pointer(ins[0])).value(pointer(outs[0]));
    shape(call, ins[0]).lit(k.intAttr("axis"));
    emitCall(k.loc, k.decl->entry, call);
    return success();
  }
  // The bias (layer_norm's third input) is optional.
  call.text(dtype(ins[0])).value(pointer(ins[0])).value(pointer(ins[1]));
  ptrOrNull(call, ins, 2).value(pointer(outs[0]));
  shape(call, ins[0]).lit(k.intAttr("axis")).real(k.floatAttr("epsilon"));
  emitCall(k.loc, k.decl->entry, call);
  return success();
}

/// Data movement and selection: transpose, slice, expand, gather,
/// scatter_elements, trilu, topk.
LogicalResult Emitter::emitMovement(const Kernel &k) {
  ValueRange ins = k.ins, outs = k.outs;
  Call call(b.getContext());
  call.text(dtype(ins[0])).value(pointer(ins[0]));
  shape(call, ins[0]);
  if (k.kind == rt::Kernel::Transpose) {
    call.text(table(k.arrayAttr("perm"))).value(pointer(outs[0]));
  } else if (k.kind == rt::Kernel::Slice) {
    call.text(table(k.arrayAttr("starts"))).text(table(k.arrayAttr("steps")))
        .value(pointer(outs[0])).text(table(memrefOf(outs[0]).getShape()));
  } else if (k.kind == rt::Kernel::Expand) {
    shape(call.value(pointer(outs[0])), outs[0]);
  } else if (k.kind == rt::Kernel::Gather) {
    call.lit(k.intAttr("axis")).text(dtype(ins[1])).value(pointer(ins[1]));
    shape(call, ins[1]).value(pointer(outs[0]));
  } else if (k.kind == rt::Kernel::ScatterElements) {
    auto reduction =
        dyn_cast_or_null<nn::ScatterReductionAttr>(k.attr("reduction"));
    std::string kind =
        StringRef(nn::stringifyScatterReduction(
                      reduction ? reduction.getValue() : nn::ScatterReduction::none))
            .upper();
    call.lit(k.intAttr("axis")).text(dtype(ins[1]))
        .value(pointer(ins[1])).text(table(memrefOf(ins[1]).getShape()))
        .value(pointer(ins[2])).text("PARC_RT_SCATTER_" + kind)
        .value(pointer(outs[0]));
  } else if (k.kind == rt::Kernel::Trilu) {
    call.lit(k.intAttr("k")).lit(k.boolAttr("upper")).value(pointer(outs[0]));
  } else { // topk
    bool largest = !k.attr("largest") || k.boolAttr("largest");
    call.lit(k.intAttr("axis")).lit(k.intAttr("k")).lit(largest)
        .value(pointer(outs[0])).value(pointer(outs[1]));
  }
  emitCall(k.loc, k.decl->entry, call);
  return success();
}

/// concat and split: the pieces' pointers go through a local array the
/// runtime reads.
LogicalResult Emitter::emitConcatSplit(const Kernel &k) {
  Location loc = k.loc;
  bool isConcat = k.kind == rt::Kernel::Concat;
  ValueRange pieces = isConcat ? k.ins : k.outs;
  int64_t axis = k.intAttr("axis");
  SmallVector<int64_t> sizes;
  for (Value v : pieces)
    sizes.push_back(memrefOf(v).getDimSize(axis));
  // Numbers the later rt.repeat tables as when the array had a name of its
  // own, so that generated source stays byte-identical.
  ++counter;
  auto arrayType = emitc::ArrayType::get({(int64_t)pieces.size()}, voidPtr());
  auto var = emitc::VariableOp::create(
      b, loc, arrayType, emitc::OpaqueAttr::get(b.getContext(), ""));
  for (auto [i, v] : llvm::enumerate(pieces)) {
    Value index = emitc::LiteralOp::create(b, loc, b.getIndexType(),
                                           std::to_string(i));
    Value slot = emitc::SubscriptOp::create(
        b, loc, emitc::LValueType::get(voidPtr()), var, index);
    emitc::AssignOp::create(b, loc, slot, pointer(v));
  }
  Value whole = isConcat ? k.outs[0] : k.ins[0];
  Call call(b.getContext());
  call.text(dtype(whole));
  if (isConcat) {
    call.lit(pieces.size()).value(var).text(table(sizes));
    shape(call, whole).lit(axis).value(pointer(whole));
    emitCall(loc, k.decl->entry, call);
  } else {
    call.value(pointer(whole));
    shape(call, whole).lit(axis).lit(pieces.size()).text(table(sizes)).value(var);
    emitCall(loc, k.decl->entry, call);
  }
  return success();
}

/// conv and max_pool: a window over the spatial dims of NC... tensors.
LogicalResult Emitter::emitWindowed(const Kernel &k) {
  ValueRange ins = k.ins, outs = k.outs;
  Call call(b.getContext());
  call.text(dtype(ins[0])).value(pointer(ins[0]));
  shape(call, ins[0]);
  if (k.kind == rt::Kernel::Conv) {
    call.value(pointer(ins[1])).text(table(memrefOf(ins[1]).getShape()));
    ptrOrNull(call, ins, 2).lit(k.intAttr("group"));
  } else {
    call.text(table(k.arrayAttr("kernel_shape")));
  }
  call.text(table(k.arrayAttr("strides"))).text(table(k.arrayAttr("pads")))
      .text(table(k.arrayAttr("dilations"))).value(pointer(outs[0]))
      .text(table(memrefOf(outs[0]).getShape()));
  emitCall(k.loc, k.decl->entry, call);
  return success();
}

/// Attention's pieces: rotary embedding, the in-place KV cache write, the
/// scores and values products, and the fused kernel.
LogicalResult Emitter::emitAttention(const Kernel &k) {
  ValueRange ins = k.ins, outs = k.outs;
  Call call(b.getContext());
  if (k.kind == rt::Kernel::Rotary) {
    call.text(dtype(ins[0]));
    for (Value v : {ins[0], ins[1], ins[2], outs[0]})
      shape(call.value(pointer(v)), v);
    emitCall(k.loc, k.decl->entry, call);
    return success();
  }
  if (k.kind == rt::Kernel::KvCacheWrite) {
    // In place: outs[0] is the cache (a persistent input buffer).
    call.text(dtype(outs[0])).value(pointer(outs[0]));
    shape(call, outs[0])
        .value(pointer(ins[0]))
        .text(table(memrefOf(ins[0]).getShape()))
        .value(pointer(ins[1]))
        .lit(k.intAttr("axis"));
    emitCall(k.loc, k.decl->entry, call);
    return success();
  }
  if (k.kind == rt::Kernel::AttentionScores ||
      k.kind == rt::Kernel::AttentionValues) {
    // [B, H, S, ·] against [B, Hkv, T, ·]; the runtime maps head h to
    // key/value head h / (H / Hkv).
    call.text(dtype(ins[0]));
    for (Value v : {ins[0], ins[1], outs[0]})
      shape(call.value(pointer(v)), v);
    if (k.kind == rt::Kernel::AttentionScores)
      call.real(k.floatAttr("scale"));
    emitCall(k.loc, k.decl->entry, call);
    return success();
  }
  // attention_fused: q, k, v and an optional additive mask; with
  // `causal_offset`, query i sees keys j <= i + causal_offset.
  call.text(dtype(ins[0]));
  for (Value v : ins.take_front(3))
    shape(call.value(pointer(v)), v);
  if (ins.size() > 3)
    shape(call.value(pointer(ins[3])), ins[3]);
  else
    call.text("nullptr").lit(0).text("nullptr");
  shape(call.value(pointer(outs[0])), outs[0]);
  auto causal = dyn_cast_or_null<IntegerAttr>(k.attr("causal_offset"));
  call.real(k.floatAttr("scale"))
      .lit(causal ? 1 : 0)
      .lit(causal ? causal.getInt() : 0);
  emitCall(k.loc, k.decl->entry, call);
  return success();
}

/// Collectives and send/recv in their blocking form (commCall lays out the
/// arguments rt.start shares).
LogicalResult Emitter::emitCollective(const Kernel &k) {
  Call call(b.getContext());
  if (failed(commCall(k.op, k.kind, k.ins, k.outs, call)))
    return failure();
  emitCall(k.loc, k.decl->entry, call, k.name);
  return success();
}

LogicalResult Emitter::commCall(Operation *op, rt::Kernel kind, ValueRange ins,
                                ValueRange outs, Call &call) {
  using K = rt::Kernel;
  StringRef name = rt::kernelName(kind);
  if (kind == K::Send || kind == K::Recv) {
    // Pipeline traffic: the peer is a stage, the rank of the same
    // tensor-parallel index there; messages between two ranks match in
    // program order (tag 0).
    Value buf = kind == K::Send ? ins[0] : outs[0];
    auto peer = op->getAttrOfType<IntegerAttr>("peer");
    if (!peer)
      return op->emitOpError() << "'" << name << "' needs a peer";
    call.value(meshComm(op)).value(pointer(buf))
        .lit(memrefOf(buf).getNumElements()).text(dtype(buf))
        .lit(peer.getInt()).lit(0);
    return success();
  }
  if (kind == K::AllToAllV) {
    // Slices of the leading dim; both counts are buffers the runtime reads
    // when the exchange starts.
    auto axis = op->getAttrOfType<IntegerAttr>("axis");
    if (ins.size() != 3 || outs.size() != 1)
      return op->emitOpError("all_to_all_v takes the input, send and receive "
                             "counts, and one output");
    if (!axis || axis.getInt() != 0)
      return op->emitOpError("all_to_all_v runs on the leading dim only");
    int64_t sent = memrefOf(ins[0]).getDimSize(0),
            room = memrefOf(outs[0]).getDimSize(0);
    int64_t slice =
        memrefOf(ins[0]).getNumElements() / std::max<int64_t>(sent, 1);
    call.value(meshComm(op)).value(pointer(ins[0])).value(pointer(ins[1]))
        .lit(sent).value(pointer(outs[0])).value(pointer(ins[2])).lit(room)
        .lit(slice).text(dtype(ins[0]));
    return success();
  }
  if (kind == K::AllToAll) {
    // [ranks, block...]: block j goes to rank j, block i arrives from rank i.
    MemRefType in = memrefOf(ins[0]);
    call.value(meshComm(op)).value(pointer(ins[0])).value(pointer(outs[0]))
        .lit(in.getNumElements() / std::max<int64_t>(in.getDimSize(0), 1))
        .text(dtype(ins[0]));
    return success();
  }
  if (kind == K::AllGather) {
    // Rows: the input's dims before the gathered one; each row's elements:
    // the rest, of which an uneven gather keeps sizes[q] slices per rank;
    // then the one receiving rank, or -1 for all.
    MemRefType in = memrefOf(ins[0]);
    auto axis = op->getAttrOfType<IntegerAttr>("gather_axis");
    int64_t a = axis ? axis.getInt() : 0, rows = 1;
    for (int64_t d = 0; d < a; ++d)
      rows *= in.getDimSize(d);
    int64_t row = in.getNumElements() / std::max<int64_t>(rows, 1);
    call.value(meshComm(op)).value(pointer(ins[0])).value(pointer(outs[0]))
        .lit(rows).lit(row);
    if (auto sizes = op->getAttrOfType<DenseI64ArrayAttr>("sizes")) {
      int64_t slice = row / std::max<int64_t>(in.getDimSize(a), 1);
      SmallVector<int64_t> takes;
      for (int64_t size : sizes.asArrayRef())
        takes.push_back(size * slice);
      call.text(table(takes));
    } else {
      call.text("nullptr");
    }
    auto root = op->getAttrOfType<IntegerAttr>("root");
    call.lit(root ? root.getInt() : -1).text(dtype(ins[0]));
    return success();
  }
  if (kind != K::AllReduce && kind != K::ReduceScatter &&
      kind != K::LocalChunk)
    return op->emitOpError() << "no runtime collective named '" << name << "'";
  // Counts per rank: the input's, except that a reduce-scatter and a local
  // chunk name the block each rank keeps.
  bool perBlock = kind == K::ReduceScatter || kind == K::LocalChunk;
  call.value(meshComm(op)).value(pointer(ins[0])).value(pointer(outs[0]))
      .lit(memrefOf(perBlock ? outs[0] : ins[0]).getNumElements())
      .text(dtype(ins[0]));
  if (kind == K::AllReduce || kind == K::ReduceScatter)
    call.text("PARC_RT_REDUCE_SUM");
  return success();
}

void Emitter::emitStart(rt::StartOp op, Call &call) {
  Location loc = op.getLoc();
  Type request = ptr(opaque("parc_rt_request_t"));
  Value var = emitc::VariableOp::create(b, loc, emitc::LValueType::get(request),
                                        emitc::OpaqueAttr::get(b.getContext(), "nullptr"));
  Value address = emitc::ApplyOp::create(b, loc, ptr(request), "&", var);
  call.value(address);
  // The entry's _start form (all_to_all_v: parc_rt_all_to_all_v_slices).
  std::string name = (op.getCallee() + "_start").str();
  emitCall(loc, (rt::lookupKernel(op.getCallee())->entry + "_start").str(),
           call, name);
  requests[op.getRequest()] = var;
  inFlight.insert(op.getRequest());
}

void Emitter::emitWait(rt::WaitOp op) {
  Location loc = op.getLoc();
  Value var = requests.lookup(op.getRequest());
  Call call(b.getContext());
  call.value(emitc::LoadOp::create(b, loc, ptr(opaque("parc_rt_request_t")), var));
  // Named after what it waits for: the trace tells a neighbour stage's
  // data (the pipeline bubble) from a collective inside the stage.
  auto start = op.getRequest().getDefiningOp<rt::StartOp>();
  emitCall(loc, "parc_rt_wait", call, (start.getCallee() + "_wait").str());
  inFlight.remove(op.getRequest());
}

void Emitter::emitProgress(Location loc) {
  for (Value request : inFlight) {
    Call call(b.getContext());
    call.value(emitc::LoadOp::create(b, loc, ptr(opaque("parc_rt_request_t")),
                                     requests.lookup(request)))
        .text("nullptr");
    emitCall(loc, "parc_rt_test", call);
  }
}

/// The MoE activation enumerator of a kernel's `activation` attribute.
static std::string moeActivation(Operation *op) {
  auto act = op->getAttrOfType<nn::MoeActivationAttr>("activation");
  return "PARC_RT_MOE_" +
         StringRef(nn::stringifyMoeActivation(act ? act.getValue()
                                                  : nn::MoeActivation::silu))
             .upper();
}

/// nn.moe: parc_rt_moe. The expert count is the router's.
LogicalResult Emitter::emitMoe(const Kernel &k) {
  rt::KernelOp op = k.op;
  Location loc = op.getLoc();
  ValueRange ins = op.getIns(), outs = op.getOuts();
  if (ins.size() < 4 || ins.size() > 5 || outs.size() != 1)
    return op.emitOpError("moe takes x, logits, fc1, fc2 (, fc3) and one output");
  auto fc1 = memrefOf(ins[2]);
  int64_t hidden = fc1.getDimSize(1), ffn = fc1.getDimSize(2);
  int64_t experts = memrefOf(ins[1]).getShape().back();
  int64_t tokens = memrefOf(ins[0]).getNumElements() / hidden;
  auto topK = op->getAttrOfType<IntegerAttr>("top_k");
  auto normalize = op->getAttrOfType<BoolAttr>("normalize");
  auto capacity = op->getAttrOfType<IntegerAttr>("capacity");
  if (!topK)
    return op.emitOpError("moe needs a top_k");
  Call call(b.getContext());
  call.text(dtype(ins[0]));
  for (size_t i = 0; i < 4; ++i)
    call.value(pointer(ins[i]));
  (ins.size() == 5 ? call.value(pointer(ins[4])) : call.text("nullptr"));
  call.value(pointer(outs[0]))
      .lit(tokens).lit(hidden).lit(ffn).lit(experts).lit(topK.getInt())
      .lit(!normalize || normalize.getValue())
      .text(moeActivation(op))
      .lit(capacity ? capacity.getInt() : 0);
  node(call, loc);
  emitCall(loc, k.decl->entry, call);
  return success();
}

LogicalResult Emitter::emitMoeStep(const Kernel &k) {
  rt::KernelOp op = k.op;
  StringRef name = op.getCallee();
  Location loc = op.getLoc();
  ValueRange ins = op.getIns(), outs = op.getOuts();
  Call call(b.getContext());
  auto dim = [&](Value v, unsigned d) { return memrefOf(v).getDimSize(d); };
  auto expect = [&](size_t nIns, size_t nOuts) -> LogicalResult {
    if (ins.size() == nIns && outs.size() == nOuts)
      return success();
    return op.emitOpError() << "'" << name << "' takes " << nIns
                            << " inputs and " << nOuts << " outputs";
  };
  if (k.kind == rt::Kernel::MoeRoute) {
    auto topK = op->getAttrOfType<IntegerAttr>("top_k");
    auto normalize = op->getAttrOfType<BoolAttr>("normalize");
    if (failed(expect(1, 3)) || !topK)
      return failure();
    call.text(dtype(ins[0])).value(pointer(ins[0]));
    for (Value v : outs)
      call.value(pointer(v));
    call.lit(dim(ins[0], 0)).lit(dim(ins[0], 1)).lit(topK.getInt())
        .lit(!normalize || normalize.getValue());
    emitCall(loc, k.decl->entry, call);
    return success();
  }
  if (k.kind == rt::Kernel::MoePermute) {
    auto capacity = op->getAttrOfType<IntegerAttr>("capacity");
    if (failed(expect(3, 5)))
      return failure();
    call.value(meshComm(op)).text(dtype(ins[0]));
    for (Value v : llvm::concat<Value>(ins, outs))
      call.value(pointer(v));
    // experts = members × local experts, from the layout [members, local].
    call.lit(dim(ins[0], 0)).lit(dim(ins[0], 1))
        .lit(dim(outs[2], 0) * dim(outs[2], 1)).lit(dim(ins[1], 1))
        .lit(capacity ? capacity.getInt() : 0);
    node(call, loc);
    emitCall(loc, k.decl->entry, call);
    return success();
  }
  if (k.kind == rt::Kernel::MoeExperts) {
    if (ins.size() < 4 || ins.size() > 5 || outs.size() != 1)
      return op.emitOpError("moe_experts takes rows, layout, fc1, fc2 (, fc3) "
                            "and one output");
    auto fc1 = memrefOf(ins[2]);
    call.text(dtype(ins[2]));
    for (size_t i = 0; i < 4; ++i)
      call.value(pointer(ins[i]));
    (ins.size() == 5 ? call.value(pointer(ins[4])) : call.text("nullptr"));
    call.value(pointer(outs[0])).lit(dim(ins[0], 0)).lit(dim(ins[1], 0))
        .lit(fc1.getDimSize(0)).lit(fc1.getDimSize(1)).lit(fc1.getDimSize(2))
        .text(moeActivation(op));
    emitCall(loc, k.decl->entry, call);
    return success();
  }
  if (k.kind == rt::Kernel::MoeCombine) {
    if (failed(expect(3, 1)))
      return failure();
    call.text(dtype(outs[0]));
    for (Value v : llvm::concat<Value>(ins, outs))
      call.value(pointer(v));
    call.lit(dim(outs[0], 0)).lit(dim(outs[0], 1)).lit(dim(ins[2], 1));
    emitCall(loc, k.decl->entry, call);
    return success();
  }
  return op.emitOpError() << "no runtime kernel named '" << name << "'";
}

Value Emitter::pointerCall(Location loc, StringRef helper, Call &c) {
  return emitc::CallOpaqueOp::create(b, loc, voidPtr(), helper,
                                     b.getArrayAttr(c.args), ArrayAttr(),
                                     c.operands)
      .getResult(0);
}

LogicalResult Emitter::emitBuffer(Operation &op) {
  Location loc = op.getLoc();
  Call at(b.getContext());
  // A buffer only rolled layers read needs no variable: the loop reads its
  // table entry.
  bool onlyRepeated = op.getNumResults() == 1 && !op.getResult(0).use_empty() &&
                      llvm::all_of(op.getResult(0).getUsers(),
                                   llvm::IsaPred<rt::RepeatOp>);
  if (auto alloc = dyn_cast<rt::AllocOp>(op)) {
    if (!alloc.getOffset())
      return alloc.emitOpError("is not placed: run rt-plan-memory first");
    if (onlyRepeated)
      return success();
    pointers[alloc] = pointerCall(
        loc, "parc_rt_at", at.value(arena).lit(alloc.getOffsetAttr().getInt()));
  } else if (auto in = dyn_cast<rt::InputOp>(op)) {
    if (in.getIndex() >= inputDescs.size())
      inputDescs.resize(in.getIndex() + 1);
    inputDescs[in.getIndex()] = {in.getName().str(), in.getType()};
    if (auto role = in->getAttrOfType<StringAttr>("role")) {
      inputRoles.resize(std::max<size_t>(inputRoles.size(), in.getIndex() + 1));
      inputRoles[in.getIndex()] = llvm::StringSwitch<int64_t>(role.getValue())
                                      .Case("cache", 1)
                                      .Case("position", 2)
                                      .Case("tokens", 3)
                                      .Case("positions", 4)
                                      .Case("attention_mask", 5)
                                      .Default(0);
    }
    if (onlyRepeated)
      return success();
    pointers[in] =
        pointerCall(loc, "parc_rt_slot", at.value(inputs).lit(in.getIndex()));
  } else if (auto w = dyn_cast<rt::WeightOp>(op)) {
    auto [it, fresh] = weightIndex.try_emplace(w.getName(), weightDescs.size());
    if (fresh)
      weightDescs.push_back({w.getName().str(), w.getType()});
    if (onlyRepeated)
      return success();
    pointers[w] =
        pointerCall(loc, "parc_rt_slot", at.value(weights).lit(it->second));
  } else if (auto view = dyn_cast<rt::ViewOp>(op)) {
    pointers[view] = pointer(view.getSource());
  } else if (auto out = dyn_cast<rt::OutputOp>(op)) {
    if (out.getIndex() >= outputDescs.size())
      outputDescs.resize(out.getIndex() + 1);
    outputDescs[out.getIndex()] = {out.getName().str(), out.getBuffer().getType()};
    Call c(b.getContext());
    c.value(outputs).lit(out.getIndex()).value(pointer(out.getBuffer()));
    emitc::CallOpaqueOp::create(b, loc, TypeRange{}, "parc_rt_publish",
                                b.getArrayAttr(c.args), ArrayAttr(), c.operands);
  } else {
    return op.emitOpError("cannot be emitted as C++");
  }
  return success();
}

LogicalResult Emitter::emitCallOp(Operation &op) {
  if (auto kernel = dyn_cast<rt::KernelOp>(op)) {
    if (failed(emitKernel(kernel)))
      return failure();
    emitProgress(op.getLoc());
  } else if (auto start = dyn_cast<rt::StartOp>(op)) {
    Call call(b.getContext());
    if (failed(commCall(start, rt::lookupKernel(start.getCallee())->kernel,
                        start.getIns(),
                        start.getOuts(), call)))
      return failure();
    emitStart(start, call);
  } else {
    emitWait(cast<rt::WaitOp>(op));
  }
  return success();
}

/// The helper and base a binding's pointer is read with, and its table
/// entry in one iteration.
struct Binding {
  StringRef helper;
  Value base;
  int64_t entry;
};

LogicalResult Emitter::emitRepeat(rt::RepeatOp op) {
  Location loc = op.getLoc();
  Block &body = op.getBody().front();
  const int64_t count = op.getCount(), width = body.getNumArguments();
  const int64_t calls = std::distance(body.begin(), body.end());
  // Row i: iteration i's binding entries, then its calls' node names.
  auto bindingOf = [&](Value v) -> FailureOr<Binding> {
    while (auto view = v.getDefiningOp<rt::ViewOp>())
      v = view.getSource();
    if (auto alloc = v.getDefiningOp<rt::AllocOp>(); alloc && alloc.getOffset())
      return Binding{"parc_rt_at", arena, alloc.getOffsetAttr().getInt()};
    if (auto w = v.getDefiningOp<rt::WeightOp>())
      return Binding{"parc_rt_slot", weights, weightIndex.lookup(w.getName())};
    if (auto in = v.getDefiningOp<rt::InputOp>())
      return Binding{"parc_rt_slot", inputs, static_cast<int64_t>(in.getIndex())};
    return failure();
  };
  SmallVector<int64_t> cells;
  SmallVector<Binding> first;
  for (int64_t i = 0; i < count; ++i) {
    for (auto [a, v] : llvm::enumerate(op.getIteration(i))) {
      FailureOr<Binding> binding = bindingOf(v);
      if (failed(binding))
        return op.emitOpError() << "binding " << a << " of iteration " << i
                                << " is not an arena, weight or input buffer";
      if (i == 0)
        first.push_back(*binding);
      else if (binding->helper != first[a].helper || binding->base != first[a].base)
        return op.emitOpError() << "binding " << a << " of iteration " << i
                                << " is another kind of buffer than iteration 0's";
      cells.push_back(binding->entry);
    }
    for (int64_t j = 0; j < calls; ++j)
      cells.push_back(strOffset(nodeName(
          cast<LocationAttr>(op.getLocations()[i * calls + j]))));
  }
  std::string name = "parc_repeat_" + std::to_string(counter++);
  auto tableType = emitc::ArrayType::get({count, width + calls}, b.getI64Type());
  global(name, tableType,
         DenseIntElementsAttr::get(
             RankedTensorType::get({count, width + calls}, b.getI64Type()),
             ArrayRef<int64_t>(cells)));

  auto literal = [&](int64_t v) {
    return emitc::LiteralOp::create(b, loc, b.getIndexType(), std::to_string(v));
  };
  auto loop = emitc::ForOp::create(b, loc, literal(0), literal(count), literal(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value table = emitc::GetGlobalOp::create(b, loc, tableType, name);
  auto cell = [&](int64_t column) -> Value {
    Value at = emitc::SubscriptOp::create(
        b, loc, emitc::LValueType::get(b.getI64Type()), table,
        ValueRange{loop.getInductionVar(), literal(column)});
    return emitc::LoadOp::create(b, loc, b.getI64Type(), at);
  };
  for (auto [a, arg] : llvm::enumerate(body.getArguments())) {
    Call at(b.getContext());
    pointers[arg] =
        pointerCall(loc, first[a].helper, at.value(first[a].base).value(cell(a)));
  }
  for (auto [j, inner] : llvm::enumerate(body)) {
    Call nameArgs(b.getContext());
    nameArgs.text("parc_strings").value(cell(width + j));
    nodeOverride = emitc::CallOpaqueOp::create(
                       b, inner.getLoc(), ptr(opaque("const char")),
                       "parc_rt_string", b.getArrayAttr(nameArgs.args),
                       ArrayAttr(), nameArgs.operands)
                       .getResult(0);
    LogicalResult emitted = emitCallOp(inner);
    nodeOverride = Value();
    if (failed(emitted))
      return failure();
  }
  return success();
}

LogicalResult Emitter::check(func::FuncOp program) {
  // Every buffer element type must have a runtime dtype.
  WalkResult bad = program.walk([&](Operation *op) {
    for (Value v : op->getResults())
      if (auto t = dyn_cast<MemRefType>(v.getType()))
        if (!rt::dtypeOf(t.getElementType())) {
          op->emitOpError() << "element type " << t.getElementType()
                            << " is not supported by the runtime";
          return WalkResult::interrupt();
        }
    return WalkResult::advance();
  });
  return failure(bad.wasInterrupted() || failed(checkNames(program)));
}

FailureOr<Emitter::ProgramTables> Emitter::emitForward(func::FuncOp program,
                                                       StringRef fnName) {
  // The forward function: (ctx, arena, inputs, weights, outputs) -> void.
  Type ptrType = voidPtr();
  auto fnType = b.getFunctionType({ptr(opaque("parc_rt_context_t")), ptrType,
                                   ptr(ptrType), ptr(ptrType), ptr(ptrType)},
                                  {});
  b.setInsertionPointToEnd(module.getBody());
  auto forward = emitc::FuncOp::create(b, program.getLoc(), fnName, fnType);
  // Tables go before the first forward: every one is declared before any
  // function or table reads it.
  if (!anchor)
    anchor = forward;
  forward.setSpecifiersAttr(b.getStrArrayAttr({"static"}));
  Block *entry = forward.addEntryBlock();
  ctx = entry->getArgument(0);
  arena = entry->getArgument(1);
  inputs = entry->getArgument(2);
  weights = entry->getArgument(3);
  outputs = entry->getArgument(4);
  b.setInsertionPointToEnd(entry);

  for (Operation &op : program.getBody().front().without_terminator()) {
    if (auto repeat = dyn_cast<rt::RepeatOp>(op)) {
      if (failed(emitRepeat(repeat)))
        return failure();
    } else if (isa<rt::KernelOp, rt::StartOp, rt::WaitOp>(op)) {
      if (failed(emitCallOp(op)))
        return failure();
    } else if (failed(emitBuffer(op))) {
      return failure();
    }
  }
  emitc::ReturnOp::create(b, program.getLoc(), Value());
  ProgramTables tables{std::move(inputDescs), std::move(outputDescs),
                       std::move(inputRoles)};
  inputDescs.clear(), outputDescs.clear(), inputRoles.clear();
  pointers.clear(), requests.clear(), inFlight.clear();
  return tables;
}

std::string Emitter::programInit(func::FuncOp program, StringRef name,
                                 StringRef fnName, StringRef prefix,
                                 ProgramTables &t, std::string &wTable,
                                 StringRef prefillRef) {
  std::string inTable =
      descriptors(("parc_" + prefix + "inputs").str(), t.inputs);
  if (wTable.empty())
    wTable = descriptors("parc_weights", weightDescs);
  std::string outTable =
      descriptors(("parc_" + prefix + "outputs").str(), t.outputs);
  auto arenaSize = program->getAttrOfType<IntegerAttr>("rt.arena_size");
  // The mesh (the runtime checks the world against it and splits it into
  // groups) and the pipeline shape (for the bubble it reports).
  std::string meshInit = ", 0, nullptr";
  if (auto mesh = module->getAttrOfType<DictionaryAttr>("rt.mesh"))
    if (auto shape = mesh.getAs<DenseI64ArrayAttr>("shape"))
      meshInit = ", " + std::to_string(shape.size()) + ", " + table(shape.asArrayRef());
  std::string pipelineInit = ", 1, 1";
  if (auto pipeline = module->getAttrOfType<DictionaryAttr>("rt.pipeline")) {
    auto get = [&](StringRef key) {
      auto v = pipeline.getAs<IntegerAttr>(key);
      return std::to_string(v ? v.getInt() : 1);
    };
    pipelineInit = ", " + get("stages") + ", " + get("micro_batches") + ", " +
                   get("virtual_stages");
  }
  // Generation: the inputs' roles and the cache capacity (nn-kv-cache),
  // and the prefill program sharing the weights and caches.
  std::string generateInit;
  if (auto capacity = program->getAttrOfType<IntegerAttr>("rt.max_seq")) {
    t.roles.resize(t.inputs.size());
    generateInit =
        ", " + table(t.roles) + ", " + std::to_string(capacity.getInt());
    if (!prefillRef.empty())
      generateInit += ", " + prefillRef.str();
    if (pipelineInit == ", 1, 1")
      pipelineInit += ", 1"; // virtual_stages precedes the roles
  }
  return "{" + str(name) + ", " +
         std::to_string(arenaSize ? arenaSize.getInt() : 0) + ", " +
         std::to_string(t.inputs.size()) + ", " + inTable + ", " +
         std::to_string(weightDescs.size()) + ", " + wTable + ", " +
         std::to_string(t.outputs.size()) + ", " + outTable + ", " +
         fnName.str() +
         // Zero-initialised when absent: no mesh, no pipeline, no token
         // loop.
         (meshInit == ", 0, nullptr" && pipelineInit == ", 1, 1" &&
                  generateInit.empty()
              ? std::string()
              : meshInit + pipelineInit + generateInit) +
         "}";
}

void Emitter::emitProgramGlobal(StringRef name, std::string init) {
  b.setInsertionPointToEnd(module.getBody());
  emitc::GlobalOp::create(b, module.getLoc(), name, opaque("parc_rt_program_t"),
                          emitc::OpaqueAttr::get(b.getContext(), init),
                          /*extern=*/false, /*static=*/true, /*const=*/true);
}

LogicalResult Emitter::run(func::FuncOp program, func::FuncOp prefill) {
  MLIRContext *context = module.getContext();
  if (failed(check(program)) || (prefill && failed(check(prefill))))
    return failure();
  b.setInsertionPointToEnd(module.getBody());
  auto include = emitc::IncludeOp::create(b, module.getLoc(), "parc/program.h",
                                          /*is_standard_include=*/false);
  // One weight table for both programs (weightIndex is by name): the
  // prefill's forward reads the decode program's slots.
  FailureOr<ProgramTables> main = emitForward(program, "parc_forward");
  if (failed(main))
    return failure();
  FailureOr<ProgramTables> pre;
  if (prefill && failed(pre = emitForward(prefill, "parc_prefill_forward")))
    return failure();

  // Metadata and main, after the functions they point to.
  std::string programName = "main";
  if (auto n = module->getAttrOfType<StringAttr>("rt.program"))
    programName = n.str();
  std::string wTable;
  std::string mainInit =
      programInit(program, programName, "parc_forward", "", *main, wTable,
                  prefill ? "&parc_prefill_program" : "");
  std::string preInit;
  if (prefill)
    preInit = programInit(prefill, programName + ".prefill",
                          "parc_prefill_forward", "prefill_", *pre, wTable, "");
  emitStrings(include);
  anchor = nullptr;
  if (prefill)
    emitProgramGlobal("parc_prefill_program", preInit);
  emitProgramGlobal("parc_program", mainInit);
  b.setInsertionPointToEnd(module.getBody());
  auto mainFn = emitc::FuncOp::create(
      b, program.getLoc(), "main",
      b.getFunctionType({b.getI32Type(), ptr(ptr(opaque("char")))},
                        {b.getI32Type()}));
  Block *mainEntry = mainFn.addEntryBlock();
  b.setInsertionPointToEnd(mainEntry);
  Call c(context);
  c.value(mainEntry->getArgument(0)).value(mainEntry->getArgument(1))
      .text("&parc_program");
  Value rc = emitc::CallOpaqueOp::create(b, program.getLoc(), b.getI32Type(),
                                         "parc_rt_program_main",
                                         b.getArrayAttr(c.args), ArrayAttr(),
                                         c.operands)
                 .getResult(0);
  emitc::ReturnOp::create(b, program.getLoc(), rc);
  program.erase();
  if (prefill)
    prefill.erase();
  return success();
}

struct ConvertRTToEmitCPass
    : parc::impl::ConvertRTToEmitCBase<ConvertRTToEmitCPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main) {
      module.emitError("expected the rt program as func.func @main");
      return signalPassFailure();
    }
    // A generating program's prefill (parc compile --prefill-len), emitted
    // into the same file.
    auto prefill = module.lookupSymbol<func::FuncOp>("prefill");
    if (failed(Emitter(module).run(main, prefill)))
      signalPassFailure();
  }
};

} // namespace
