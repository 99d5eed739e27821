//===- Debugging.h - parc compile's IR debugging and --explain-json -*- C++ -*-===//
//
// What maps a compile back to the model: MLIR's own IR printing and timing
// options on `parc compile`, the stage dumps of --dump-ir, and --explain's
// remarks as JSON.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TOOLS_PARC_DEBUGGING_H
#define PARC_TOOLS_PARC_DEBUGGING_H

#include "parc/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/JSON.h"

#include <functional>
#include <string>

namespace parc::driver {

/// The --help category of MLIR's IR debugging options.
llvm::cl::OptionCategory &irDebugCategory();

/// Registers MLIR's pass-manager, printer, context and timing options
/// (--mlir-print-ir-after-all, --mlir-print-debuginfo, --mlir-timing, ...)
/// as options of `compile`; the common ones are listed under
/// irDebugCategory(), the others work but are left out of --help.
void registerIRDebugOptions(llvm::cl::SubCommand &compile);

/// After parsing: IR that --mlir-print-ir-* prints elides weights as
/// --dump-ir does, unless the command line sets the limits.
void elideWeightsByDefault(llvm::cl::SubCommand &compile);

/// Removes the stage dumps (`NN-stage.mlir`) an earlier compile left in
/// `dir`, so a reused folder shows this compile only; nothing else in it is
/// touched.
mlir::LogicalResult clearStageDumps(llvm::StringRef dir, std::string &error);

/// Calls `hook` on the module before the first and after the last pass of
/// each of `stages` (parc::PipelineStage): where --dump-ir writes a file and
/// the driver reports and checks. Not after a pass that failed.
class StageInstrumentation : public mlir::PassInstrumentation {
public:
  using Hook = std::function<void(const parc::PipelineStage &, mlir::ModuleOp,
                                  bool begin)>;
  StageInstrumentation(llvm::SmallVector<parc::PipelineStage> stages, Hook hook)
      : stages(std::move(stages)), hook(std::move(hook)) {}
  void runBeforePass(mlir::Pass *pass, mlir::Operation *op) override {
    notify(pass, op, /*begin=*/true);
  }
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override {
    notify(pass, op, /*begin=*/false);
  }

private:
  void notify(mlir::Pass *pass, mlir::Operation *op, bool begin);
  llvm::SmallVector<parc::PipelineStage> stages;
  Hook hook;
};

/// Collects the remarks --explain prints, for --explain-json: each with the
/// stage that made it, its ONNX node and its text. Printing them as text too
/// is the caller's choice (`print`).
class ExplainLog {
public:
  ExplainLog(mlir::MLIRContext &ctx, bool print);
  void setStage(llvm::StringRef stage) { this->stage = stage.str(); }
  /// Writes {"model": ..., "remarks": [...]} to `path`.
  mlir::LogicalResult write(llvm::StringRef path, llvm::StringRef model,
                            std::string &error) const;

private:
  mlir::ScopedDiagnosticHandler handler;
  std::string stage;
  llvm::json::Array remarks;
};

/// Rewrites the pass options a library diagnostic names (optionRef:
/// "option 'tp=4'") into the flags of `parc compile` that set them
/// ("--tp 4"), and emits the diagnostic again to the handlers registered
/// before it. Register it after them.
class FlagWording {
public:
  explicit FlagWording(mlir::MLIRContext &ctx);

private:
  mlir::ScopedDiagnosticHandler handler;
};

/// `message` in `parc compile`'s words (what FlagWording prints).
std::string inFlagWording(llvm::StringRef message);

} // namespace parc::driver

#endif // PARC_TOOLS_PARC_DEBUGGING_H
