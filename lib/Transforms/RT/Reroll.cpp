//===- Reroll.cpp - rt-reroll -----------------------------------*- C++ -*-===//
//
// Loop rerolling: a model's layers lower to the same calls over different
// buffers, so the program is a few stretches of calls repeated many times.
// Calls are keyed by OperationEquivalence (name, attributes, properties,
// types; operands ignored), which makes finding a run string matching over
// the keys; each candidate run is then checked exactly, stretch by stretch,
// and rolled into one rt.repeat that binds every stretch's buffers. The
// generated C++ then grows with the number of distinct layers, not with the
// depth.
//
//===----------------------------------------------------------------------===//

#include "parc/Transforms/RT/Passes.h"
#include "rt/RTDialect.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "rt-reroll"

namespace parc::rt {
#define GEN_PASS_DEF_RTREROLL
#include "parc/Transforms/RT/Passes.h.inc"
} // namespace parc::rt

using namespace mlir;
using namespace parc::rt;

namespace {

/// Ops that only name a buffer; everything else does something in order.
bool definesBuffer(Operation *op) {
  return isa<AllocOp, WeightOp, InputOp, ViewOp>(op);
}
bool isCall(Operation *op) { return isa<KernelOp, StartOp, WaitOp>(op); }

/// The op a buffer's bytes come from, through views: code generation reads
/// a binding as an arena offset, a weight slot or an input slot, so a
/// binding must come from the same kind of op in every stretch.
Operation *rootOf(Value v) {
  while (auto view = v.getDefiningOp<ViewOp>())
    v = view.getSource();
  Operation *def = v.getDefiningOp();
  return def && isa<AllocOp, WeightOp, InputOp>(def) ? def : nullptr;
}

const OperationEquivalence::Flags kFlags =
    OperationEquivalence::IgnoreLocations;

llvm::hash_code keyOf(Operation *op) {
  return OperationEquivalence::computeHash(
      op, [](Value v) { return hash_value(v.getType()); },
      OperationEquivalence::ignoreHashValue, kFlags);
}

/// The same call up to its buffers.
bool sameCall(Operation *a, Operation *b) {
  return OperationEquivalence::isEquivalentTo(
      a, b,
      [](Value x, Value y) { return success(x.getType() == y.getType()); },
      /*markEquivalent=*/nullptr, kFlags);
}

/// One stretch's buffers in order of first use, and which binding (or, for
/// a request, which earlier call of the stretch) each operand is.
struct Stretch {
  SmallVector<Value> bindings;
  SmallVector<OperationName> roots;
  SmallVector<int64_t> pattern;

  bool sameShape(const Stretch &other) const {
    return pattern == other.pattern && roots == other.roots;
  }
};

/// Fails when a request crosses the stretch's ends or a buffer has no root.
FailureOr<Stretch> describe(ArrayRef<Operation *> ops) {
  Stretch s;
  llvm::DenseMap<Value, int64_t> binding, started;
  int64_t waited = 0;
  for (auto [j, op] : llvm::enumerate(ops)) {
    for (Value v : op->getOperands()) {
      if (isa<RequestType>(v.getType())) {
        auto it = started.find(v);
        if (it == started.end())
          return failure();
        s.pattern.push_back(-1 - it->second);
        ++waited;
        continue;
      }
      auto [it, fresh] = binding.try_emplace(v, s.bindings.size());
      if (fresh) {
        Operation *root = rootOf(v);
        if (!root)
          return failure();
        s.bindings.push_back(v);
        s.roots.push_back(root->getName());
      }
      s.pattern.push_back(it->second);
    }
    if (auto start = dyn_cast<StartOp>(op))
      started[start.getRequest()] = j;
  }
  // Each request has one wait: all waited here means none outlives it.
  if (waited != static_cast<int64_t>(started.size()))
    return failure();
  return s;
}

struct Run {
  int64_t start = 0, period = 0;
  SmallVector<Stretch> stretches;
};

class Finder {
public:
  Finder(ArrayRef<Operation *> calls, int64_t minOps) : calls(calls), minOps(minOps) {
    llvm::DenseMap<llvm::hash_code, int64_t> classes;
    for (Operation *op : calls)
      // Ops that are not calls (outputs) never repeat.
      ids.push_back(isCall(op) ? classes.try_emplace(keyOf(op), classes.size())
                                     .first->second
                               : -1 - int64_t(ids.size()));
    next.assign(calls.size(), -1);
    llvm::DenseMap<int64_t, int64_t> last;
    for (int64_t i = static_cast<int64_t>(calls.size()) - 1; i >= 0; --i) {
      if (auto it = last.find(ids[i]); it != last.end())
        next[i] = it->second;
      last[ids[i]] = i;
    }
  }

  /// The runs to roll, left to right, none overlapping.
  SmallVector<Run> find() {
    SmallVector<Run> runs;
    for (int64_t p = 0, n = calls.size(); p < n;) {
      std::optional<Run> run = runAt(p);
      if (!run) {
        ++p;
        continue;
      }
      p += run->period * run->stretches.size();
      runs.push_back(std::move(*run));
    }
    return runs;
  }

private:
  /// The run of the shortest period that repeats from `p`, if any.
  std::optional<Run> runAt(int64_t p) {
    const int64_t n = calls.size();
    int tries = 0;
    for (int64_t q = next[p]; q >= 0 && tries < kMaxTries; q = next[q], ++tries) {
      int64_t period = q - p;
      if (p + 2 * period > n)
        break;
      int64_t match = 0;
      while (q + match < n && ids[p + match] == ids[q + match])
        ++match;
      int64_t count = match / period + 1;
      if (count * period < minOps)
        continue;
      Run run = check(p, period, count);
      if (run.stretches.size() >= 2 &&
          static_cast<int64_t>(run.stretches.size()) * period >= minOps)
        return run;
    }
    return std::nullopt;
  }

  /// The longest prefix of `count` stretches that are exactly alike.
  Run check(int64_t p, int64_t period, int64_t count) {
    Run run{p, period, {}};
    auto stretch = [&](int64_t i) { return calls.slice(p + i * period, period); };
    for (int64_t i = 0; i < count; ++i) {
      if (i > 0 && !llvm::all_of(llvm::seq<int64_t>(0, period), [&](int64_t j) {
            return sameCall(stretch(0)[j], stretch(i)[j]);
          }))
        break;
      FailureOr<Stretch> s = describe(stretch(i));
      if (failed(s) || (i > 0 && !s->sameShape(run.stretches.front())))
        break;
      run.stretches.push_back(std::move(*s));
    }
    return run;
  }

  // Bounds the search from one point on programs with many equal calls.
  static constexpr int kMaxTries = 64;
  ArrayRef<Operation *> calls;
  int64_t minOps;
  SmallVector<int64_t> ids, next;
};

/// Replaces the run's calls with one rt.repeat over the first stretch.
void roll(ArrayRef<Operation *> calls, const Run &run) {
  ArrayRef<Operation *> ops =
      calls.slice(run.start, run.period * run.stretches.size());
  ArrayRef<Operation *> first = ops.take_front(run.period);
  SmallVector<Value> bindings;
  for (const Stretch &s : run.stretches)
    llvm::append_range(bindings, s.bindings);
  SmallVector<Attribute> locations;
  for (Operation *op : ops)
    locations.push_back(op->getLoc());

  OpBuilder b(first.front());
  auto repeat = RepeatOp::create(
      b, first.front()->getLoc(),
      b.getI64IntegerAttr(static_cast<int64_t>(run.stretches.size())),
      bindings, b.getArrayAttr(locations));
  Block *body = b.createBlock(&repeat.getBody());
  IRMapping map;
  for (Value v : run.stretches.front().bindings)
    map.map(v, body->addArgument(v.getType(), v.getLoc()));
  for (Operation *op : first)
    b.clone(*op, map);
  for (Operation *op : llvm::reverse(ops))
    op->erase();
}

struct RTRerollPass : parc::rt::impl::RTRerollBase<RTRerollPass> {
  using Base::Base;

  void runOnOperation() override {
    FunctionOpInterface func = getOperation();
    if (!func.getFunctionBody().hasOneBlock())
      return;
    Block &block = func.getFunctionBody().front();
    SmallVector<Operation *> calls;
    for (Operation &op : block.without_terminator())
      if (!definesBuffer(&op))
        calls.push_back(&op);
    SmallVector<Run> runs = Finder(calls, minOps).find();
    if (runs.empty())
      return;
    // Every stretch's buffers must be defined before the loop reads them:
    // move the (pure) definitions, in order, above the first call.
    for (Operation &op : llvm::make_early_inc_range(block.without_terminator()))
      if (definesBuffer(&op) && calls.front()->isBeforeInBlock(&op))
        op.moveBefore(calls.front());
    for (const Run &run : runs) {
      LLVM_DEBUG(llvm::dbgs() << "rolling " << run.stretches.size() << " x "
                              << run.period << " calls\n");
      roll(calls, run);
    }
  }
};

} // namespace
