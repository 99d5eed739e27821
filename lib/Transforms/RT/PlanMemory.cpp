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

int64_t byteSize(MemRefType type) {
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * std::max<int64_t>(bits / 8, 1);
}

struct RTPlanMemoryPass
    : parc::rt::impl::RTPlanMemoryBase<RTPlanMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Op indices in program order; views extend the range of their root.
    llvm::DenseMap<Operation *, int64_t> index;
    int64_t n = 0;
    func.walk([&](Operation *op) { index[op] = n++; });
    std::vector<Interval> intervals;
    llvm::DenseMap<Value, size_t> slot;
    func.walk([&](AllocOp alloc) {
      slot[alloc.getResult()] = intervals.size();
      intervals.push_back({alloc, byteSize(alloc.getType()), index[alloc],
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
