//===- backend.h - The kernels each backend implements ----------*- C++ -*-===//
//
// The ABI's tensor entry points (parc/runtime.h) are defined once, in the
// device-independent sources: linalg_ops.cpp, moe_ops.cpp, row_ops.cpp,
// copy_ops.cpp and elementwise_ops.cpp check each call, plan it, tag it for
// the profile and skip it when it has no elements; then they hand the plan
// to the backend function declared here. src/cpu and src/cuda each define
// every function below, so the two accept and reject the same calls with
// the same words and differ only in how they compute (loops and BLAS, or
// CUDA kernels and cuBLAS). What a backend supports beyond the plan (a
// dtype, mostly) it still reports itself. The other backend seams are
// device.h (memory, copies, synchronisation) and comm_backend.h.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_BACKEND_H
#define PARC_RUNTIME_BACKEND_H

#include "broadcast_plan.h"
#include "linalg_shapes.h"
#include "moe_plan.h"
#include "movement_plans.h"
#include "row_plans.h"

#include <vector>

namespace parc::rt {

//===----------------------------------------------------------------------===//
// linalg (linalg_ops.cpp)
//===----------------------------------------------------------------------===//

/// out = a @ b over a non-empty plan.
parc_rt_status_t runMatmul(parc_rt_dtype_t dtype, const MatmulPlan &p,
                           const void *a, const void *b, void *out);

/// parc_rt_gemm's arguments, checked, with m, n > 0 and a float dtype.
struct GemmCall {
  parc_rt_dtype_t dtype;
  const void *a, *b, *c;
  int64_t cRank;
  const int64_t *cDims;
  void *y;
  int64_t m, n, k;
  bool transA, transB;
  float alpha, beta;
};
parc_rt_status_t runGemm(const GemmCall &g);

/// y = conv(x, w) + bias over a non-empty plan.
parc_rt_status_t runConv(parc_rt_dtype_t dtype, const ConvPlan &p,
                         const void *x, const void *w, const void *bias,
                         int64_t group, void *y);

/// y = max over each window of x (a non-empty plan, not bool).
parc_rt_status_t runMaxPool(parc_rt_dtype_t dtype, const PoolPlan &p,
                            const void *x, void *y);

//===----------------------------------------------------------------------===//
// MoE (moe_ops.cpp, moe_ep.cpp)
//===----------------------------------------------------------------------===//

/// parc_rt_moe's arguments, checked (a float dtype; buffers given when
/// tokens > 0).
struct MoeCall {
  parc_rt_dtype_t dtype;
  const void *x, *logits, *fc1, *fc2, *fc3;
  void *y;
  int64_t tokens, hidden, ffn, experts, topK;
  bool normalize;
  parc_rt_moe_activation_t activation;
  int64_t capacity;
  const char *layer;
};
parc_rt_status_t runMoe(const MoeCall &c);

/// Routing: ids and weights of tokens x topK pairs, counts per expert
/// (zeroed, also when tokens is 0).
parc_rt_status_t runMoeRoute(parc_rt_dtype_t dtype, const void *logits,
                             int64_t *ids, float *weights, int64_t *counts,
                             int64_t tokens, int64_t experts, int64_t topK,
                             bool normalize);

/// The local experts' MLPs over received f32 rows, run by run.
parc_rt_status_t runMoeExperts(parc_rt_dtype_t dtype,
                               const std::vector<MoeRun> &runs,
                               const void *rows, const void *fc1,
                               const void *fc2, const void *fc3, void *out,
                               int64_t localExperts, int64_t hidden,
                               int64_t ffn,
                               parc_rt_moe_activation_t activation);

/// y[t] = the weighted sum of token t's kept rows, in row order (tokens >
/// 0).
parc_rt_status_t runMoeCombine(parc_rt_dtype_t dtype, const float *results,
                               const int64_t *pairRows, const float *weights,
                               void *y, int64_t tokens, int64_t hidden,
                               int64_t topK);

/// rows[pair_rows[p]] = x[p / top_k] widened to f32, for every pair p with
/// pair_rows[p] >= 0 (pair_rows in kernel memory).
parc_rt_status_t moeScatterRows(parc_rt_dtype_t dtype, const void *x,
                                const int64_t *pairRows, float *rows,
                                int64_t tokens, int64_t topK, int64_t hidden);

//===----------------------------------------------------------------------===//
// Rows: softmax, norms, reductions, topk, rotary (row_ops.cpp)
//===----------------------------------------------------------------------===//

parc_rt_status_t runSoftmax(const char *op, bool log, parc_rt_dtype_t dtype,
                            const AxisView &v, const void *x, void *y);
parc_rt_status_t runNorm(const char *op, bool rms, parc_rt_dtype_t dtype,
                         const NormPlan &p, const void *x, const void *scale,
                         const void *bias, void *y, float epsilon);
parc_rt_status_t runReduce(parc_rt_reduction_t reduction,
                           parc_rt_dtype_t dtype, const ReducePlan &p,
                           const void *x, int64_t rank, const int64_t *dims,
                           void *y);
parc_rt_status_t runTopk(parc_rt_dtype_t dtype, const TopkPlan &p,
                         const void *x, bool largest, void *values,
                         int64_t *indices);
parc_rt_status_t runRotary(parc_rt_dtype_t dtype, const RotaryPlan &p,
                           const void *x, const void *cos, const void *sin,
                           void *y);

//===----------------------------------------------------------------------===//
// Movement (copy_ops.cpp)
//===----------------------------------------------------------------------===//

/// The strided copy: runs `plans` in order (`op` names the failures);
/// transpose, slice, concat, split and expand are built on it.
parc_rt_status_t runCopyPlans(const char *op, parc_rt_dtype_t dtype,
                              const std::vector<StridedCopyPlan> &plans);

/// A gather over a non-empty plan; indices are checked as they are read.
parc_rt_status_t runGather(parc_rt_dtype_t dtype, const GatherPlan &p,
                           const void *data, int64_t axis,
                           parc_rt_dtype_t indexDtype, const void *indices,
                           void *out);

/// out = data, then updates at their indexed positions.
parc_rt_status_t runScatterElements(parc_rt_dtype_t dtype,
                                    const ScatterPlan &p, const void *data,
                                    int64_t rank, const int64_t *dims,
                                    int64_t axis, parc_rt_dtype_t indexDtype,
                                    const void *indices,
                                    const int64_t *indexDims,
                                    const void *updates,
                                    parc_rt_scatter_reduction_t reduction,
                                    void *out);

/// y = the upper (or lower) triangle of x from diagonal k, the rest 0.
parc_rt_status_t runTrilu(parc_rt_dtype_t dtype, const TriluPlan &p,
                          const void *x, int64_t k, bool upper, void *y);

//===----------------------------------------------------------------------===//
// Elementwise (elementwise_ops.cpp)
//===----------------------------------------------------------------------===//

/// Over count > 0 elements (binary and where: `loop` walks out and the
/// broadcast operands; count is out's elements).
parc_rt_status_t runUnary(parc_rt_unary_op_t op, parc_rt_dtype_t dtype,
                          const void *x, void *y, int64_t count);
parc_rt_status_t runBinary(parc_rt_binary_op_t op, parc_rt_dtype_t dtype,
                           const LoopNest<3> &loop, int64_t count,
                           const void *a, const void *b, int64_t bCount,
                           void *out);
parc_rt_status_t runWhere(parc_rt_dtype_t dtype, const LoopNest<4> &loop,
                          int64_t count, const void *cond, const void *x,
                          const void *y, void *out);
/// from != to.
parc_rt_status_t runCast(parc_rt_dtype_t from, const void *x,
                         parc_rt_dtype_t to, void *y, int64_t count);
parc_rt_status_t runFill(parc_rt_dtype_t dtype, void *dst, int64_t count,
                         const void *value);

} // namespace parc::rt

#endif // PARC_RUNTIME_BACKEND_H
