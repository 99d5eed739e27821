//===- movement.cpp - strided copies, gather, scatter, trilu (cpu) --------===//
//
// Pure data movement is dtype-agnostic: every op here except scatter with a
// reduction moves 1/2/4/8-byte words. transpose, slice, expand, concat and
// split (src/copy_ops.cpp) are strided copies run by runCopyPlans here.
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "../dtype_traits.h"
#include "shape.h"

#include <cstring>
#include <vector>

using namespace parc::rt;

namespace {

/// Copy whose source is contiguous along outer dim p while the destination
/// is contiguous along the inner dim (a transpose): done in square tiles so
/// both sides stay in cache; a row-by-row walk would miss on every read.
template <typename W>
void tiledCopy(const LoopNest<2> &loop, int p, W *dst, const W *src) {
  constexpr int64_t kTile = 32;
  const int q = loop.rank() - 1;
  const int64_t rows = loop.dim(p), cols = loop.dim(q);
  const int64_t dRow = loop.stride(0, p), sCol = loop.stride(1, q);
  // Every dim but p and q is an outer loop of whole tiles.
  int64_t outer = 1;
  for (int d = 0; d < q; ++d)
    if (d != p)
      outer *= loop.dim(d);
  const int64_t rowTiles = (rows + kTile - 1) / kTile;
  parallelRanges(outer * rowTiles, 16, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      int64_t rest = t / rowTiles, dBase = 0, sBase = 0;
      for (int d = q - 1; d >= 0; --d) {
        if (d == p)
          continue;
        const int64_t i = rest % loop.dim(d);
        rest /= loop.dim(d);
        dBase += i * loop.stride(0, d);
        sBase += i * loop.stride(1, d);
      }
      const int64_t i0 = (t % rowTiles) * kTile,
                    i1 = std::min(rows, i0 + kTile);
      for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
        const int64_t j1 = std::min(cols, j0 + kTile);
        for (int64_t i = i0; i < i1; ++i) {
          W *d = dst + dBase + i * dRow;
          const W *s = src + sBase + i;
          for (int64_t j = j0; j < j1; ++j)
            d[j] = s[j * sCol];
        }
      }
    }
  });
}

/// dst[i] = src[i] over an index space of `dims`, each side with its own
/// element strides (negative allowed: reversed slices).
void stridedCopy(size_t elemSize, int64_t rank, const int64_t *dims, void *dst,
                 const int64_t *dstStrides, const void *src,
                 const int64_t *srcStrides) {
  LoopNest<2> loop(rank, dims, {dstStrides, srcStrides});
  const int64_t sd = loop.innerStride(0), ss = loop.innerStride(1);
  visitWord(elemSize, [&](auto word) {
    using W = decltype(word);
    W *d = static_cast<W *>(dst);
    const W *s = static_cast<const W *>(src);
    if (sd == 1 && ss != 1 && ss != 0 && loop.innerSize() >= 8)
      for (int p = loop.rank() - 2; p >= 0; --p)
        if (loop.stride(1, p) == 1 && loop.dim(p) >= 8)
          return tiledCopy(loop, p, d, s);
    loop.run([&](const std::array<int64_t, 2> &off, int64_t n) {
      W *dr = d + off[0];
      const W *sr = s + off[1];
      if (sd == 1 && ss == 1)
        std::memcpy(dr, sr, size_t(n) * sizeof(W));
      else if (ss == 0)
        for (int64_t i = 0; i < n; ++i)
          dr[i * sd] = *sr;
      else
        for (int64_t i = 0; i < n; ++i)
          dr[i * sd] = sr[i * ss];
    });
  });
}

/// Reads an i32/i64 index (the plan checked the dtype) and maps it into
/// [0, size), or reports it.
struct IndexReader {
  const char *op;
  parc_rt_dtype_t dtype;
  const void *data;

  int64_t raw(int64_t i) const {
    return dtype == PARC_RT_I64 ? static_cast<const int64_t *>(data)[i]
                                : static_cast<const int32_t *>(data)[i];
  }
  parc_rt_status_t get(int64_t i, int64_t size, int64_t axis,
                       int64_t &out) const {
    int64_t v = raw(i);
    if (v < -size || v >= size)
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "%s: index %lld at position %lld is out of range [%lld, "
                  "%lld) for axis %lld",
                  op, (long long)v, (long long)i, (long long)-size,
                  (long long)size, (long long)axis);
    out = v < 0 ? v + size : v;
    return PARC_RT_OK;
  }
};

template <parc_rt_scatter_reduction_t R, typename C>
C scatterCombine(C a, C b) {
  if constexpr (R == PARC_RT_SCATTER_ADD)
    return C(a + b);
  else if constexpr (R == PARC_RT_SCATTER_MUL)
    return C(a * b);
  else if constexpr (R == PARC_RT_SCATTER_MAX)
    return a > b ? a : b;
  else if constexpr (R == PARC_RT_SCATTER_MIN)
    return a < b ? a : b;
  else
    return b;
}

/// Applies updates at precomputed flat targets, in index order (so with
/// duplicates under NONE the last update wins, as in onnxruntime).
template <parc_rt_dtype_t D, parc_rt_scatter_reduction_t R>
void scatterApply(const std::vector<int64_t> &targets, const void *updatesv,
                  void *outv) {
  using Tr = Traits<D>;
  using S = typename Tr::Storage;
  const S *updates = static_cast<const S *>(updatesv);
  S *out = static_cast<S *>(outv);
  for (size_t i = 0; i < targets.size(); ++i) {
    S &t = out[targets[i]];
    if constexpr (R == PARC_RT_SCATTER_NONE)
      t = updates[i];
    else
      t = Tr::store(scatterCombine<R>(Tr::load(t), Tr::load(updates[i])));
  }
}

} // namespace

parc_rt_status_t
parc::rt::runCopyPlans(const char *, parc_rt_dtype_t dtype,
                       const std::vector<StridedCopyPlan> &plans) {
  for (const StridedCopyPlan &p : plans)
    stridedCopy(parc_rt_dtype_size(dtype), p.rank, p.dims, p.dst, p.dstStrides,
                p.src, p.srcStrides);
  return PARC_RT_OK;
}

parc_rt_status_t parc::rt::runGather(parc_rt_dtype_t dtype, const GatherPlan &p,
                                     const void *data, int64_t axis,
                                     parc_rt_dtype_t index_dtype,
                                     const void *indices, void *out) {
  IndexReader reader{"gather", index_dtype, indices};
  // Validate every index before writing anything.
  std::vector<int64_t> resolved(static_cast<size_t>(p.count));
  for (int64_t i = 0; i < p.count; ++i)
    PARC_RT_RETURN_IF_ERROR(reader.get(i, p.size, axis, resolved[i]));
  const size_t rowBytes = size_t(p.inner) * parc_rt_dtype_size(dtype);
  const char *src = static_cast<const char *>(data);
  char *dst = static_cast<char *>(out);
  const int64_t count = p.count, size = p.size;
  parallelRanges(
      p.outer * count, std::max<int64_t>(1, (1 << 16) / int64_t(rowBytes)),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t o = r / count, j = r % count;
          std::memcpy(dst + r * rowBytes,
                      src + (o * size + resolved[j]) * rowBytes, rowBytes);
        }
      });
  return PARC_RT_OK;
}

parc_rt_status_t parc::rt::runScatterElements(
    parc_rt_dtype_t dtype, const ScatterPlan &p, const void *data,
    int64_t rank, const int64_t *dims, int64_t axis,
    parc_rt_dtype_t index_dtype, const void *indices,
    const int64_t *index_dims, const void *updates,
    parc_rt_scatter_reduction_t reduction, void *out) {
  const int64_t a = p.axis, count = p.count;
  IndexReader reader{"scatter_elements", index_dtype, indices};
  // Resolve all targets first: a bad index must not leave out half-written.
  int64_t dataStrides[PARC_RT_MAX_RANK];
  contiguousStrides(rank, dims, dataStrides);
  std::vector<int64_t> targets(static_cast<size_t>(count));
  int64_t index[PARC_RT_MAX_RANK] = {};
  for (int64_t i = 0; i < count; ++i) {
    int64_t target = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t coordinate = index[d];
      if (d == a)
        PARC_RT_RETURN_IF_ERROR(reader.get(i, dims[a], axis, coordinate));
      target += coordinate * dataStrides[d];
    }
    targets[i] = target;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < index_dims[d])
        break;
      index[d] = 0;
    }
  }
  if (out != data && p.dataCount > 0)
    std::memcpy(out, data, size_t(p.dataCount) * parc_rt_dtype_size(dtype));
  auto run = [&](auto tag) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    if constexpr (Traits<D>::kind == Kind::Bool) {
      // The plan rejected bool with a reduction.
      scatterApply<D, PARC_RT_SCATTER_NONE>(targets, updates, out);
    } else {
      switch (reduction) {
      case PARC_RT_SCATTER_NONE:
        scatterApply<D, PARC_RT_SCATTER_NONE>(targets, updates, out);
        break;
      case PARC_RT_SCATTER_ADD:
        scatterApply<D, PARC_RT_SCATTER_ADD>(targets, updates, out);
        break;
      case PARC_RT_SCATTER_MUL:
        scatterApply<D, PARC_RT_SCATTER_MUL>(targets, updates, out);
        break;
      case PARC_RT_SCATTER_MAX:
        scatterApply<D, PARC_RT_SCATTER_MAX>(targets, updates, out);
        break;
      default:
        scatterApply<D, PARC_RT_SCATTER_MIN>(targets, updates, out);
        break;
      }
    }
    return PARC_RT_OK;
  };
  return visitDtype(dtype, run, [] { return PARC_RT_INTERNAL; });
}

parc_rt_status_t parc::rt::runTrilu(parc_rt_dtype_t dtype, const TriluPlan &p,
                                    const void *x, int64_t k, bool upper,
                                    void *y) {
  const int64_t batch = p.batch, rows = p.rows, cols = p.cols;
  const size_t elem = parc_rt_dtype_size(dtype);
  const char *src = static_cast<const char *>(x);
  char *dst = static_cast<char *>(y);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t row = (b * rows + i) * cols;
      // Kept columns form one interval: [max(0, i+k), cols) or [0, i+k].
      const int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
      const int64_t hi = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
      char *d = dst + row * int64_t(elem);
      const char *s = src + row * int64_t(elem);
      std::memset(d, 0, size_t(lo) * elem); // all-zero bits: 0, 0.0, false
      if (hi > lo && d != s)
        std::memcpy(d + lo * int64_t(elem), s + lo * int64_t(elem),
                    size_t(hi - lo) * elem);
      std::memset(d + hi * int64_t(elem), 0, size_t(cols - hi) * elem);
    }
  return PARC_RT_OK;
}
