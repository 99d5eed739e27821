//===- parc.cpp - the parc compiler driver --------------------------------===//
//
// `parc compile model.onnx -o out/`: import, optimise, lower, plan memory,
// write each rank's weights, emit and build one executable per distinct
// rank program, and describe it all in out/manifest.json. The output
// directory is assembled next to its destination and renamed into place, so
// it appears complete or not at all.
//
//===----------------------------------------------------------------------===//

#include "nn/NNOps.h"
#include "parc/Conversion/Passes.h"
#include "parc/Import/Onnx/OnnxImporter.h"
#include "parc/Pipelines/Pipelines.h"
#include "parc/Target/Cpp/Toolchain.h"
#include "parc/Target/Weights/Safetensors.h"
#include "parc/Transforms/Dist/Passes.h"
#include "parc/Transforms/NN/Passes.h"
#include "rt/RTDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::SubCommand compileCmd("compile", "Compile an ONNX model into rank programs");

cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.onnx>"),
                               cl::Required, cl::sub(compileCmd));
cl::opt<std::string> outputDir("o", cl::desc("Output directory (replaced atomically)"),
                               cl::value_desc("dir"), cl::Required,
                               cl::sub(compileCmd));
cl::alias outputDirLong("output", cl::aliasopt(outputDir));
cl::opt<std::string> target("target", cl::desc("Code generation target: cpu or cuda"),
                            cl::init("cpu"), cl::sub(compileCmd));
cl::opt<std::string> dtype("dtype", cl::desc("Compute dtype: f32, bf16 or f16"),
                           cl::init("f32"), cl::sub(compileCmd));
cl::list<std::string> inputShapes(
    "input-shape", cl::desc("Bind a graph input's dims: NAME=D0xD1x... (repeatable)"),
    cl::value_desc("name=shape"), cl::sub(compileCmd));
cl::opt<int64_t> tp("tp", cl::desc("Tensor-parallel degree (ranks per model replica)"),
                    cl::init(1), cl::sub(compileCmd));
cl::opt<bool> sp("sp",
                 cl::desc("Sequence parallelism (Megatron-SP) on top of --tp: "
                          "norms and residuals split along the sequence"),
                 cl::sub(compileCmd));
cl::opt<bool> noOverlap("no-overlap",
                        cl::desc("Keep every collective blocking where the "
                                 "partitioner put it (for comparison)"),
                        cl::sub(compileCmd));
cl::opt<int64_t> overlapChunks(
    "overlap-chunks",
    cl::desc("Pieces a product and its collective are cut into so that "
             "they overlap (collective matmul; 1 = no cutting)"),
    cl::init(2), cl::sub(compileCmd));
cl::opt<bool> explain("explain",
                      cl::desc("Explain the partitioning: each region split or "
                               "kept replicated, with its ONNX node"),
                      cl::sub(compileCmd));
cl::opt<std::string> dumpIR("dump-ir",
                            cl::desc("Write the IR after every stage into this directory"),
                            cl::value_desc("dir"), cl::sub(compileCmd));
cl::opt<bool> quiet("quiet", cl::desc("Print only errors"), cl::sub(compileCmd));

void progress(const Twine &message) {
  if (!quiet)
    llvm::errs() << "parc: " << message << "\n";
}

LogicalResult fail(const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "parc") << message << "\n";
  return failure();
}

std::string dtypeName(Type t) {
  if (t.isF32()) return "f32";
  if (t.isF16()) return "f16";
  if (t.isBF16()) return "bf16";
  if (t.isF64()) return "f64";
  if (t.isInteger(1)) return "bool";
  if (t.isUnsignedInteger(8)) return "u8";
  if (auto i = dyn_cast<IntegerType>(t)) return "i" + std::to_string(i.getWidth());
  return "unknown";
}

llvm::json::Object tensorJson(StringRef name, MemRefType type) {
  return llvm::json::Object{{"name", name},
                            {"dtype", dtypeName(type.getElementType())},
                            {"shape", llvm::json::Array(type.getShape())}};
}

/// The compilation of one model into a staging directory.
class Compilation {
public:
  Compilation(MLIRContext &ctx, StringRef staging) : ctx(ctx), staging(staging) {}

  LogicalResult run();

private:
  LogicalResult dump(ModuleOp module, StringRef stage);
  LogicalResult runPasses(ModuleOp module, StringRef stage,
                          llvm::function_ref<void(OpPassManager &)> build);
  std::string path(const Twine &rel) {
    SmallString<256> p(staging);
    llvm::sys::path::append(p, rel);
    return p.str().str();
  }

  MLIRContext &ctx;
  std::string staging;
  int stageNo = 0;
};

LogicalResult Compilation::dump(ModuleOp module, StringRef stage) {
  if (dumpIR.empty())
    return success();
  if (std::error_code ec = llvm::sys::fs::create_directories(dumpIR))
    return fail("cannot create '" + dumpIR + "': " + ec.message());
  SmallString<256> file(dumpIR);
  llvm::sys::path::append(file, llvm::formatv("{0:2}-{1}.mlir", stageNo++, stage).str());
  std::error_code ec;
  llvm::raw_fd_ostream os(file, ec);
  if (ec)
    return fail("cannot write '" + file + "': " + ec.message());
  // Weights elided: a dump shows structure, not megabytes of hex.
  module.print(os, OpPrintingFlags()
                       .elideLargeElementsAttrs(16)
                       .elideLargeResourceString(64)
                       .enableDebugInfo(false));
  return success();
}

LogicalResult Compilation::runPasses(ModuleOp module, StringRef stage,
                                     llvm::function_ref<void(OpPassManager &)> build) {
  PassManager pm(&ctx);
  build(pm);
  if (failed(pm.run(module)))
    return failure();
  return dump(module, stage);
}

LogicalResult Compilation::run() {
  parc::OnnxImportOptions options;
  if (auto err = parc::parseInputShapes(inputShapes, options))
    return fail(llvm::toString(std::move(err)));
  if (target != "cpu" && target != "cuda")
    return fail("--target must be cpu or cuda, not '" + target + "'");
  if (dtype != "f32" && dtype != "bf16" && dtype != "f16")
    return fail("--dtype must be f32, bf16 or f16, not '" + dtype + "'");

  progress("importing " + modelPath);
  OwningOpRef<ModuleOp> module = parc::importOnnxFile(modelPath, &ctx, options);
  if (!module || failed(dump(*module, "import")))
    return failure();

  progress("optimizing (fold, fuse)");
  if (failed(runPasses(*module, "nn-optimized", parc::buildNNOptimizePipeline)))
    return failure();
  if (dtype != "f32") {
    progress("converting compute to " + dtype);
    if (failed(runPasses(*module, "nn-" + dtype, [](OpPassManager &pm) {
          parc::nn::NNConvertDTypeOptions options;
          options.dtype = dtype;
          pm.addNestedPass<func::FuncOp>(parc::nn::createNNConvertDType(options));
        })))
      return failure();
  }
  if (tp < 1)
    return fail("--tp must be at least 1");
  if (sp && tp == 1)
    return fail("--sp splits the sequence over the --tp ranks: give --tp > 1");
  if (tp > 1) {
    progress(llvm::formatv("partitioning for tensor{0} parallelism over {1} ranks",
                           sp ? " and sequence" : "", tp)
                 .str());
    // The four steps of parc::buildTensorParallelPipeline, dumped apart.
    parc::dist::DistAnnotateOptions annotate;
    annotate.tp = tp;
    annotate.sp = sp;
    annotate.explain = explain;
    parc::dist::DistPropagateOptions propagate;
    propagate.explain = explain;
    if (failed(runPasses(*module, "dist-annotate", [&](OpPassManager &pm) {
          pm.addPass(parc::dist::createDistAnnotate(annotate));
        })) ||
        failed(runPasses(*module, "dist-propagate", [&](OpPassManager &pm) {
          pm.addPass(parc::dist::createDistPropagate(propagate));
        })) ||
        failed(runPasses(*module, "dist-partition", [](OpPassManager &pm) {
          pm.addPass(parc::dist::createDistPartition());
          pm.addPass(createCSEPass());
        })) ||
        failed(runPasses(*module, "dist-comm", [](OpPassManager &pm) {
          pm.addPass(parc::dist::createDistComm());
        })))
      return failure();
    auto main = module->lookupSymbol<func::FuncOp>("main");
    auto regions = main->getAttrOfType<IntegerAttr>("dist.tp_regions");
    if (!regions || regions.getInt() == 0)
      llvm::WithColor::warning(llvm::errs(), "parc")
          << "no tensor-parallel region found: every rank computes the whole "
             "model (--explain says why)\n";
    else
      progress(llvm::formatv("{0} Megatron region(s) split over tp", regions.getInt()).str());
    if (!noOverlap) {
      if (overlapChunks < 1)
        return fail("--overlap-chunks must be at least 1");
      if (failed(runPasses(*module, "dist-overlap", [](OpPassManager &pm) {
            parc::dist::DistOverlapOptions options;
            options.chunks = overlapChunks;
            pm.addPass(parc::dist::createDistOverlap(options));
          })))
        return failure();
      auto stats = (*module)->getAttrOfType<DictionaryAttr>("dist.overlap");
      progress(llvm::formatv("overlap: {0} collective matmul(s) cut into {1}, "
                             "{2} collective(s) started early",
                             stats.getAs<IntegerAttr>("decomposed").getInt(),
                             overlapChunks.getValue(),
                             stats.getAs<IntegerAttr>("early_starts").getInt())
                   .str());
    }
  }
  progress("lowering to the rank program and planning memory");
  if (failed(runPasses(*module, "rt", parc::buildLowerToRTPipeline)))
    return failure();

  auto program = module->lookupSymbol<func::FuncOp>("main");
  llvm::json::Array inputs, outputs;
  program.walk([&](parc::rt::InputOp op) {
    inputs.push_back(tensorJson(op.getName(), op.getType()));
  });
  program.walk([&](parc::rt::OutputOp op) {
    outputs.push_back(tensorJson(op.getName(), op.getBuffer().getType()));
  });
  int64_t arena = 0, unplanned = 0;
  if (auto a = program->getAttrOfType<IntegerAttr>("rt.arena_size"))
    arena = a.getInt();
  if (auto u = program->getAttrOfType<IntegerAttr>("rt.unplanned_size"))
    unplanned = u.getInt();

  for (StringRef dir : {"bin", "src", "weights"})
    if (std::error_code ec = llvm::sys::fs::create_directories(path(dir)))
      return fail("cannot create '" + path(dir) + "': " + ec.message());
  progress("writing weights");
  llvm::json::Array ranks;
  int64_t totalWeightBytes = 0;
  for (int64_t rank = 0; rank < tp; ++rank) {
    std::string file = "weights/rank" + std::to_string(rank) + ".safetensors";
    auto bytes = parc::writeWeights(program, llvm::sys::path::parent_path(modelPath),
                                    path(file), [&](StringRef) { return rank; });
    if (failed(bytes))
      return failure();
    totalWeightBytes += *bytes;
    ranks.push_back(llvm::json::Object{{"rank", rank},
                                       {"program", "main"},
                                       {"weights", file},
                                       {"weight_file_bytes", *bytes}});
  }
  // Bytes each rank sends in one forward pass under ring algorithms, S the
  // whole tensor's bytes and n the group: all-reduce 2(n-1)/n·S, all-gather
  // and reduce-scatter (n-1)/n·S each. Sequence parallelism's all-gather +
  // reduce-scatter pair thus costs what tensor parallelism's all-reduce does.
  int64_t commBytes = 0;
  llvm::StringMap<std::pair<int64_t, int64_t>> perCollective; // count, bytes
  int64_t n = tp;
  program.walk([&](Operation *op) {
    // Blocking (rt.kernel) or started (rt.start), the same call; its first
    // operand is this rank's input (S/n of an all-gather's S).
    auto callee = op->getAttrOfType<StringAttr>("callee");
    if (!isa<parc::rt::KernelOp, parc::rt::StartOp>(op) || !callee)
      return;
    auto t = cast<MemRefType>(op->getOperand(0).getType());
    int64_t in = t.getNumElements() * t.getElementTypeBitWidth() / 8;
    int64_t sent;
    if (callee == "all_reduce")
      sent = 2 * (n - 1) * in / n;
    else if (callee == "all_gather")
      sent = (n - 1) * in;
    else if (callee == "reduce_scatter")
      sent = (n - 1) * in / n;
    else
      return;
    commBytes += sent;
    auto &entry = perCollective[callee.getValue()];
    entry.first += 1;
    entry.second += sent;
  });
  llvm::json::Object commJson;
  for (auto &entry : perCollective)
    commJson[entry.getKey()] = llvm::json::Object{
        {"count", entry.getValue().first}, {"bytes", entry.getValue().second}};
  // Weight bytes each rank holds (its parts of sharded weights included).
  int64_t rankWeightBytes = 0;
  program.walk([&](parc::rt::WeightOp w) {
    auto t = cast<MemRefType>(w.getType());
    rankWeightBytes += t.getNumElements() * t.getElementTypeBitWidth() / 8;
  });
  for (llvm::json::Value &r : ranks)
    (*r.getAsObject())["weight_bytes"] = rankWeightBytes;

  (*module)->setAttr("rt.program", StringAttr::get(&ctx, "main"));
  if (failed(runPasses(*module, "emitc", [](OpPassManager &pm) {
        pm.addPass(parc::createConvertRTToEmitC());
      })))
    return failure();
  if (failed(parc::writeCpp(*module, path("src/main.cpp"))))
    return failure();
  progress("building bin/main (" + target + ")");
  std::string log;
  if (failed(parc::buildExecutable(path("src/main.cpp"), path("bin/main"), target, log)))
    return fail("building the rank program failed:\n" + log);

  llvm::json::Object manifest{
      {"format", 1},
      {"model", modelPath},
      {"target", target},
      {"dtype", dtype},
      {"world_size", tp.getValue()},
      {"mesh", tp > 1 ? llvm::json::Object{{"axes", llvm::json::Array{"tp"}},
                                           {"shape", llvm::json::Array{tp.getValue()}}}
                      : llvm::json::Object{{"axes", llvm::json::Array{}},
                                           {"shape", llvm::json::Array{}}}},
      {"programs",
       llvm::json::Array{llvm::json::Object{{"name", "main"},
                                            {"binary", "bin/main"},
                                            {"source", "src/main.cpp"},
                                            {"arena_bytes", arena},
                                            {"unplanned_bytes", unplanned}}}},
      {"ranks", std::move(ranks)},
      {"inputs", std::move(inputs)},
      {"outputs", std::move(outputs)},
      {"output_rank", 0},
      {"sequence_parallel", bool(sp)},
      {"comm_bytes_per_forward", commBytes},
      {"comm_per_collective", std::move(commJson)}};
  std::error_code ec;
  llvm::raw_fd_ostream os(path("manifest.json"), ec);
  if (ec)
    return fail("cannot write the manifest: " + ec.message());
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  progress(llvm::formatv("1 rank program for {0} rank(s), arena {1} B (unplanned "
                         "{2} B), weights {3} B in all, {4} B sent per rank in collectives per forward",
                         tp.getValue(), arena, unplanned, totalWeightBytes, commBytes)
               .str());
  return success();
}

/// Replaces `out` with `staging` as atomically as rename allows.
LogicalResult publish(StringRef staging, StringRef out) {
  std::string old;
  if (llvm::sys::fs::exists(out)) {
    old = (out + ".parc-old-" + Twine(llvm::sys::Process::getProcessId())).str();
    if (std::error_code ec = llvm::sys::fs::rename(out, old))
      return fail("cannot replace '" + out + "': " + ec.message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(staging, out))
    return fail("cannot move the output into '" + out + "': " + ec.message());
  if (!old.empty())
    llvm::sys::fs::remove_directories(old);
  return success();
}

int compile() {
  DialectRegistry registry;
  registry.insert<parc::nn::NNDialect, parc::rt::RTDialect, arith::ArithDialect,
                  func::FuncDialect, memref::MemRefDialect, emitc::EmitCDialect>();
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx);

  SmallString<256> out(outputDir);
  llvm::sys::path::remove_dots(out, /*remove_dot_dot=*/true);
  if (out.empty())
    return (void)fail("-o names no directory"), 1;
  std::string staging =
      (out + ".parc-tmp-" + Twine(llvm::sys::Process::getProcessId())).str();
  llvm::sys::fs::remove_directories(staging);
  if (std::error_code ec = llvm::sys::fs::create_directories(staging))
    return (void)fail("cannot create '" + staging + "': " + ec.message()), 1;
  bool ok = succeeded(Compilation(ctx, staging).run()) &&
            succeeded(publish(staging, out));
  if (!ok) {
    llvm::sys::fs::remove_directories(staging);
    return 1;
  }
  progress("wrote " + out);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "parc: compiler for partitioned neural networks\n");
  if (compileCmd)
    return compile();
  cl::PrintHelpMessage(/*Hidden=*/false, /*Categorized=*/true);
  return 1;
}
