/*===- program.h - what generated rank programs are built from ---*- C -*-===*
 *
 * A generated program is a forward function plus static tables describing
 * its tensors; parc_rt_program_main does everything else (MPI start-up,
 * weights, arena, inputs, timing, outputs), so generated code stays a list
 * of checked kernel calls (rolled layers: one loop over a table).
 *
 *===----------------------------------------------------------------------===*/
#ifndef PARC_PROGRAM_H
#define PARC_PROGRAM_H

#include "parc/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct parc_rt_tensor_desc_t {
  const char *name;
  parc_rt_dtype_t dtype;
  int64_t rank;
  const int64_t *dims;
} parc_rt_tensor_desc_t;

/* Runs one forward pass. Input, weight and output slots follow the
 * program's tables; the function stores each output's address in its slot. */
typedef void (*parc_rt_forward_fn_t)(parc_rt_context_t *ctx, void *arena,
                                     void **inputs, void **weights,
                                     void **outputs);

typedef struct parc_rt_program_t {
  const char *name;
  int64_t arena_size;
  int64_t num_inputs;
  const parc_rt_tensor_desc_t *inputs;
  int64_t num_weights;
  const parc_rt_tensor_desc_t *weights;
  int64_t num_outputs;
  const parc_rt_tensor_desc_t *outputs;
  parc_rt_forward_fn_t forward;
  /* The device mesh, row-major over the world (0 axes: no mesh). The world
   * must have product(mesh_shape) ranks; it is split into one communicator
   * per group of axes at start-up (parc_rt_mesh_comm). */
  int64_t mesh_rank;
  const int64_t *mesh_shape;
  /* Pipeline stages and micro-batches per forward (1 and 1 without
   * pipeline parallelism): with several stages the run reports its
   * bubble. */
  int64_t pipeline_stages;
  int64_t micro_batches;
  /* Virtual stages per stage (interleaved schedule; 0 reads as 1). */
  int64_t virtual_stages;
  /* Generation (nn-kv-cache; null and 0 otherwise): each input's role in
   * the token loop (parc_rt_input_role_t) and the cache's capacity. */
  const int64_t *input_roles;
  int64_t max_seq;
  /* The prefill program (parc compile --prefill-len; null without): the
   * first tokens of a prompt in one forward, [batch, prefill length]. It
   * reads this program's weight slots (the one weight table, which holds
   * both programs' weights), its cache buffers (inputs of the same names)
   * and runs in the same arena, sized for the larger of the two. */
  const struct parc_rt_program_t *prefill;
} parc_rt_program_t;

/* What the token loop feeds an input: the cache buffers persist across
 * steps; the others are written before each step. */
typedef enum parc_rt_input_role_t {
  PARC_RT_ROLE_DATA = 0,      /* no role: the loop cannot run this program */
  PARC_RT_ROLE_CACHE = 1,     /* a layer's key or value cache */
  PARC_RT_ROLE_POSITION = 2,  /* i64[1]: where this step's tokens go */
  PARC_RT_ROLE_TOKENS = 3,    /* i64[batch, n]: this step's token ids */
  PARC_RT_ROLE_POSITIONS = 4, /* i64[batch, n]: their positions */
  /* i64[batch, max_seq]: 1 for the cache entries written so far, this
   * step's included, 0 for the rest (Hugging Face's attention_mask) */
  PARC_RT_ROLE_ATTENTION_MASK = 5,
} parc_rt_input_role_t;

/* The program's main: parses
 *   --weights-dir=DIR   (reads DIR/rank<world rank>.safetensors)
 *   --input=NAME=PATH   (.npy, one per program input)
 *   --output-dir=DIR    (rank --output-rank writes one .npy per output;
 *                        R must be the manifest's output_rank, the one
 *                        rank that dist-comm gathers the outputs to)
 *   --output-file=NAME=FILE  (the file of output NAME in DIR, as the
 *                        manifest records it; default: the same escaping
 *                        of NAME, see src/io/formats.h)
 *   --repeat=N --warmup=W --output-rank=R
 *   --verify-weights    (check the shard's data against its checksum; its
 *                        rank and program are always checked)
 *   --data-parallel=N   (N replicas of the mesh on consecutive ranks: each
 *                        reads the weights of its rank in replica 0 and its
 *                        slice of dim 0 of every input; the outputs are
 *                        gathered into the whole batch)
 * and returns the process exit code. Any failure aborts every rank. */
int parc_rt_program_main(int argc, char **argv, const parc_rt_program_t *program);

/* Aborts every rank if `status` is an error, naming the ONNX node. */
void parc_rt_check(parc_rt_context_t *ctx, parc_rt_status_t status,
                   const char *node);
/* The same after a communication call (`what`: "all_reduce", "send_start",
 * "wait" ...): the run's trace puts it on the rank's communication track. */
void parc_rt_check_comm(parc_rt_context_t *ctx, parc_rt_status_t status,
                        const char *node, const char *what);

/* The communicator of this rank's group on the mesh axes in `axes_mask`
 * (bit j: axis j): the ranks that share every other coordinate, ordered by
 * their coordinates on those axes. 0 or every axis: the world (with
 * --data-parallel, this rank's replica). */
parc_rt_comm_t *parc_rt_mesh_comm(parc_rt_context_t *ctx, int64_t axes_mask);

/* Kernels only generated code needs (see attention.cpp). */
parc_rt_status_t parc_rt_attention_scores(
    parc_rt_dtype_t dtype, const void *q, int64_t q_rank, const int64_t *q_dims,
    const void *k, int64_t k_rank, const int64_t *k_dims, void *out,
    int64_t out_rank, const int64_t *out_dims, float scale);
parc_rt_status_t parc_rt_attention_values(
    parc_rt_dtype_t dtype, const void *p, int64_t p_rank, const int64_t *p_dims,
    const void *v, int64_t v_rank, const int64_t *v_dims, void *out,
    int64_t out_rank, const int64_t *out_dims);
/* softmax(scale q kᵀ + mask, causal) v without the [B, H, S, T] scores:
 * q [B, H, S, D], k [B, Hkv, T, D], v [B, Hkv, T, Dv] -> out [B, H, S, Dv],
 * query head h reading key/value head h / (H / Hkv). `mask` (null: none)
 * is added to the scaled scores, broadcast numpy-style to [B, H, S, T];
 * with `causal`, query i sees only keys j <= i + causal_offset. A row
 * that sees no key is NaN, as softmax over -inf is. f32, bf16 and f16
 * (accumulated in f32); the mask has the dtype of q. */
parc_rt_status_t parc_rt_attention_fused(
    parc_rt_dtype_t dtype, const void *q, int64_t q_rank, const int64_t *q_dims,
    const void *k, int64_t k_rank, const int64_t *k_dims, const void *v,
    int64_t v_rank, const int64_t *v_dims, const void *mask, int64_t mask_rank,
    const int64_t *mask_dims, void *out, int64_t out_rank,
    const int64_t *out_dims, float scale, int32_t causal,
    int64_t causal_offset);
parc_rt_status_t parc_rt_rotary_full(
    parc_rt_dtype_t dtype, const void *x, int64_t x_rank, const int64_t *x_dims,
    const void *cos, int64_t cos_rank, const int64_t *cos_dims, const void *sin,
    int64_t sin_rank, const int64_t *sin_dims, void *y, int64_t y_rank,
    const int64_t *y_dims);

/* Writes `update` (update_dims) into `cache` (dims) at entries
 * [*position, *position + update_dims[axis]) along `axis`, in place: the
 * KV cache of generation (nn.kv_cache_write). */
parc_rt_status_t parc_rt_kv_cache_write(parc_rt_dtype_t dtype, void *cache,
                                        int64_t rank, const int64_t *dims,
                                        const void *update,
                                        const int64_t *update_dims,
                                        const void *position, int64_t axis);

static inline void *parc_rt_at(void *base, int64_t offset) {
  return (char *)base + offset;
}
static inline void *parc_rt_slot(void **slots, int64_t i) { return slots[i]; }
/* The string at `offset` of a program's string table: rolled layers
 * (rt.repeat) read each iteration's node names from a table of offsets. */
static inline const char *parc_rt_string(const int8_t *strings,
                                         int64_t offset) {
  return (const char *)strings + offset;
}
static inline void parc_rt_publish(void **slots, int64_t i, void *buffer) {
  slots[i] = buffer;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PARC_PROGRAM_H */
