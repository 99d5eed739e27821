//===- RTKernels.td - the compiler -> runtime contract ----*- tablegen -*-===//
//
// Every runtime entry point that generated code calls, declared once. An
// `RT_Entry` is a C function of runtime.h / program.h with its signature;
// an `RT_Kernel` is an `rt.kernel` / `rt.start` callee: the entry it calls,
// how many buffers it reads and writes, its typed parameters (the op's
// attributes), and the nn/dist ops convert-nn-to-rt lowers to it.
// parc-tblgen turns this file into
//   - the table the rt.kernel and rt.start verifiers check against
//     (-gen-rt-kernel-decls / -gen-rt-kernel-defs),
//   - a translation unit of static_asserts that runtime.h declares each
//     entry with this signature (-gen-rt-abi-check),
// and unittests/Dialect/RTKernelsTest.cpp checks that every nn/dist op has a
// kernel (or says why not) and that generic lowerings pass exactly the
// declared parameters.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_RT_KERNELS
#define PARC_RT_KERNELS

//===----------------------------------------------------------------------===//
// C entry points
//===----------------------------------------------------------------------===//

/// A C function generated code calls: `result(params)` in the header's
/// spelling (types only). With `hasStart`, `symbol_start` also exists and
/// takes a trailing `parc_rt_request_t **`. An entry no kernel calls is a
/// `support` one, which convert-rt-to-emitc emits around kernels.
class RT_Entry<string sym, string res, list<string> ps, bit start = 0> {
  string symbol = sym;
  string result = res;
  list<string> params = ps;
  bit hasStart = start;
  bit support = 0;
}
class RT_SupportEntry<string sym, string res, list<string> ps>
    : RT_Entry<sym, res, ps> {
  let support = 1;
}

defvar Status = "parc_rt_status_t";
defvar Comm = "parc_rt_comm_t *";
defvar DType = "parc_rt_dtype_t";
defvar In = "const void *";
defvar Out = "void *";
defvar I64 = "int64_t";
defvar Dims = "const int64_t *";
// A buffer with its shape: pointer, rank, dims.
defvar InShaped = [In, I64, Dims];
defvar OutShaped = [Out, I64, Dims];

// Calls around every kernel (RTToEmitC's emitCall, emitProgress).
def RT_EntryCheck : RT_SupportEntry<"parc_rt_check", "void",
    ["parc_rt_context_t *", Status, "const char *"]>;
def RT_EntryCheckComm : RT_SupportEntry<"parc_rt_check_comm", "void",
    ["parc_rt_context_t *", Status, "const char *", "const char *"]>;
def RT_EntryMeshComm : RT_SupportEntry<"parc_rt_mesh_comm", Comm,
    ["parc_rt_context_t *", I64]>;
def RT_EntryWait : RT_SupportEntry<"parc_rt_wait", Status,
    ["parc_rt_request_t *"]>;
def RT_EntryTest : RT_SupportEntry<"parc_rt_test", Status,
    ["parc_rt_request_t *", "int *"]>;
def RT_EntryAt : RT_SupportEntry<"parc_rt_at", "void *", ["void *", I64]>;
def RT_EntrySlot : RT_SupportEntry<"parc_rt_slot", "void *", ["void **", I64]>;
def RT_EntryString : RT_SupportEntry<"parc_rt_string", "const char *",
    ["const int8_t *", I64]>;
def RT_EntryPublish : RT_SupportEntry<"parc_rt_publish", "void",
    ["void **", I64, "void *"]>;
def RT_EntryProgramMain : RT_SupportEntry<"parc_rt_program_main", "int",
    ["int", "char **", "const parc_rt_program_t *"]>;

// Compute.
def RT_EntryUnary : RT_Entry<"parc_rt_unary", Status,
    ["parc_rt_unary_op_t", DType, In, Out, I64]>;
def RT_EntryBinary : RT_Entry<"parc_rt_binary", Status,
    !listconcat(["parc_rt_binary_op_t", DType], InShaped, InShaped, OutShaped)>;
def RT_EntryWhere : RT_Entry<"parc_rt_where", Status,
    !listconcat([DType], InShaped, InShaped, InShaped, OutShaped)>;
def RT_EntryCast : RT_Entry<"parc_rt_cast", Status, [DType, In, DType, Out, I64]>;
def RT_EntryCopy : RT_Entry<"parc_rt_copy", Status, [Out, In, "size_t"]>;
def RT_EntryMatmul : RT_Entry<"parc_rt_matmul", Status,
    !listconcat([DType], InShaped, InShaped, OutShaped)>;
def RT_EntryGemm : RT_Entry<"parc_rt_gemm", Status,
    [DType, In, In, In, I64, Dims, Out, I64, I64, I64, "int", "int", "float",
     "float"]>;
def RT_EntrySoftmax : RT_Entry<"parc_rt_softmax", Status,
    [DType, In, Out, I64, Dims, I64]>;
defvar NormParams = [DType, In, In, In, Out, I64, Dims, I64, "float"];
def RT_EntryLayerNorm : RT_Entry<"parc_rt_layer_norm", Status, NormParams>;
def RT_EntryRmsNorm : RT_Entry<"parc_rt_rms_norm", Status, NormParams>;
def RT_EntryReduce : RT_Entry<"parc_rt_reduce", Status,
    ["parc_rt_reduction_t", DType, In, I64, Dims, I64, Dims, Out]>;
def RT_EntryTopk : RT_Entry<"parc_rt_topk", Status,
    [DType, In, I64, Dims, I64, I64, "int", Out, Out]>;
def RT_EntryTranspose : RT_Entry<"parc_rt_transpose", Status,
    [DType, In, I64, Dims, Dims, Out]>;
def RT_EntrySlice : RT_Entry<"parc_rt_slice", Status,
    [DType, In, I64, Dims, Dims, Dims, Out, Dims]>;
def RT_EntryConcat : RT_Entry<"parc_rt_concat", Status,
    [DType, I64, "const void *const *", Dims, I64, Dims, I64, Out]>;
def RT_EntrySplit : RT_Entry<"parc_rt_split", Status,
    [DType, In, I64, Dims, I64, I64, Dims, "void *const *"]>;
def RT_EntryGather : RT_Entry<"parc_rt_gather", Status,
    [DType, In, I64, Dims, I64, DType, In, I64, Dims, Out]>;
def RT_EntryScatterElements : RT_Entry<"parc_rt_scatter_elements", Status,
    [DType, In, I64, Dims, I64, DType, In, Dims, In,
     "parc_rt_scatter_reduction_t", Out]>;
def RT_EntryExpand : RT_Entry<"parc_rt_expand", Status,
    [DType, In, I64, Dims, Out, I64, Dims]>;
def RT_EntryTrilu : RT_Entry<"parc_rt_trilu", Status,
    [DType, In, I64, Dims, I64, "int", Out]>;
def RT_EntryConv : RT_Entry<"parc_rt_conv", Status,
    [DType, In, I64, Dims, In, Dims, In, I64, Dims, Dims, Dims, Out, Dims]>;
def RT_EntryMaxPool : RT_Entry<"parc_rt_max_pool", Status,
    [DType, In, I64, Dims, Dims, Dims, Dims, Dims, Out, Dims]>;
def RT_EntryRotary : RT_Entry<"parc_rt_rotary_full", Status,
    !listconcat([DType], InShaped, InShaped, InShaped, OutShaped)>;
def RT_EntryKVCacheWrite : RT_Entry<"parc_rt_kv_cache_write", Status,
    [DType, Out, I64, Dims, In, Dims, In, I64]>;
def RT_EntryAttentionScores : RT_Entry<"parc_rt_attention_scores", Status,
    !listconcat([DType], InShaped, InShaped, OutShaped, ["float"])>;
def RT_EntryAttentionValues : RT_Entry<"parc_rt_attention_values", Status,
    !listconcat([DType], InShaped, InShaped, OutShaped)>;
def RT_EntryAttentionFused : RT_Entry<"parc_rt_attention_fused", Status,
    !listconcat([DType], InShaped, InShaped, InShaped, InShaped, OutShaped,
                ["float", "int32_t", I64])>;
def RT_EntryMoe : RT_Entry<"parc_rt_moe", Status,
    [DType, In, In, In, In, In, Out, I64, I64, I64, I64, I64, "int",
     "parc_rt_moe_activation_t", I64, "const char *"]>;
def RT_EntryMoeRoute : RT_Entry<"parc_rt_moe_route", Status,
    [DType, In, Out, Out, Out, I64, I64, I64, "int"]>;
def RT_EntryMoePermute : RT_Entry<"parc_rt_moe_permute", Status,
    [Comm, DType, In, In, In, Out, Out, Out, Out, Out, I64, I64, I64, I64, I64,
     "const char *"]>;
def RT_EntryMoeExperts : RT_Entry<"parc_rt_moe_experts", Status,
    [DType, In, In, In, In, In, Out, I64, I64, I64, I64, I64,
     "parc_rt_moe_activation_t"]>;
def RT_EntryMoeCombine : RT_Entry<"parc_rt_moe_combine", Status,
    [DType, In, In, In, Out, I64, I64, I64]>;

// Communication.
def RT_EntryAllReduce : RT_Entry<"parc_rt_all_reduce", Status,
    [Comm, In, Out, I64, DType, "parc_rt_reduce_op_t"], 1>;
// Gathers along any dim: rows before it, elements from it on; per rank the
// leading elements of each row kept (uneven), or null; to every rank (-1)
// or to one.
def RT_EntryAllGatherRows : RT_Entry<"parc_rt_all_gather_rows", Status,
    [Comm, In, Out, I64, I64, Dims, "int", DType], 1>;
def RT_EntryReduceScatter : RT_Entry<"parc_rt_reduce_scatter", Status,
    [Comm, In, Out, I64, DType, "parc_rt_reduce_op_t"], 1>;
def RT_EntryLocalChunk : RT_Entry<"parc_rt_local_chunk", Status,
    [Comm, In, Out, I64, DType]>;
def RT_EntryAllToAll : RT_Entry<"parc_rt_all_to_all", Status,
    [Comm, In, Out, I64, DType], 1>;
def RT_EntryAllToAllV : RT_Entry<"parc_rt_all_to_all_v_slices", Status,
    [Comm, In, In, I64, Out, In, I64, I64, DType], 1>;
def RT_EntrySend : RT_Entry<"parc_rt_send", Status,
    [Comm, In, I64, DType, "int", "int"], 1>;
def RT_EntryRecv : RT_Entry<"parc_rt_recv", Status,
    [Comm, Out, I64, DType, "int", "int"], 1>;

//===----------------------------------------------------------------------===//
// runtime.h functions generated code does not call
//===----------------------------------------------------------------------===//

/// Functions of runtime.h / program.h that no kernel and no support call
/// reaches, deliberately: `why` says who calls them instead.
/// parc-rt-kernels-tests fails on a function of those headers that is
/// neither an RT_Entry nor listed here, so a runtime entry point that lost
/// its compiler producer (or never had one) is a decision, not an accident.
class RT_RuntimeOnly<list<string> syms, string w> {
  list<string> symbols = syms;
  string why = w;
}
def : RT_RuntimeOnly<["parc_rt_status_string", "parc_rt_last_error",
    "parc_rt_dtype_size", "parc_rt_dtype_name", "parc_rt_init",
    "parc_rt_finalize", "parc_rt_abort", "parc_rt_context_rank",
    "parc_rt_context_size", "parc_rt_context_set_timeout",
    "parc_rt_context_world", "parc_rt_comm_split", "parc_rt_comm_rank",
    "parc_rt_comm_size", "parc_rt_comm_release", "parc_rt_comm_time",
    "parc_rt_set_num_threads", "parc_rt_num_threads"],
    "the host API: the launcher (runtime/src/program/main.cpp) and tools "
    "set up the context and communicators">;
def : RT_RuntimeOnly<["parc_rt_arena_create", "parc_rt_arena_base",
    "parc_rt_arena_size", "parc_rt_arena_release", "parc_rt_free",
    "parc_rt_weights_open", "parc_rt_weights_release", "parc_rt_weights_count",
    "parc_rt_weights_name", "parc_rt_weights_get",
    "parc_rt_weights_get_checked", "parc_rt_safetensors_write",
    "parc_rt_npy_info", "parc_rt_npy_read_into", "parc_rt_npy_read",
    "parc_rt_npy_write", "parc_rt_moe_report_write"],
    "the host API: the launcher owns the arena, the weight shards and the "
    "input / output files">;
def : RT_RuntimeOnly<["parc_rt_broadcast", "parc_rt_broadcast_start"],
    "the token loop (runtime/src/program/generate.cpp) broadcasts each "
    "chosen token; no dist op broadcasts">;
def : RT_RuntimeOnly<["parc_rt_barrier", "parc_rt_barrier_start"],
    "the launcher's barriers around timed runs">;
def : RT_RuntimeOnly<["parc_rt_all_gather", "parc_rt_all_gather_start"],
    "the leading-dim gather of the launcher's data-parallel batch "
    "(runtime/src/program/main.cpp); dist.all_gather calls the _rows form">;
def : RT_RuntimeOnly<["parc_rt_wait_all"],
    "host code; generated code waits each request with its own rt.wait">;
def : RT_RuntimeOnly<["parc_rt_all_to_all_v", "parc_rt_all_to_all_v_start"],
    "the exchange by counts and displacements the runtime's MoE steps use "
    "(runtime/src/moe_ep.cpp); dist.all_to_all_v calls the _slices form">;
def : RT_RuntimeOnly<["parc_rt_fill", "parc_rt_log_softmax", "parc_rt_rotary"],
    "kernels no nn op lowers to (nn.rotary calls parc_rt_rotary_full); "
    "exercised by runtime/check and unittests/runtime only">;

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

/// What a parameter attribute must be: `predicate` on `$_attr` (an
/// mlir::Attribute), `summary` for diagnostics.
class RT_ParamKind<string pred, string sum> {
  string predicate = pred;
  string summary = sum;
}

def RT_I64 : RT_ParamKind<
    "::llvm::isa<::mlir::IntegerAttr>($_attr) && "
    "::llvm::cast<::mlir::IntegerAttr>($_attr).getType().isSignlessInteger(64)",
    "a 64-bit integer">;
def RT_F32 : RT_ParamKind<
    "::llvm::isa<::mlir::FloatAttr>($_attr) && "
    "::llvm::cast<::mlir::FloatAttr>($_attr).getType().isF32()",
    "an f32 float">;
def RT_Bool : RT_ParamKind<"::llvm::isa<::mlir::BoolAttr>($_attr)", "a bool">;
def RT_I64Array : RT_ParamKind<"::llvm::isa<::mlir::DenseI64ArrayAttr>($_attr)",
                               "an array<i64>">;
def RT_Symbol : RT_ParamKind<"::llvm::isa<::mlir::FlatSymbolRefAttr>($_attr)",
                             "a symbol reference (the mesh)">;
def RT_StrArray : RT_ParamKind<
    "::llvm::isa<::mlir::ArrayAttr>($_attr) && ::llvm::all_of("
    "::llvm::cast<::mlir::ArrayAttr>($_attr), "
    "::llvm::IsaPred<::mlir::StringAttr>)",
    "an array of strings">;
class RT_EnumKind<string cls, string name>
    : RT_ParamKind<"::llvm::isa<" # cls # ">($_attr)", "a " # name>;
def RT_GeluApproximation
    : RT_EnumKind<"::parc::nn::GeluApproximationAttr", "#nn.gelu_approximation">;
def RT_ScatterReduction
    : RT_EnumKind<"::parc::nn::ScatterReductionAttr", "#nn.scatter_reduction">;
def RT_MoeActivation
    : RT_EnumKind<"::parc::nn::MoeActivationAttr", "#nn.moe_activation">;
def RT_Reduction
    : RT_EnumKind<"::parc::dist::ReductionKindAttr", "#dist reduction kind">;

/// A kernel parameter: attribute `name` of `kind`. Optional ones have a
/// default in the code generator.
class RT_Param<string n, RT_ParamKind k, bit opt = 0> {
  string name = n;
  RT_ParamKind kind = k;
  bit optional = opt;
  bit annotation = 0;
}
class RT_Opt<string n, RT_ParamKind k> : RT_Param<n, k, 1>;
/// A dialect-prefixed attribute an earlier pass leaves on the op that a
/// stage after convert-nn-to-rt reads off the kernel, though the C call
/// does not take it. convert-nn-to-rt passes it through; other prefixed
/// attributes stay behind.
class RT_Annotation<string n, RT_ParamKind k> : RT_Param<n, k, 1> {
  let annotation = 1;
}

// The experts' FFN is split this many ways (--etp); the manifest
// (tools/parc/MoeManifest.cpp) scales the experts' weight bytes by it.
defvar FfnShards = RT_Annotation<"dist.ffn_shards", RT_I64>;

// The group of a collective: which mesh axes it spans.
defvar MeshParams = [RT_Opt<"mesh", RT_Symbol>, RT_Opt<"mesh_axes", RT_StrArray>];
defvar PeerParams = [RT_Opt<"peer", RT_I64>, RT_Opt<"shift", RT_I64>];

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// How convert-rt-to-emitc lays out a kernel's C call: one emitter per
/// family (rt::KernelFamily), so a kernel declared here always has one.
class RT_Family;
def RT_FamilyElementwise : RT_Family;
def RT_FamilyLinalg : RT_Family;
def RT_FamilyNorm : RT_Family;
def RT_FamilyMovement : RT_Family;
def RT_FamilyConcatSplit : RT_Family;
def RT_FamilyWindowed : RT_Family;
def RT_FamilyAttention : RT_Family;
def RT_FamilyCollective : RT_Family;
def RT_FamilyMoe : RT_Family;
def RT_FamilyMoeStep : RT_Family;

/// An rt.kernel / rt.start callee. `minIns..maxIns` buffers read and
/// `minOuts..maxOuts` written (-1: any number); `operands` says what they
/// are when the counts do not. `producers` are the nn/dist ops whose
/// lowering emits it. `sameElementType`: every buffer has one element type
/// (the entry takes one dtype). An rt.start of it needs an entry with a
/// `_start` form. `family` is set by the `let` blocks below.
class RT_Kernel<string n, RT_Entry e, int mi, int xi, int mo, int xo,
                list<RT_Param> ps, list<string> prods> {
  string name = n;
  RT_Family family = ?;
  RT_Entry entry = e;
  int minIns = mi;
  int maxIns = xi;
  int minOuts = mo;
  int maxOuts = xo;
  list<RT_Param> params = ps;
  list<string> producers = prods;
  string operands = "";
  bit sameElementType = 0;
}

// One buffer in, one out, of one element type: nn.<name>.
class RT_Elementwise<string n, RT_Entry e, list<RT_Param> ps = []>
    : RT_Kernel<n, e, 1, 1, 1, 1, ps, ["nn." # n]> {
  let sameElementType = 1;
}

let family = RT_FamilyElementwise in {
foreach op = ["neg", "exp", "log", "sqrt", "reciprocal", "tanh", "erf",
              "sigmoid", "relu", "not", "silu"] in
  def RT_Kernel_ # op : RT_Elementwise<op, RT_EntryUnary>;
def RT_KernelGelu : RT_Elementwise<"gelu", RT_EntryUnary,
    [RT_Opt<"approximation", RT_GeluApproximation>]>;

foreach op = ["add", "sub", "mul", "div", "pow", "min", "max", "equal", "less",
              "greater", "and", "or"] in
  def RT_Kernel_ # op : RT_Kernel<op, RT_EntryBinary, 2, 2, 1, 1, [],
                                  ["nn." # op]>;

foreach op = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
              "reduce_prod"] in
  def RT_Kernel_ # op : RT_Kernel<op, RT_EntryReduce, 1, 1, 1, 1,
      [RT_Param<"axes", RT_I64Array>, RT_Opt<"keepdims", RT_Bool>],
      ["nn." # op]>;

def RT_KernelWhere : RT_Kernel<"where", RT_EntryWhere, 3, 3, 1, 1, [],
                               ["nn.where"]>;
def RT_KernelCast : RT_Kernel<"cast", RT_EntryCast, 1, 1, 1, 1, [],
                              ["nn.cast"]>;
// A program output that would not own its bytes is copied first.
def RT_KernelCopy : RT_Kernel<"copy", RT_EntryCopy, 1, 1, 1, 1, [],
                              ["func.return"]> {
  let sameElementType = 1;
}
} // Elementwise
let family = RT_FamilyLinalg in {
def RT_KernelMatmul : RT_Kernel<"matmul", RT_EntryMatmul, 2, 2, 1, 1, [],
                                ["nn.matmul"]>;
def RT_KernelGemm : RT_Kernel<"gemm", RT_EntryGemm, 2, 3, 1, 1,
    [RT_Param<"alpha", RT_F32>, RT_Param<"beta", RT_F32>,
     RT_Param<"trans_a", RT_Bool>, RT_Param<"trans_b", RT_Bool>],
    ["nn.gemm"]>;
def RT_KernelLinear : RT_Kernel<"linear", RT_EntryGemm, 2, 3, 1, 1,
    [RT_Param<"transpose_weight", RT_Bool>], ["nn.linear"]>;
} // Linalg
let family = RT_FamilyNorm in {
// The softmax between attention scores and values too.
def RT_KernelSoftmax : RT_Kernel<"softmax", RT_EntrySoftmax, 1, 1, 1, 1,
    [RT_Param<"axis", RT_I64>], ["nn.softmax", "nn.attention"]> {
  let sameElementType = 1;
}
def RT_KernelLayerNorm : RT_Kernel<"layer_norm", RT_EntryLayerNorm, 2, 3, 1, 1,
    [RT_Param<"axis", RT_I64>, RT_Param<"epsilon", RT_F32>], ["nn.layer_norm"]>;
def RT_KernelRmsNorm : RT_Kernel<"rms_norm", RT_EntryRmsNorm, 2, 2, 1, 1,
    [RT_Param<"axis", RT_I64>, RT_Param<"epsilon", RT_F32>], ["nn.rms_norm"]>;
} // Norm
let family = RT_FamilyMovement in {
// Also the moves around collectives that run on the leading dim.
def RT_KernelTranspose : RT_Kernel<"transpose", RT_EntryTranspose, 1, 1, 1, 1,
    [RT_Param<"perm", RT_I64Array>],
    ["nn.transpose", "dist.local_part", "dist.reduce_scatter",
     "dist.all_gather", "dist.all_to_all"]> {
  let sameElementType = 1;
}
def RT_KernelSlice : RT_Kernel<"slice", RT_EntrySlice, 1, 1, 1, 1,
    [RT_Param<"starts", RT_I64Array>, RT_Param<"steps", RT_I64Array>],
    ["nn.slice"]> {
  let sameElementType = 1;
}
def RT_KernelExpand : RT_Elementwise<"expand", RT_EntryExpand>;
def RT_KernelGather : RT_Kernel<"gather", RT_EntryGather, 2, 2, 1, 1,
    [RT_Param<"axis", RT_I64>], ["nn.gather"]>;
def RT_KernelScatterElements : RT_Kernel<"scatter_elements",
    RT_EntryScatterElements, 3, 3, 1, 1,
    [RT_Param<"axis", RT_I64>, RT_Opt<"reduction", RT_ScatterReduction>],
    ["nn.scatter_elements"]>;
def RT_KernelTrilu : RT_Elementwise<"trilu", RT_EntryTrilu,
    [RT_Param<"k", RT_I64>, RT_Param<"upper", RT_Bool>]>;
def RT_KernelTopk : RT_Kernel<"topk", RT_EntryTopk, 1, 1, 2, 2,
    [RT_Param<"k", RT_I64>, RT_Param<"axis", RT_I64>,
     RT_Opt<"largest", RT_Bool>, RT_Opt<"sorted", RT_Bool>], ["nn.topk"]>;
} // Movement
let family = RT_FamilyConcatSplit in {
def RT_KernelConcat : RT_Kernel<"concat", RT_EntryConcat, 1, -1, 1, 1,
    [RT_Param<"axis", RT_I64>], ["nn.concat"]> {
  let sameElementType = 1;
}
def RT_KernelSplit : RT_Kernel<"split", RT_EntrySplit, 1, 1, 1, -1,
    [RT_Param<"axis", RT_I64>], ["nn.split"]> {
  let sameElementType = 1;
}
} // ConcatSplit
let family = RT_FamilyWindowed in {
def RT_KernelConv : RT_Kernel<"conv", RT_EntryConv, 2, 3, 1, 1,
    [RT_Param<"strides", RT_I64Array>, RT_Param<"pads", RT_I64Array>,
     RT_Param<"dilations", RT_I64Array>, RT_Param<"group", RT_I64>],
    ["nn.conv"]>;
def RT_KernelMaxPool : RT_Kernel<"max_pool", RT_EntryMaxPool, 1, 1, 1, 1,
    [RT_Param<"kernel_shape", RT_I64Array>, RT_Param<"strides", RT_I64Array>,
     RT_Param<"pads", RT_I64Array>, RT_Param<"dilations", RT_I64Array>],
    ["nn.max_pool"]>;
} // Windowed
let family = RT_FamilyAttention in {
def RT_KernelRotary : RT_Kernel<"rotary", RT_EntryRotary, 3, 3, 1, 1, [],
                                ["nn.rotary"]>;
def RT_KernelKVCacheWrite : RT_Kernel<"kv_cache_write", RT_EntryKVCacheWrite,
    2, 2, 1, 1, [RT_Param<"axis", RT_I64>], ["nn.kv_cache_write"]> {
  let operands = "the update and the position, and the cache it writes";
}

// nn.attention: scores, the score modifier's ops, softmax, values; or one
// fused kernel where it runs the modifier itself.
def RT_KernelAttentionScores : RT_Kernel<"attention_scores",
    RT_EntryAttentionScores, 2, 2, 1, 1, [RT_Param<"scale", RT_F32>],
    ["nn.attention"]>;
def RT_KernelAttentionValues : RT_Kernel<"attention_values",
    RT_EntryAttentionValues, 2, 2, 1, 1, [], ["nn.attention"]>;
def RT_KernelAttentionFused : RT_Kernel<"attention_fused",
    RT_EntryAttentionFused, 3, 4, 1, 1,
    [RT_Param<"scale", RT_F32>, RT_Opt<"causal_offset", RT_I64>],
    ["nn.attention"]> {
  let operands = "q, k, v (, mask) and one output";
}
} // Attention

let family = RT_FamilyMoe in {
def RT_KernelMoe : RT_Kernel<"moe", RT_EntryMoe, 4, 5, 1, 1,
    [RT_Param<"top_k", RT_I64>, RT_Opt<"normalize", RT_Bool>,
     RT_Opt<"activation", RT_MoeActivation>, RT_Opt<"capacity", RT_I64>,
     FfnShards],
    ["nn.moe"]> {
  let operands = "x, logits, fc1, fc2 (, fc3) and one output";
}
} // Moe
let family = RT_FamilyMoeStep in {
def RT_KernelMoeRoute : RT_Kernel<"moe_route", RT_EntryMoeRoute, 1, 1, 3, 3,
    [RT_Param<"top_k", RT_I64>, RT_Opt<"normalize", RT_Bool>],
    ["nn.moe_route"]>;
def RT_KernelMoePermute : RT_Kernel<"moe_permute", RT_EntryMoePermute,
    3, 3, 5, 5, !listconcat(MeshParams, [RT_Opt<"capacity", RT_I64>]),
    ["dist.moe_permute"]>;
def RT_KernelMoeExperts : RT_Kernel<"moe_experts", RT_EntryMoeExperts,
    4, 5, 1, 1, [RT_Opt<"activation", RT_MoeActivation>, FfnShards],
    ["nn.moe_experts"]> {
  let operands = "rows, layout, fc1, fc2 (, fc3) and one output";
}
def RT_KernelMoeCombine : RT_Kernel<"moe_combine", RT_EntryMoeCombine,
    3, 3, 1, 1, [], ["nn.moe_combine"]>;
} // MoeStep

// Communication: blocking as rt.kernel, or rt.start + rt.wait where the
// entry has a `_start` form.
class RT_Collective<string n, RT_Entry e, list<RT_Param> ps,
                    list<string> prods = ["dist." # n, "dist." # n # "_start"]>
    : RT_Kernel<n, e, 1, 1, 1, 1, !listconcat(MeshParams, ps), prods> {
  let sameElementType = 1;
}
let family = RT_FamilyCollective in {
def RT_KernelAllReduce : RT_Collective<"all_reduce", RT_EntryAllReduce,
    [RT_Opt<"reduction", RT_Reduction>]>;
def RT_KernelAllGather : RT_Collective<"all_gather", RT_EntryAllGatherRows,
    [RT_Opt<"gather_axis", RT_I64>, RT_Opt<"sizes", RT_I64Array>,
     RT_Opt<"root", RT_I64>]>;
def RT_KernelReduceScatter : RT_Collective<"reduce_scatter",
    RT_EntryReduceScatter,
    [RT_Opt<"scatter_axis", RT_I64>, RT_Opt<"reduction", RT_Reduction>,
     RT_Opt<"sizes", RT_I64Array>]>;
// A rank's chunk of a computed value (dist.local_part of a non-weight).
def RT_KernelLocalChunk : RT_Collective<"local_chunk", RT_EntryLocalChunk, [],
                                        ["dist.local_part"]>;
def RT_KernelAllToAll : RT_Collective<"all_to_all", RT_EntryAllToAll,
    [RT_Opt<"split_axis", RT_I64>, RT_Opt<"concat_axis", RT_I64>]>;
def RT_KernelAllToAllV : RT_Kernel<"all_to_all_v", RT_EntryAllToAllV,
    3, 3, 1, 1, !listconcat(MeshParams, [RT_Param<"axis", RT_I64>]),
    ["dist.all_to_all_v", "dist.all_to_all_v_start"]> {
  let operands = "the input, send and receive counts, and one output";
}
def RT_KernelSend : RT_Kernel<"send", RT_EntrySend, 1, 1, 0, 0,
    !listconcat(MeshParams, PeerParams), ["dist.send", "dist.send_start"]>;
def RT_KernelRecv : RT_Kernel<"recv", RT_EntryRecv, 0, 0, 1, 1,
    !listconcat(MeshParams, PeerParams), ["dist.recv", "dist.recv_start"]>;
} // Collective

//===----------------------------------------------------------------------===//
// Ops lowered to no kernel
//===----------------------------------------------------------------------===//

/// An nn/dist op convert-nn-to-rt lowers without a kernel call, or that is
/// gone before it runs: `how` says which.
class RT_NoKernel<string o, string h> {
  string op = o;
  string how = h;
}
def : RT_NoKernel<"nn.reshape", "an rt.view of the same bytes">;
def : RT_NoKernel<"nn.external_weight", "an rt.weight">;
def : RT_NoKernel<"nn.yield", "the attention score modifier's result">;
def : RT_NoKernel<"dist.mesh", "the module's rt.mesh attribute">;
def : RT_NoKernel<"dist.wait", "an rt.wait">;
def : RT_NoKernel<"dist.shard", "removed by dist-propagate / dist-partition">;
def : RT_NoKernel<"dist.reshard", "turned into collectives by dist-comm">;

#endif // PARC_RT_KERNELS
