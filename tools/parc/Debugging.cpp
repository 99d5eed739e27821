//===- Debugging.cpp - parc compile's IR debugging and --explain-json -----===//
//
// MLIR registers its debugging options on the top-level command line; parc's
// options live in subcommands, so each is moved onto `compile` (where a
// pass manager runs) and the common ones into one --help category.
//
//===----------------------------------------------------------------------===//

#include "Debugging.h"
#include "nn/NodeLocation.h"
#include "parc/Support/OptionRef.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

using namespace mlir;
namespace cl = llvm::cl;

void parc::driver::StageInstrumentation::notify(Pass *pass, Operation *op,
                                                bool begin) {
  // Stages are top-level passes (a nested pass's adaptor): on the module.
  auto module = dyn_cast<ModuleOp>(op);
  if (!module || module->getParentOp())
    return;
  for (const parc::PipelineStage &stage : stages)
    if ((begin ? stage.first : stage.last) == pass)
      hook(stage, module, begin);
}

cl::OptionCategory &parc::driver::irDebugCategory() {
  static cl::OptionCategory category(
      "IR debugging", "MLIR's printing and timing of the compile's passes");
  return category;
}

void parc::driver::registerIRDebugOptions(cl::SubCommand &compile) {
  llvm::StringSet<> before;
  for (auto &entry : cl::getRegisteredOptions(cl::SubCommand::getTopLevel()))
    before.insert(entry.first);
  registerPassManagerCLOptions();
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerDefaultTimingManagerCLOptions();
  static const llvm::StringSet<> listed = {
      "mlir-print-ir-after-all",     "mlir-print-ir-before-all",
      "mlir-print-ir-after",         "mlir-print-ir-before",
      "mlir-print-ir-after-change",  "mlir-print-ir-after-failure",
      "mlir-print-ir-tree-dir",      "mlir-print-debuginfo",
      "mlir-print-local-scope",      "mlir-timing",
      "mlir-disable-threading"};
  llvm::SetVector<cl::Option *> added;
  for (auto &entry : cl::getRegisteredOptions(cl::SubCommand::getTopLevel()))
    if (!before.contains(entry.first) &&
        !entry.second->Subs.contains(&cl::SubCommand::getAll()))
      added.insert(entry.second);
  for (cl::Option *option : added) {
    option->removeArgument();
    option->addSubCommand(compile);
    if (listed.contains(option->ArgStr))
      option->addCategory(irDebugCategory());
    option->addArgument();
  }
}

void parc::driver::elideWeightsByDefault(cl::SubCommand &compile) {
  // What --dump-ir elides: printing megabytes of weights after every pass
  // buries the IR. Giving the flag prints them.
  auto &options = cl::getRegisteredOptions(compile);
  bool printing = llvm::any_of(options, [](auto &entry) {
    return entry.first.starts_with("mlir-print-ir") &&
           entry.second->getNumOccurrences() > 0;
  });
  if (!printing)
    return;
  for (auto [name, value] : {std::pair{"mlir-elide-elementsattrs-if-larger", "16"},
                             {"mlir-elide-resource-strings-if-larger", "64"}}) {
    auto it = options.find(name);
    if (it != options.end() && it->second->getNumOccurrences() == 0)
      it->second->addOccurrence(0, name, value);
  }
}

LogicalResult parc::driver::clearStageDumps(StringRef dir, std::string &error) {
  // Exactly what Compilation::dump writes: two or more digits, a dash.
  static const llvm::Regex stageDump("^[0-9][0-9]+-[^/]*\\.mlir$");
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef name = llvm::sys::path::filename(it->path());
    if (it->type() != llvm::sys::fs::file_type::regular_file ||
        !stageDump.match(name))
      continue;
    if (std::error_code rm = llvm::sys::fs::remove(it->path())) {
      error = "cannot remove '" + it->path() + "': " + rm.message();
      return failure();
    }
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    error = "cannot list '" + dir.str() + "': " + ec.message();
    return failure();
  }
  return success();
}

/// JSON holds UTF-8 only: a model's other bytes become U+FFFD.
static std::string utf8(StringRef s) {
  return llvm::json::isUTF8(s) ? s.str() : llvm::json::fixUTF8(s);
}

parc::driver::ExplainLog::ExplainLog(MLIRContext &ctx, bool print)
    : handler(&ctx, [this, print](Diagnostic &diag) -> LogicalResult {
        if (diag.getSeverity() != DiagnosticSeverity::Remark)
          return failure(); // not ours: the next handler prints it
        llvm::json::Object remark{{"stage", stage},
                                  {"message", utf8(diag.str())}};
        if (std::optional<StringRef> node =
                parc::nn::onnxNode(diag.getLocation()))
          remark["node"] = utf8(*node);
        remarks.push_back(std::move(remark));
        return failure(print); // failure: print it too
      }) {}

LogicalResult parc::driver::ExplainLog::write(StringRef path, StringRef model,
                                              std::string &error) const {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write '" + path.str() + "': " + ec.message();
    return failure();
  }
  llvm::json::Object root{{"model", utf8(model)},
                          {"remarks", llvm::json::Array(remarks)}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return success(!os.has_error());
}

std::string parc::driver::inFlagWording(StringRef message) {
  // The compile pipeline's pass options, as the flags that set them.
  static const llvm::StringMap<StringRef> flags = {
      {"tp", "--tp"},
      {"sp", "--sp"},
      {"pp", "--pp"},
      {"layout", "--pp-layout"},
      {"virtual", "--pp-virtual"},
      {"micro-batches", "--micro-batches"},
      {"ep", "--ep"},
      {"etp", "--etp"},
      {"capacity-factor", "--capacity-factor"},
      {"pairs", "--kv-cache"},
      // dist-split-batch's parts are the micro-batches of every replica.
      {"parts", "--micro-batches / --dp"}};
  return parc::respellOptionRefs(
      message,
      [](StringRef name,
         std::optional<StringRef> value) -> std::optional<std::string> {
        auto it = flags.find(name);
        if (it == flags.end())
          return std::nullopt;
        return value ? (it->second + " " + *value).str() : it->second.str();
      });
}

parc::driver::FlagWording::FlagWording(MLIRContext &ctx)
    : handler(&ctx, [&ctx](Diagnostic &diag) -> LogicalResult {
        std::string text = inFlagWording(diag.str());
        bool changed = text != diag.str();
        SmallVector<std::pair<Location, std::string>> notes;
        for (Diagnostic &note : diag.getNotes()) {
          notes.push_back({note.getLocation(), inFlagWording(note.str())});
          changed |= notes.back().second != note.str();
        }
        if (!changed)
          return failure(); // the next handler takes it as it is
        // The reworded copy has no option reference left: it passes this
        // handler on to the ones below.
        Diagnostic copy(diag.getLocation(), diag.getSeverity());
        copy << text;
        for (auto &[loc, note] : notes)
          copy.attachNote(loc) << note;
        ctx.getDiagEngine().emit(std::move(copy));
        return success();
      }) {}
