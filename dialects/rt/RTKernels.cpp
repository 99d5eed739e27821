//===- RTKernels.cpp - the compiler -> runtime contract ---------*- C++ -*-===//

#include "rt/RTKernels.h"

#include "dist/DistDialect.h"
#include "nn/NNDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace parc::rt;

#include "rt/RTKernels.cpp.inc"

static_assert(std::size(rtKernelTable) == kNumKernels,
              "one table row per rt::Kernel");

ArrayRef<KernelDecl> parc::rt::getKernels() { return rtKernelTable; }

const KernelDecl &parc::rt::getKernel(Kernel kernel) {
  return rtKernelTable[static_cast<unsigned>(kernel)];
}

const KernelDecl *parc::rt::lookupKernel(StringRef name) {
  static const llvm::StringMap<const KernelDecl *> byName = [] {
    llvm::StringMap<const KernelDecl *> map;
    for (const KernelDecl &k : rtKernelTable)
      map[k.name] = &k;
    return map;
  }();
  return byName.lookup(name);
}

const KernelParam *KernelDecl::lookupParam(StringRef param) const {
  const auto *it = llvm::find_if(
      params, [&](const KernelParam &p) { return p.name == param; });
  return it == params.end() ? nullptr : it;
}

ArrayRef<EntryDecl> parc::rt::getEntries() { return rtEntryTable; }

std::optional<unsigned> parc::rt::getEntryArity(StringRef symbol) {
  for (const EntryDecl &e : rtEntryTable)
    if (e.symbol == symbol)
      return e.arity;
  return std::nullopt;
}

ArrayRef<RuntimeOnlyEntry> parc::rt::getRuntimeOnlyEntries() {
  return rtRuntimeOnlyTable;
}

ArrayRef<NoKernelOp> parc::rt::getOpsWithoutKernel() { return rtNoKernelTable; }

/// "1 input", "2 to 3 inputs", "at least 1 input".
static std::string countText(int64_t min, int64_t max, StringRef what) {
  std::string n = max < 0 ? "at least " + std::to_string(min)
                  : min == max
                      ? std::to_string(min)
                      : std::to_string(min) + " to " + std::to_string(max);
  bool one = min == 1 && (max == 1 || max < 0);
  return n + " " + what.str() + (one ? "" : "s");
}

static bool inRange(size_t n, int64_t min, int64_t max) {
  return static_cast<int64_t>(n) >= min &&
         (max < 0 || static_cast<int64_t>(n) <= max);
}

LogicalResult parc::rt::verifyKernelCall(Operation *op, StringRef callee,
                                         ValueRange ins, ValueRange outs,
                                         DictionaryAttr params, bool started) {
  const KernelDecl *k = lookupKernel(callee);
  if (!k)
    return op->emitOpError() << "no runtime kernel named '" << callee << "'";
  if (started && !k->hasStart)
    return op->emitOpError()
           << callee << " has no asynchronous form (" << k->entry << "_start)";
  if (!inRange(ins.size(), k->minIns, k->maxIns) ||
      !inRange(outs.size(), k->minOuts, k->maxOuts)) {
    InFlightDiagnostic diag = op->emitOpError() << callee << " takes ";
    if (!k->operands.empty())
      return diag << k->operands;
    return diag << countText(k->minIns, k->maxIns, "input") << " and "
                << countText(k->minOuts, k->maxOuts, "output") << ", not "
                << ins.size() << " and " << outs.size();
  }
  if (k->sameElementType) {
    auto types =
        llvm::map_range(llvm::concat<const Value>(ins, outs), [](Value v) {
          return cast<MemRefType>(v.getType()).getElementType();
        });
    if (!llvm::all_equal(types))
      return op->emitOpError()
             << callee << " needs one element type on every buffer";
  }
  for (NamedAttribute attr : params) {
    const KernelParam *p = k->lookupParam(attr.getName());
    if (!p)
      return op->emitOpError() << callee << " takes no parameter '"
                               << attr.getName().getValue() << "'";
    if (!p->matches(attr.getValue()))
      return op->emitOpError()
             << "parameter '" << p->name << "' of " << callee << " must be "
             << p->kind << ", not " << attr.getValue();
  }
  for (const KernelParam &p : k->params)
    if (!p.optional && !params.get(p.name))
      return op->emitOpError() << callee << " needs parameter '" << p.name
                               << "' (" << p.kind << ")";
  return success();
}
