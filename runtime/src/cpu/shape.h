//===- shape.h - Shape checks and strided loop nests ------------*- C++ -*-===//
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

#include "../status.h"
#include "threads.h"

#include <algorithm>
#include <array>

namespace parc::rt {

inline int64_t numElements(int64_t rank, const int64_t *dims) {
  int64_t n = 1;
  for (int64_t i = 0; i < rank; ++i)
    n *= dims[i];
  return n;
}

inline parc_rt_status_t checkShape(const char *op, const char *what,
                                   int64_t rank, const int64_t *dims) {
  if (rank < 0 || rank > PARC_RT_MAX_RANK)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: %s has rank %lld (max %d)", op,
                what, (long long)rank, PARC_RT_MAX_RANK);
  if (rank > 0 && !dims)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: %s has rank %lld but no dims",
                op, what, (long long)rank);
  for (int64_t i = 0; i < rank; ++i)
    if (dims[i] < 0)
      return fail(PARC_RT_INVALID_ARGUMENT, "%s: %s has negative dim in %s", op,
                  what, shapeString(rank, dims).c_str());
  return PARC_RT_OK;
}

inline parc_rt_status_t checkData(const char *op, const char *what,
                                  const void *ptr, int64_t count) {
  if (count > 0 && !ptr)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: %s is null", op, what);
  return PARC_RT_OK;
}

inline parc_rt_status_t checkDtype(const char *op, parc_rt_dtype_t dtype) {
  if (parc_rt_dtype_size(dtype) == 0)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: invalid dtype %d", op,
                int(dtype));
  return PARC_RT_OK;
}

inline parc_rt_status_t unsupportedDtype(const char *op,
                                         parc_rt_dtype_t dtype) {
  return fail(PARC_RT_UNSUPPORTED, "%s: dtype %s is not supported", op,
              parc_rt_dtype_name(dtype));
}

/// Maps a possibly negative axis into [0, rank).
inline parc_rt_status_t normalizeAxis(const char *op, int64_t axis,
                                      int64_t rank, int64_t &out) {
  if (axis < -rank || axis >= rank)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: axis %lld is out of range for rank %lld", op,
                (long long)axis, (long long)rank);
  out = axis < 0 ? axis + rank : axis;
  return PARC_RT_OK;
}

inline void contiguousStrides(int64_t rank, const int64_t *dims,
                              int64_t *strides) {
  int64_t s = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= dims[i];
  }
}

/// Strides (elements) reading an input of (rank, dims) broadcast to
/// (outRank, outDims), numpy rules: right-aligned, size-1 dims repeat.
inline parc_rt_status_t broadcastStrides(const char *op, const char *what,
                                         int64_t rank, const int64_t *dims,
                                         int64_t outRank,
                                         const int64_t *outDims,
                                         int64_t *strides) {
  if (rank > outRank)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: %s of shape %s does not broadcast to output shape %s", op,
                what, shapeString(rank, dims).c_str(),
                shapeString(outRank, outDims).c_str());
  int64_t inStrides[PARC_RT_MAX_RANK];
  contiguousStrides(rank, dims, inStrides);
  int64_t lead = outRank - rank;
  for (int64_t i = 0; i < outRank; ++i) {
    if (i < lead) {
      strides[i] = 0;
      continue;
    }
    int64_t d = dims[i - lead];
    if (d == outDims[i])
      strides[i] = d == 1 ? 0 : inStrides[i - lead];
    else if (d == 1)
      strides[i] = 0;
    else
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "%s: %s of shape %s does not broadcast to output shape %s",
                  op, what, shapeString(rank, dims).c_str(),
                  shapeString(outRank, outDims).c_str());
  }
  return PARC_RT_OK;
}

/// Checks that out is exactly the numpy broadcast of the n input shapes.
inline parc_rt_status_t checkBroadcastResult(const char *op, int n,
                                             const int64_t *ranks,
                                             const int64_t *const *dims,
                                             int64_t outRank,
                                             const int64_t *outDims) {
  int64_t rank = 0;
  for (int i = 0; i < n; ++i)
    rank = std::max(rank, ranks[i]);
  int64_t shape[PARC_RT_MAX_RANK];
  std::fill(shape, shape + rank, int64_t(1));
  for (int i = 0; i < n; ++i) {
    for (int64_t j = 0; j < ranks[i]; ++j) {
      int64_t &d = shape[rank - ranks[i] + j];
      int64_t e = dims[i][j];
      if (d == 1)
        d = e;
      else if (e != 1 && e != d) {
        std::string shapes;
        for (int k = 0; k < n; ++k)
          shapes += (k ? " and " : "") + shapeString(ranks[k], dims[k]);
        return fail(PARC_RT_INVALID_ARGUMENT,
                    "%s: shapes %s are not broadcastable", op, shapes.c_str());
      }
    }
  }
  if (rank != outRank || !std::equal(shape, shape + rank, outDims))
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: output shape %s does not match the broadcast shape %s", op,
                shapeString(outRank, outDims).c_str(),
                shapeString(rank, shape).c_str());
  return PARC_RT_OK;
}

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
