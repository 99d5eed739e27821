//===- Padding.cpp - zero padding of widths tp does not divide --*- C++ -*-===//
//
// An MLP of hidden width F that tp does not divide is padded to the next
// multiple of tp: zero columns in its column weights, zero bias entries and
// zero rows in its row weight. A padded feature is then 0 through every op
// of the MLP (an activation with act(0) = 0, a product with a zero factor,
// a sum of zeros) and its zero row adds nothing to the row product, so the
// padded MLP computes exactly what the original does and splits evenly.
//
// Attention heads that tp does not fit are padded the same way: zero
// columns per head in the query/key/value weights and zero rows in the
// output projection. A zero head's output, whatever its softmax, meets
// those zero rows and adds nothing. Grouped-query key/value heads take
// zero heads together with their groups of query heads, so that every
// query head still reads its own key/value head.
//
//===----------------------------------------------------------------------===//

#include "Padding.h"
#include "Regions.h"

#include "parc/Support/MappedFiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Path.h"

#include <cstring>

#define DEBUG_TYPE "dist-padding"

using namespace mlir;
namespace nn = parc::nn;
namespace dist = parc::dist;

/// The bytes of an embedded weight, one element for a splat; none when they
/// are not at hand (a resource without its blob) or not whole bytes.
static std::optional<ArrayRef<char>> rawBytes(ElementsAttr value, bool &splat) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementTypeBitWidth() % 8)
    return std::nullopt;
  int64_t elem = type.getElementTypeBitWidth() / 8;
  ArrayRef<char> bytes;
  splat = false;
  if (auto res = dyn_cast<DenseResourceElementsAttr>(value)) {
    if (!res.getRawHandle().getBlob())
      return std::nullopt;
    bytes = res.getRawHandle().getBlob()->getData();
  } else if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    splat = dense.isSplat();
    bytes = dense.getRawData();
  } else {
    return std::nullopt;
  }
  if ((int64_t)bytes.size() != (splat ? 1 : type.getNumElements()) * elem)
    return std::nullopt;
  return bytes;
}

bool dist::canPadWeight(Value v) {
  v = nn::weightSource(v);
  if (v && v.getDefiningOp<nn::ExternalWeightOp>())
    return true;
  bool splat;
  ElementsAttr value = nn::weightElements(v);
  return value && rawBytes(value, splat).has_value();
}

ElementsAttr dist::padAlong(ElementsAttr value, int64_t dim, int64_t pad) {
  auto type = cast<RankedTensorType>(value.getType());
  return padBlocks(value, dim, {type.getDimSize(dim)}, {pad});
}

ElementsAttr dist::padBlocks(ElementsAttr value, int64_t dim,
                             ArrayRef<int64_t> blocks, ArrayRef<int64_t> pads) {
  auto type = cast<RankedTensorType>(value.getType());
  bool splat;
  std::optional<ArrayRef<char>> raw = rawBytes(value, splat);
  if (!raw)
    return {};
  std::string key = "padded";
  if (auto res = dyn_cast<DenseResourceElementsAttr>(value))
    key = res.getRawHandle().getKey().str() + ".padded";
  // A splat (as in tests) is spelled out: the pad makes it one no more.
  std::vector<char> whole;
  if (splat) {
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      whole.insert(whole.end(), raw->begin(), raw->end());
    raw = ArrayRef<char>(whole);
  }
  ArrayRef<char> bytes = *raw;
  int64_t elem = type.getElementTypeBitWidth() / 8;
  // Rows of `inner` bytes, `outer` of them; each block of a row is followed
  // by its pad, pad·inner zero bytes.
  int64_t outer = 1, inner = elem, grown = 0;
  for (int64_t d = 0; d < dim; ++d)
    outer *= type.getDimSize(d);
  for (int64_t d = dim + 1; d < type.getRank(); ++d)
    inner *= type.getDimSize(d);
  for (int64_t p : pads)
    grown += p;
  int64_t row = type.getDimSize(dim) * inner,
          padded = (type.getDimSize(dim) + grown) * inner;
  std::vector<char> out(outer * padded, 0);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t from = o * row, to = o * padded;
    for (auto [block, pad] : llvm::zip_equal(blocks, pads)) {
      std::memcpy(out.data() + to, bytes.data() + from, block * inner);
      from += block * inner;
      to += (block + pad) * inner;
    }
  }
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] += grown;
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(out, alignof(uint64_t));
  return DenseResourceElementsAttr::get(RankedTensorType::get(shape, type.getElementType()),
                                        key, std::move(blob));
}

Value dist::padWeight(OpBuilder &b, Value weight, int64_t dim, int64_t pad) {
  Value v = nn::weightSource(weight);
  if (!v)
    return {};
  return padWeightBlocks(b, weight, dim, {tensorOf(v).getDimSize(dim)}, {pad});
}

namespace {
/// Where a weight's bytes lie in a file, and the zeros described so far.
struct FileWeight {
  StringAttr name, location;
  IntegerAttr offset, length;
  DenseI64ArrayAttr padding, paddingBlocks;
};
} // namespace

/// The file bytes behind `v`: an external weight's, or those of an embedded
/// weight the importer left in the mapped model file. Padding either is
/// then a description for the weight writer, not a padded copy in memory.
static std::optional<FileWeight> fileWeight(OpBuilder &b, Value v) {
  if (auto ext = v.getDefiningOp<nn::ExternalWeightOp>())
    return FileWeight{ext.getNameAttr(), ext.getLocationAttr(),
                      ext.getOffsetAttr(), ext.getLengthAttr(),
                      ext.getPaddingAttr(), ext.getPaddingBlocksAttr()};
  auto res = dyn_cast_or_null<DenseResourceElementsAttr>(nn::weightElements(v));
  AsmResourceBlob *blob = res ? res.getRawHandle().getBlob() : nullptr;
  if (!blob)
    return std::nullopt;
  ArrayRef<char> bytes = blob->getData();
  std::optional<parc::FileSpan> span =
      parc::findMappedFile(StringRef(bytes.data(), bytes.size()));
  if (!span)
    return std::nullopt;
  // The writer reads `location` beside the model: the model file itself.
  return FileWeight{b.getStringAttr(res.getRawHandle().getKey()),
                    b.getStringAttr(llvm::sys::path::filename(span->path)),
                    b.getI64IntegerAttr(span->offset),
                    b.getI64IntegerAttr(bytes.size()), {}, {}};
}

Value dist::padWeightBlocks(OpBuilder &b, Value weight, int64_t dim,
                            ArrayRef<int64_t> blocks, ArrayRef<int64_t> pads) {
  if (!canPadWeight(weight))
    return {};
  Value v = nn::weightSource(weight);
  auto type = tensorOf(v);
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t pad : pads)
    shape[dim] += pad;
  auto padded = RankedTensorType::get(shape, type.getElementType());
  if (std::optional<FileWeight> file = fileWeight(b, v)) {
    // The file's bytes stay where they are: the zeros are described, at the
    // end of the dim or (padding_blocks) after each of its blocks.
    SmallVector<int64_t> padding(type.getRank(), 0);
    if (file->padding)
      padding.assign(file->padding.asArrayRef().begin(),
                     file->padding.asArrayRef().end());
    DenseI64ArrayAttr spread;
    if (blocks.size() > 1) {
      // Blocks of a dim padded already would need their old zeros placed.
      if (file->paddingBlocks ||
          llvm::any_of(padding, [](int64_t p) { return p != 0; }))
        return {};
      SmallVector<int64_t> pairs;
      for (auto [block, pad] : llvm::zip_equal(blocks, pads))
        pairs.append({block, pad});
      spread = b.getDenseI64ArrayAttr(pairs);
    } else if (file->paddingBlocks) {
      return {};
    }
    for (int64_t pad : pads)
      padding[dim] += pad;
    return recast(b, weight,
                  nn::ExternalWeightOp::create(
                      b, v.getLoc(), padded, file->name, file->location,
                      file->offset, file->length,
                      b.getDenseI64ArrayAttr(padding), spread));
  }
  ElementsAttr value = padBlocks(nn::weightElements(v), dim, blocks, pads);
  if (!value)
    return {};
  return recast(b, weight, arith::ConstantOp::create(b, v.getLoc(), value));
}

/// A weight and its casts, once nothing reads them.
static void eraseDead(Value v) {
  while (v && v.use_empty()) {
    Operation *def = v.getDefiningOp();
    v = isa<nn::CastOp>(def) ? def->getOperand(0) : Value();
    def->erase();
  }
}

/// Sets each operand to its padded weight if all of them could be padded
/// (`ok`), erasing the weights nothing reads any more; otherwise erases the
/// padded ones and leaves the IR as it was. Returns `ok`.
static bool commitPadding(ArrayRef<std::pair<OpOperand *, Value>> padded,
                          bool ok) {
  if (!ok) {
    for (auto [operand, value] : padded)
      eraseDead(value);
    return false;
  }
  for (auto [operand, value] : padded) {
    Value old = operand->get();
    operand->set(value);
    eraseDead(old);
  }
  return true;
}

/// The MLP ending at `row` that can take zero features, its weights' bytes
/// at hand (the rule the planner reads too: WeightShards.h).
static std::optional<parc::plan::PaddableMlp> analyze(nn::LinearOp row) {
  return parc::plan::analyzePaddableMlp(row, dist::canPadWeight);
}

bool dist::isPaddableMlp(nn::LinearOp row) { return analyze(row).has_value(); }

bool dist::padMlpWidth(nn::LinearOp row, int64_t tp) {
  std::optional<parc::plan::PaddableMlp> m = analyze(row);
  if (!m || m->width % tp == 0)
    return false;
  int64_t pad = parc::plan::paddedWidth(m->width, tp) - m->width;
  // Every padded weight first: one whose bytes are not at hand leaves the
  // MLP as it is, and the width a misfit.
  SmallVector<std::pair<OpOperand *, Value>> padded;
  auto add = [&](OpOperand &operand, int64_t dim) {
    OpBuilder b(operand.getOwner());
    Value v = padWeight(b, operand.get(), dim, pad);
    padded.push_back({&operand, v});
    return bool(v);
  };
  bool ok = add(row.getWeightMutable(), row.getTransposeWeight() ? 1 : 0);
  for (nn::LinearOp col : m->columns) {
    ok &= add(col.getWeightMutable(), col.getTransposeWeight() ? 0 : 1);
    if (col.getBias())
      ok &= add(col.getBiasMutable()[0], 0);
  }
  for (Operation *op : m->ops)
    for (OpOperand &operand : op->getOpOperands())
      if (nn::isWeight(operand.get()) &&
          parc::plan::spansFeatures(operand.get(), m->width))
        ok &= add(operand, tensorOf(operand.get()).getRank() - 1);
  if (!commitPadding(padded, ok))
    return false;
  auto grow = [&](Value v) {
    auto t = tensorOf(v);
    SmallVector<int64_t> shape(t.getShape());
    shape.back() += pad;
    v.setType(RankedTensorType::get(shape, t.getElementType()));
  };
  for (nn::LinearOp col : m->columns)
    grow(col.getResult());
  for (Operation *op : m->ops)
    grow(op->getResult(0));
  LLVM_DEBUG(llvm::dbgs() << "dist: padded the MLP of " << nodeOf(row) << " from "
                          << m->width << " to " << m->width + pad << " features\n");
  return true;
}

void dist::retypeScoreModifier(nn::AttentionOp att) {
  Block &mod = att.getScoreModBlock();
  mod.getArgument(0).setType(att.getScoreType());
  for (Operation &inner : mod.without_terminator()) {
    if (inner.getNumOperands() == 0)
      continue; // constants keep their own type
    SmallVector<int64_t> shape;
    for (Value v : inner.getOperands())
      shape = *nn::broadcastShapes(shape, dist::tensorOf(v).getShape());
    auto t = dist::tensorOf(inner.getResult(0));
    inner.getResult(0).setType(RankedTensorType::get(shape, t.getElementType()));
  }
}

namespace {

/// An attention region found by the planner as if tp were its number of
/// heads: the split dim of every value is then the dim that holds the
/// heads (outermost), and its parts its number of heads.
struct Heads {
  dist::Region region;
  nn::AttentionOp att;
  int64_t heads = 0, kvHeads = 0;
  /// The heads `v` holds (query heads, or key/value heads on their path).
  int64_t of(mlir::Value v) const { return region.partsOf(v, heads); }
};

/// Whether every weight the padding grows can take zeros: the columns',
/// the side inputs' and the row's.
bool canPadRegion(dist::Region &r) {
  for (nn::LinearOp col : r.columns)
    if (!dist::canPadWeight(col.getWeight()) ||
        (col.getBias() && !dist::canPadWeight(col.getBias())))
      return false;
  for (auto [operand, dim] : r.sideParts)
    if (!dist::canPadWeight(operand->get()))
      return false;
  return dist::canPadWeight(r.row.getWeight());
}

/// Constants of the score modifier that vary over heads (ALiBi slopes):
/// they would need zero heads too.
bool scoresVaryOverHeads(nn::AttentionOp att) {
  Block &mod = att.getScoreModBlock();
  int64_t rank = att.getScoreType().getRank();
  for (Operation &inner : mod.without_terminator())
    for (Value v : inner.getOperands()) {
      if (isa<BlockArgument>(v) && v.getParentBlock() == &mod)
        continue; // the scores, or a mask the planner checks
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != &mod)
        return true; // read from outside: not checked here
      if (def->getNumOperands())
        continue; // computed from the scores: retyped with them
      auto t = dist::tensorOf(v);
      int64_t d = 1 - (rank - t.getRank());
      if (d >= 0 && t.getDimSize(d) != 1)
        return true;
    }
  return false;
}

std::optional<Heads> analyzeHeads(nn::LinearOp row) {
  // A dry run at tp 1 finds the region's one attention.
  dist::Planner probe(1, /*explain=*/false);
  FailureOr<dist::Region> any = probe.discover(row);
  if (failed(any))
    return std::nullopt;
  Heads h;
  for (Operation *op : any->ops)
    if (auto att = dyn_cast<nn::AttentionOp>(op)) {
      if (h.att)
        return std::nullopt;
      h.att = att;
    }
  if (!h.att)
    return std::nullopt;
  h.heads = dist::tensorOf(h.att.getQuery()).getDimSize(1);
  h.kvHeads = dist::tensorOf(h.att.getKey()).getDimSize(1);
  if (h.heads < 2 || h.heads % h.kvHeads || scoresVaryOverHeads(h.att))
    return std::nullopt;
  dist::Planner planner(h.heads, /*explain=*/false);
  FailureOr<dist::Region> r = planner.discover(row);
  if (failed(r) || failed(planner.propagate(*r)) || !canPadRegion(*r))
    return std::nullopt;
  h.region = std::move(*r);
  return h;
}

} // namespace

bool dist::isPaddableAttention(nn::LinearOp row) {
  return analyzeHeads(row).has_value();
}

bool dist::padAttentionHeads(nn::LinearOp row, int64_t tp) {
  std::optional<Heads> h = analyzeHeads(row);
  if (!h)
    return false;
  auto [heads, kvHeads] = parc::plan::paddedHeads(h->heads, h->kvHeads, tp);
  if (heads == h->heads && kvHeads == h->kvHeads)
    return false;
  dist::Region &r = h->region;
  // How many entries a dim of `size` holding `n` heads grows by.
  auto growth = [&](int64_t size, int64_t n) {
    return size / n * ((n == h->heads ? heads : kvHeads) - n);
  };
  auto lastGrowth = [&](Value v) {
    auto t = tensorOf(v);
    return growth(t.getShape().back(), h->of(v));
  };
  // Every padded weight first: one that cannot be padded leaves the
  // attention as it is.
  SmallVector<std::pair<OpOperand *, Value>> padded;
  auto add = [&](OpOperand &operand, Value v) {
    padded.push_back({&operand, v});
    return bool(v);
  };
  auto padColumn = [&](OpOperand &operand, nn::LinearOp col, int64_t dim) {
    OpBuilder b(operand.getOwner());
    auto blocks = r.blocks.find(col);
    if (blocks == r.blocks.end())
      return add(operand, padWeight(b, operand.get(), dim,
                                    lastGrowth(col.getResult())));
    // Fused QKV: each projection's block takes its own zero heads.
    auto split = cast<nn::SplitOp>(*col->getUsers().begin());
    SmallVector<int64_t> pads;
    for (auto [piece, size] : llvm::zip_equal(split.getOutputs(), blocks->second))
      pads.push_back(growth(size, h->of(piece)));
    return add(operand,
               padWeightBlocks(b, operand.get(), dim, blocks->second, pads));
  };
  bool ok = true;
  for (nn::LinearOp col : r.columns) {
    ok &= padColumn(col.getWeightMutable(), col, col.getTransposeWeight() ? 0 : 1);
    if (col.getBias())
      ok &= padColumn(col.getBiasMutable()[0], col, 0);
  }
  for (auto [operand, dim] : r.sideParts) {
    OpBuilder b(operand->getOwner());
    int64_t n = h->of(operand->getOwner()->getResult(0));
    ok &= add(*operand,
              padWeight(b, operand->get(), dim,
                        growth(tensorOf(operand->get()).getDimSize(dim), n)));
  }
  OpBuilder b(row);
  ok &= add(row.getWeightMutable(),
            padWeight(b, row.getWeight(), row.getTransposeWeight() ? 1 : 0,
                      lastGrowth(row.getInput())));
  if (!commitPadding(padded, ok))
    return false;
  // Every value of the region grows on its heads dim; all new types are
  // computed from the old ones before any is set.
  SmallVector<std::pair<Value, Type>> types;
  for (auto [v, dim] : r.split) {
    auto t = tensorOf(v);
    SmallVector<int64_t> shape(t.getShape());
    shape[dim] += growth(shape[dim], h->of(v));
    types.push_back({v, RankedTensorType::get(shape, t.getElementType())});
  }
  for (auto [v, type] : types)
    v.setType(type);
  // A KV cache takes the zero heads too: the function's signature follows.
  if (!r.caches.empty()) {
    auto fn = cast<FunctionOpInterface>(
        cast<BlockArgument>(r.caches.begin()->first).getOwner()->getParentOp());
    fn.setType(FunctionType::get(fn.getContext(),
                                 fn.getFunctionBody().getArgumentTypes(),
                                 fn.getResultTypes()));
  }
  retypeScoreModifier(h->att);
  LLVM_DEBUG(llvm::dbgs() << "dist: padded the attention of " << nodeOf(h->att)
                          << " from " << h->heads << "/" << h->kvHeads << " to "
                          << heads << "/" << kvHeads << " heads\n");
  return true;
}
