//===- movement.cu - strided copies, gather, scatter, trilu (cuda) --------===//
//
// As in the cpu backend, transpose, slice, expand, concat and split
// (src/copy_ops.cpp) are strided copies of 1/2/4/8-byte words over a
// LoopNest-merged index space, run by runCopyPlans here. A
// copy that reads along one dim and writes along another (a real
// transpose) goes through 32x32 shared-memory tiles so both sides stay
// coalesced. Gather copies whole rows with the widest word that divides
// them. ScatterElements gives each line along the scatter axis to one
// thread: lines never share targets, so updates apply in index order (the
// cpu backend's order, last update wins) without atomics.
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "kernels.cuh"

#include <cstring>
#include <vector>

using namespace parc::rt;
using namespace parc::rt::cuda;

namespace {

template <typename W>
__global__ void copyKernel(Strided<2> s, int64_t n, W *dst, const W *src) {
  PARC_GRID_STRIDE(i, n) {
    int64_t off[2];
    s.offsets(i, off);
    dst[off[0]] = src[off[1]];
  }
}

/// The dims of a copy other than the two a tile spans.
struct TileOuter {
  int rank = 0;
  int64_t dims[PARC_RT_MAX_RANK];
  int64_t dstStrides[PARC_RT_MAX_RANK], srcStrides[PARC_RT_MAX_RANK];
};

constexpr int kTile = 32, kTileRows = 8;

/// dst is contiguous along q (its inner dim), src along p: tile (p, q).
template <typename W>
__global__ void tiledCopyKernel(TileOuter outer, int64_t outerCount,
                                int64_t rows, int64_t cols, int64_t dRow,
                                int64_t sCol, W *dst, const W *src) {
  __shared__ W tile[kTile][kTile + 1];
  const int64_t i0 = int64_t(blockIdx.y) * kTile, j0 = int64_t(blockIdx.x) * kTile;
  for (int64_t z = blockIdx.z; z < outerCount; z += gridDim.z) {
    int64_t rest = z, dBase = 0, sBase = 0;
    for (int d = outer.rank - 1; d >= 0; --d) {
      const int64_t idx = rest % outer.dims[d];
      rest /= outer.dims[d];
      dBase += idx * outer.dstStrides[d];
      sBase += idx * outer.srcStrides[d];
    }
    // Read: threadIdx.x walks p, along which src is contiguous.
    const int64_t i = i0 + threadIdx.x;
    for (int r = threadIdx.y; r < kTile; r += kTileRows) {
      const int64_t j = j0 + r;
      if (i < rows && j < cols)
        tile[r][threadIdx.x] = src[sBase + i + j * sCol];
    }
    __syncthreads();
    // Write: threadIdx.x walks q, along which dst is contiguous.
    const int64_t j = j0 + threadIdx.x;
    for (int r = threadIdx.y; r < kTile; r += kTileRows) {
      const int64_t ii = i0 + r;
      if (ii < rows && j < cols)
        dst[dBase + ii * dRow + j] = tile[threadIdx.x][r];
    }
    __syncthreads();
  }
}

/// dst[i] = src[i] over `dims`, each side with its own element strides
/// (negative allowed: reversed slices). Issued on the compute stream.
parc_rt_status_t stridedCopy(State *s, const char *op, size_t elemSize,
                             int64_t rank, const int64_t *dims, void *dst,
                             const int64_t *dstStrides, const void *src,
                             const int64_t *srcStrides) {
  LoopNest<2> loop(rank, dims, {dstStrides, srcStrides});
  const int64_t n = loop.numElements();
  if (n == 0)
    return PARC_RT_OK;
  const int q = loop.rank() - 1;
  // A contiguous run on both sides is a memcpy.
  if (loop.rank() == 1 && loop.innerStride(0) == 1 && loop.innerStride(1) == 1) {
    PARC_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, size_t(n) * elemSize,
                                              cudaMemcpyDeviceToDevice,
                                              s->compute),
                              op, "cudaMemcpyAsync");
    return PARC_RT_OK;
  }
  int p = -1;
  if (loop.innerStride(0) == 1 && loop.innerStride(1) != 1 &&
      loop.innerStride(1) != 0 && loop.dim(q) >= 8)
    for (int d = q - 1; d >= 0; --d)
      if (loop.stride(1, d) == 1 && loop.dim(d) >= 8 &&
          (loop.dim(d) + kTile - 1) / kTile <= 65535) {
        p = d;
        break;
      }
  visitWord(elemSize, [&](auto word) {
    using W = decltype(word);
    W *d = static_cast<W *>(dst);
    const W *c = static_cast<const W *>(src);
    if (p < 0) {
      copyKernel<W><<<gridFor(n), 256, 0, s->compute>>>(stridedFrom(loop), n,
                                                        d, c);
      return;
    }
    TileOuter outer;
    int64_t outerCount = 1;
    for (int k = 0; k < q; ++k) {
      if (k == p)
        continue;
      outer.dims[outer.rank] = loop.dim(k);
      outer.dstStrides[outer.rank] = loop.stride(0, k);
      outer.srcStrides[outer.rank] = loop.stride(1, k);
      ++outer.rank;
      outerCount *= loop.dim(k);
    }
    const int64_t rows = loop.dim(p), cols = loop.dim(q);
    dim3 grid(unsigned((cols + kTile - 1) / kTile),
              unsigned((rows + kTile - 1) / kTile),
              unsigned(std::min<int64_t>(outerCount, 65535)));
    tiledCopyKernel<W><<<grid, dim3(kTile, kTileRows), 0, s->compute>>>(
        outer, outerCount, rows, cols, loop.stride(0, p), loop.stride(1, q), d,
        c);
  });
  return launched(s, op);
}

//===----------------------------------------------------------------------===//
// Gather, scatter, trilu
//===----------------------------------------------------------------------===//

/// out[o, j, :] = data[o, indices[j], :] in words of W (`inner` words a row).
template <typename W>
__global__ void gatherKernel(const W *data, W *out, int64_t outer,
                             int64_t count, int64_t size, int64_t inner,
                             const void *indices, bool i64, int64_t axis,
                             DeviceErrorRecord *err) {
  const int64_t n = outer * count * inner;
  PARC_GRID_STRIDE(e, n) {
    const int64_t i = e % inner, t = e / inner;
    const int64_t j = t % count, o = t / count;
    const int64_t idx =
        loadIndex(indices, i64, j, size, axis, FaultOp::Gather, err);
    out[e] = idx < 0 ? W{} : data[(o * size + idx) * inner + i];
  }
}

struct ScatterShape {
  int rank, axis;
  int64_t indexDims[PARC_RT_MAX_RANK];
  int64_t indexStrides[PARC_RT_MAX_RANK], dataStrides[PARC_RT_MAX_RANK];
  int64_t axisSize; // data dims[axis]
};

template <parc_rt_dtype_t D>
__device__ typename Dev<D>::Storage
scatterCombine(int reduction, typename Dev<D>::Storage a,
               typename Dev<D>::Storage b) {
  using C = typename Dev<D>::Compute;
  if constexpr (Dev<D>::kind == Kind::Bool) {
    return b; // only NONE reaches here for bool
  } else {
    const C x = Dev<D>::load(a), y = Dev<D>::load(b);
    switch (reduction) {
    case PARC_RT_SCATTER_ADD:
      return Dev<D>::store(C(x + y));
    case PARC_RT_SCATTER_MUL:
      return Dev<D>::store(C(x * y));
    case PARC_RT_SCATTER_MAX:
      return Dev<D>::store(x > y ? x : y);
    case PARC_RT_SCATTER_MIN:
      return Dev<D>::store(x < y ? x : y);
    default:
      return b;
    }
  }
}

/// One thread per line along the axis; updates in increasing index order.
template <parc_rt_dtype_t D>
__global__ void scatterKernel(ScatterShape sh, int64_t lines,
                              const void *indices, bool i64,
                              const typename Dev<D>::Storage *updates,
                              typename Dev<D>::Storage *out, int reduction,
                              DeviceErrorRecord *err) {
  PARC_GRID_STRIDE(line, lines) {
    int64_t rest = line, position = 0, target = 0;
    for (int d = sh.rank - 1; d >= 0; --d) {
      if (d == sh.axis)
        continue;
      const int64_t c = rest % sh.indexDims[d];
      rest /= sh.indexDims[d];
      position += c * sh.indexStrides[d];
      target += c * sh.dataStrides[d];
    }
    for (int64_t j = 0; j < sh.indexDims[sh.axis]; ++j) {
      const int64_t p = position + j * sh.indexStrides[sh.axis];
      const int64_t idx = loadIndex(indices, i64, p, sh.axisSize, sh.axis,
                                    FaultOp::ScatterElements, err);
      if (idx < 0)
        continue;
      auto &t = out[target + idx * sh.dataStrides[sh.axis]];
      t = scatterCombine<D>(reduction, t, updates[p]);
    }
  }
}

template <typename W>
__global__ void triluKernel(const W *x, W *y, int64_t n, int64_t rows,
                            int64_t cols, int64_t k, bool upper) {
  PARC_GRID_STRIDE(e, n) {
    const int64_t j = e % cols, i = (e / cols) % rows;
    const bool keep = upper ? j - i >= k : j - i <= k;
    y[e] = keep ? x[e] : W{};
  }
}

} // namespace

parc_rt_status_t
parc::rt::runCopyPlans(const char *op, parc_rt_dtype_t dtype,
                       const std::vector<StridedCopyPlan> &plans) {
  if (plans.empty())
    return PARC_RT_OK;
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(op, &s));
  for (const StridedCopyPlan &p : plans)
    PARC_RT_RETURN_IF_ERROR(stridedCopy(s, op, parc_rt_dtype_size(dtype), p.rank,
                                        p.dims, p.dst, p.dstStrides, p.src,
                                        p.srcStrides));
  return PARC_RT_OK;
}

parc_rt_status_t parc::rt::runGather(parc_rt_dtype_t dtype, const GatherPlan &p,
                                     const void *data, int64_t axis,
                                     parc_rt_dtype_t index_dtype,
                                     const void *indices, void *out) {
  const char *op = "gather";
  const int64_t outer = p.outer, size = p.size, inner = p.inner,
                count = p.count;
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(op, &s));
  // Rows are raw bytes: move them in the widest word that divides the row
  // and both base addresses.
  const size_t rowBytes = size_t(inner) * parc_rt_dtype_size(dtype);
  const uintptr_t bases = reinterpret_cast<uintptr_t>(data) |
                          reinterpret_cast<uintptr_t>(out);
  size_t word = 16;
  while (word > parc_rt_dtype_size(dtype) && (rowBytes % word || bases % word))
    word /= 2;
  const int64_t words = int64_t(rowBytes / word);
  const int64_t n = outer * count * words;
  const bool i64 = index_dtype == PARC_RT_I64;
  auto launch = [&](auto w) {
    using W = decltype(w);
    gatherKernel<W><<<gridFor(n), 256, 0, s->compute>>>(
        static_cast<const W *>(data), static_cast<W *>(out), outer, count,
        size, words, indices, i64, axis, s->error);
  };
  if (word == 16)
    launch(uint4{});
  else
    visitWord(word, launch);
  return launched(s, op);
}

parc_rt_status_t parc::rt::runScatterElements(
    parc_rt_dtype_t dtype, const ScatterPlan &p, const void *data,
    int64_t rank, const int64_t *dims, int64_t axis,
    parc_rt_dtype_t index_dtype, const void *indices,
    const int64_t *index_dims, const void *updates,
    parc_rt_scatter_reduction_t reduction, void *out) {
  const char *op = "scatter_elements";
  const int64_t a = p.axis, dataCount = p.dataCount, count = p.count;
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(op, &s));
  if (out != data && dataCount > 0)
    PARC_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(out, data, size_t(dataCount) * parc_rt_dtype_size(dtype),
                        cudaMemcpyDeviceToDevice, s->compute),
        op, "cudaMemcpyAsync");
  if (count == 0)
    return PARC_RT_OK;
  ScatterShape sh;
  sh.rank = int(rank);
  sh.axis = int(a);
  sh.axisSize = dims[a];
  std::copy(index_dims, index_dims + rank, sh.indexDims);
  contiguousStrides(rank, index_dims, sh.indexStrides);
  contiguousStrides(rank, dims, sh.dataStrides);
  const int64_t lines = count / index_dims[a];
  const bool i64 = index_dtype == PARC_RT_I64;
  visitDtype(
      dtype,
      [&](auto tag) {
        constexpr parc_rt_dtype_t D = decltype(tag)::value;
        using S = typename Dev<D>::Storage;
        scatterKernel<D><<<gridFor(lines, 128), 128, 0, s->compute>>>(
            sh, lines, indices, i64, static_cast<const S *>(updates),
            static_cast<S *>(out), int(reduction), s->error);
      },
      [] {});
  return launched(s, op);
}

parc_rt_status_t parc::rt::runTrilu(parc_rt_dtype_t dtype, const TriluPlan &p,
                                    const void *x, int64_t k, bool upper,
                                    void *y) {
  const char *op = "trilu";
  const int64_t rows = p.rows, cols = p.cols, count = p.count();
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(op, &s));
  visitWord(parc_rt_dtype_size(dtype), [&](auto word) {
    using W = decltype(word);
    triluKernel<W><<<gridFor(count), 256, 0, s->compute>>>(
        static_cast<const W *>(x), static_cast<W *>(y), count, rows, cols, k,
        upper != 0);
  });
  return launched(s, op);
}
