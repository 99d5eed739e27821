//===- shape.h - Strided loop nests -----------------------------*- C++ -*-===//
//
// Kernels describe their operands as strided views over one index space
// (broadcast dims get stride 0, permuted or sliced inputs get permuted or
// scaled strides). LoopNest<K> merges dims that stay contiguous for every
// operand, so that the innermost loop is long and unit- or zero-strided,
// which is what the vectoriser needs, and splits the work over threads.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_CPU_SHAPE_H
#define PARC_RUNTIME_CPU_SHAPE_H

#include "../shape_checks.h"
#include "../status.h"
#include "threads.h"

#include <algorithm>
#include <array>

namespace parc::rt {

/// K strided operands over one index space, with mergeable dims merged.
template <int K> class LoopNest {
public:
  /// `strides[k]` holds `rank` strides (elements) of operand k.
  LoopNest(int64_t rank, const int64_t *dims,
           const std::array<const int64_t *, K> &strides) {
    for (int64_t i = 0; i < rank; ++i) {
      if (dims[i] == 0)
        empty_ = true;
      if (dims[i] == 1)
        continue; // size-1 dims never advance any operand
      if (rank_ > 0 && mergeable(strides, dims, i)) {
        dims_[rank_ - 1] *= dims[i];
        for (int k = 0; k < K; ++k)
          strides_[k][rank_ - 1] = strides[k][i];
        continue;
      }
      dims_[rank_] = dims[i];
      for (int k = 0; k < K; ++k)
        strides_[k][rank_] = strides[k][i];
      ++rank_;
    }
    if (rank_ == 0) { // a scalar: one row of one element
      dims_[0] = 1;
      for (int k = 0; k < K; ++k)
        strides_[k][0] = 0;
      rank_ = 1;
    }
  }

  int rank() const { return rank_; }
  int64_t dim(int i) const { return dims_[i]; }
  int64_t stride(int k, int i) const { return strides_[k][i]; }
  int64_t innerSize() const { return dims_[rank_ - 1]; }
  int64_t innerStride(int k) const { return strides_[k][rank_ - 1]; }
  int64_t numElements() const {
    return empty_ ? 0 : parc::rt::numElements(rank_, dims_);
  }

  /// Calls body(offsets, n) for runs of n inner elements, where operand k's
  /// run starts at offsets[k] and advances by innerStride(k). Runs are split
  /// over threads once the loop holds at least `grain` elements.
  template <typename Body>
  void run(Body &&body, int64_t grain = 1 << 15) const {
    if (empty_)
      return;
    const int64_t inner = innerSize();
    const int64_t rows = numElements() / inner;
    int64_t piece = inner;
    int threads = numThreads();
    // Few long rows: cut rows into pieces so every thread gets work.
    if (threads > 1 && rows < 4 * threads)
      piece = std::max<int64_t>(1024, (rows * inner + 4 * threads - 1) /
                                          (4 * threads));
    piece = std::min(piece, inner);
    const int64_t perRow = (inner + piece - 1) / piece;
    const int64_t pieces = rows * perRow;
    parallelRanges(pieces, std::max<int64_t>(1, grain / piece),
                   [&](int64_t begin, int64_t end) {
                     runPieces(begin, end, piece, perRow, body);
                   });
  }

private:
  /// Dim i folds into the previous kept dim when, for every operand, one
  /// step of the previous dim equals dims[i] steps of dim i.
  bool mergeable(const std::array<const int64_t *, K> &strides,
                 const int64_t *dims, int64_t i) const {
    for (int k = 0; k < K; ++k)
      if (strides_[k][rank_ - 1] != strides[k][i] * dims[i])
        return false;
    return true;
  }

  template <typename Body>
  void runPieces(int64_t begin, int64_t end, int64_t piece, int64_t perRow,
                 Body &body) const {
    const int outer = rank_ - 1;
    int64_t index[PARC_RT_MAX_RANK] = {};
    std::array<int64_t, K> rowOffsets{};
    int64_t row = begin / perRow, part = begin % perRow;
    // Decompose the first row index once, then step it like an odometer.
    int64_t rem = row;
    for (int d = outer - 1; d >= 0; --d) {
      index[d] = rem % dims_[d];
      rem /= dims_[d];
      for (int k = 0; k < K; ++k)
        rowOffsets[k] += index[d] * strides_[k][d];
    }
    const int64_t inner = dims_[rank_ - 1];
    for (int64_t p = begin; p < end; ++p) {
      int64_t start = part * piece;
      int64_t n = std::min(piece, inner - start);
      std::array<int64_t, K> offsets;
      for (int k = 0; k < K; ++k)
        offsets[k] = rowOffsets[k] + start * strides_[k][outer];
      body(offsets, n);
      if (++part == perRow) {
        part = 0;
        for (int d = outer - 1; d >= 0; --d) {
          for (int k = 0; k < K; ++k)
            rowOffsets[k] += strides_[k][d];
          if (++index[d] < dims_[d])
            break;
          for (int k = 0; k < K; ++k)
            rowOffsets[k] -= strides_[k][d] * dims_[d];
          index[d] = 0;
        }
      }
    }
  }

  int rank_ = 0;
  bool empty_ = false;
  int64_t dims_[PARC_RT_MAX_RANK];
  int64_t strides_[K][PARC_RT_MAX_RANK];
};

} // namespace parc::rt

#endif // PARC_RUNTIME_CPU_SHAPE_H
