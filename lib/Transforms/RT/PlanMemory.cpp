//===- PlanMemory.cpp - rt-plan-memory --------------------------*- C++ -*-===//
//
// The program is straight-line code, so a buffer's live range is an interval
// of op indices and arena placement is interval packing. Placing the largest
// buffers first at the lowest free offset is the greedy rule TFLite and
// onnxruntime's planners use; it is near the lower bound (the largest sum of
// simultaneously live buffers) on transformer graphs.
//
//===----------------------------------------------------------------------===//

#include "parc/Transforms/RT/Passes.h"
#include "rt/RTDialect.h"

#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "rt-plan-memory"

namespace parc::rt {
#define GEN_PASS_DEF_RTPLANMEMORY
#include "parc/Transforms/RT/Passes.h.inc"
} // namespace parc::rt

using namespace mlir;
using namespace parc::rt;

namespace {

struct Interval {
  AllocOp alloc;
  int64_t bytes, first, last, offset = -1;
};

/// Bytes of a buffer, or nullopt when they overflow 64 bits.
std::optional<int64_t> byteSize(MemRefType type) {
  int64_t bytes = std::max<int64_t>(type.getElementTypeBitWidth() / 8, 1);
  for (int64_t d : type.getShape())
    if (d < 0 || llvm::MulOverflow(bytes, d, bytes))
      return std::nullopt;
  return bytes;
}

std::string humanBytes(int64_t bytes) {
  constexpr int64_t kGiB = int64_t(1) << 30;
  if (bytes < kGiB)
    return llvm::formatv("{0} bytes", bytes).str();
  return llvm::formatv("{0} bytes ({1:F1} GiB)", bytes, bytes / double(kGiB))
      .str();
}

struct RTPlanMemoryPass
    : parc::rt::impl::RTPlanMemoryBase<RTPlanMemoryPass> {
  using Base::Base;

  LogicalResult tooLarge(FunctionOpInterface func, StringRef what,
                         std::optional<int64_t> bytes) {
    auto diag = func.emitError() << "rank program '" << func.getName()
                                 << "' " << what << " ";
    if (bytes)
      diag << humanBytes(*bytes);
    else
      diag << "more than 2^63 bytes";
    diag << ", more than the " << humanBytes(maxBytes)
         << " one device may hold; the model's shapes are too large for it "
            "(bind smaller input dims, or split it over more ranks)";
    return failure();
  }

  /// Refuses a program whose buffers or weights no device could hold.
  LogicalResult checkSizes(FunctionOpInterface func) {
    int64_t weights = 0;
    WalkResult walk = func.walk([&](Operation *op) {
      if (!isa<AllocOp, WeightOp>(op))
        return WalkResult::advance();
      auto type = cast<MemRefType>(op->getResult(0).getType());
      std::optional<int64_t> bytes = byteSize(type);
      bool weight = isa<WeightOp>(op);
      if (!bytes || *bytes > maxBytes)
        return (void)tooLarge(func, weight ? "holds a weight of"
                                           : "needs a buffer of",
                              bytes),
               WalkResult::interrupt();
      // Each term is at most maxBytes < 2^62: the sum stays far from wrapping.
      if (weight && (weights += *bytes) > maxBytes)
        return (void)tooLarge(func, "holds weights of", weights),
               WalkResult::interrupt();
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  void runOnOperation() override {
    FunctionOpInterface func = getOperation();
    if (func.isExternal())
      return;
    if (failed(checkSizes(func)))
      return signalPassFailure();
    // Op indices in program order; views extend the range of their root.
    llvm::DenseMap<Operation *, int64_t> index;
    int64_t n = 0;
    func.walk([&](Operation *op) { index[op] = n++; });
    std::vector<Interval> intervals;
    llvm::DenseMap<Value, size_t> slot;
    func.walk([&](AllocOp alloc) {
      slot[alloc.getResult()] = intervals.size();
      intervals.push_back({alloc, *byteSize(alloc.getType()), index[alloc],
                           index[alloc], -1});
    });
    std::function<void(Value, size_t)> extend = [&](Value v, size_t s) {
      for (Operation *user : v.getUsers()) {
        int64_t at = isa<OutputOp>(user) ? n : index[user];
        // An asynchronous call reads and writes its buffers until its wait.
        if (auto start = dyn_cast<StartOp>(user))
          at = index[*start.getRequest().getUsers().begin()];
        intervals[s].last = std::max(intervals[s].last, at);
        if (auto view = dyn_cast<ViewOp>(user))
          extend(view.getResult(), s);
      }
    };
    for (auto &[value, s] : slot)
      extend(value, s);

    std::vector<Interval *> order;
    for (Interval &iv : intervals)
      order.push_back(&iv);
    llvm::stable_sort(order, [](Interval *a, Interval *b) {
      return a->bytes > b->bytes;
    });
    int64_t arena = 0, unplanned = 0;
    std::vector<Interval *> placed;
    for (Interval *iv : order) {
      // Occupied byte ranges of buffers alive at the same time, by offset.
      std::vector<std::pair<int64_t, int64_t>> busy;
      for (Interval *p : placed)
        if (p->first <= iv->last && iv->first <= p->last)
          busy.push_back({p->offset, p->offset + p->bytes});
      llvm::sort(busy);
      int64_t offset = 0;
      for (auto [lo, hi] : busy) {
        if (offset + iv->bytes <= lo)
          break;
        offset = std::max<int64_t>(offset, llvm::alignTo(hi, alignment));
      }
      iv->offset = offset;
      placed.push_back(iv);
      arena = std::max(arena, offset + iv->bytes);
      unplanned += llvm::alignTo(iv->bytes, alignment);
    }
    if (arena > maxBytes)
      return (void)tooLarge(func, "needs an arena of", arena),
             signalPassFailure();
    OpBuilder b(func);
    for (Interval &iv : intervals)
      iv.alloc.setOffsetAttr(b.getI64IntegerAttr(iv.offset));
    func->setAttr("rt.arena_size", b.getI64IntegerAttr(llvm::alignTo(arena, alignment)));
    func->setAttr("rt.unplanned_size", b.getI64IntegerAttr(unplanned));
    LLVM_DEBUG(llvm::dbgs() << "arena " << arena << " bytes, unplanned "
                            << unplanned << "\n");
  }
};

} // namespace
