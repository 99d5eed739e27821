/*===- parc/runtime.h - The parc runtime C ABI ------------------------------===
 *
 * The only interface generated per-rank programs call. Backends (cpu: MPI +
 * OpenBLAS; cuda: NCCL + cuBLAS) implement this same ABI, chosen when the
 * generated program is built. Modelled on IREE's HAL: prefixed C names, every
 * fallible call returns a parc_rt_status_t, results come back through `out_`
 * parameters, objects are opaque and released explicitly.
 *
 * Conventions shared by every function:
 *  - A failing call returns a non-OK status and sets a thread-local message
 *    (parc_rt_last_error) naming the operation, files, tensors and shapes.
 *    Successful calls leave the message alone.
 *  - Shapes are `int64_t rank, const int64_t *dims` pairs (row-major,
 *    contiguous, rank <= PARC_RT_MAX_RANK; rank 0 is a scalar). Element
 *    counts are int64_t, byte sizes are size_t.
 *  - Output buffers must not overlap inputs unless a function says otherwise.
 *  - f16/bf16 kernels compute in f32 and round once on output.
 *  - Kernels use up to parc_rt_num_threads() threads (env PARC_RT_THREADS,
 *    default 1 so that many ranks on few cores do not oversubscribe).
 *
 *===------------------------------------------------------------------------===*/
#ifndef PARC_RUNTIME_H
#define PARC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===
 * Status
 *===----------------------------------------------------------------------===*/

typedef enum parc_rt_status_t {
  PARC_RT_OK = 0,
  PARC_RT_INVALID_ARGUMENT, /* bad shape, null pointer, index out of range */
  PARC_RT_IO_ERROR,         /* missing, unreadable, truncated or bad file */
  PARC_RT_OUT_OF_MEMORY,
  PARC_RT_COMM_ERROR,  /* MPI/NCCL reported an error */
  PARC_RT_TIMEOUT,     /* a collective did not complete in time */
  PARC_RT_UNSUPPORTED, /* valid request this backend does not implement */
  PARC_RT_INTERNAL,
} parc_rt_status_t;

/* Static name of a status, e.g. "PARC_RT_TIMEOUT". */
const char *parc_rt_status_string(parc_rt_status_t status);

/* Message of the last failing call on this thread ("" if none). The pointer
 * stays valid until the next failing call on this thread. */
const char *parc_rt_last_error(void);

/* Largest tensor rank any function accepts; size of `out_dims` arrays. */
#define PARC_RT_MAX_RANK 16

/*===----------------------------------------------------------------------===
 * Element types
 *===----------------------------------------------------------------------===*/

typedef enum parc_rt_dtype_t {
  PARC_RT_F32 = 0,
  PARC_RT_F16,
  PARC_RT_BF16,
  PARC_RT_F64,
  PARC_RT_I64,
  PARC_RT_I32,
  PARC_RT_I8,
  PARC_RT_U8,
  PARC_RT_BOOL, /* one byte, 0 or 1 */
  PARC_RT_DTYPE_COUNT,
} parc_rt_dtype_t;

/* Bytes per element; 0 for an invalid dtype. */
size_t parc_rt_dtype_size(parc_rt_dtype_t dtype);
/* Short name ("f32", "bf16", ...); "invalid" for an invalid dtype. */
const char *parc_rt_dtype_name(parc_rt_dtype_t dtype);

/*===----------------------------------------------------------------------===
 * Context, communicators, abort
 *===----------------------------------------------------------------------===*/

typedef struct parc_rt_context_t parc_rt_context_t;
typedef struct parc_rt_comm_t parc_rt_comm_t;
typedef struct parc_rt_request_t parc_rt_request_t;

/* Initialises MPI (MPI_Init_thread, FUNNELED: only the calling thread talks
 * to MPI) unless the host already did, and reads rank and size. The
 * collective timeout comes from env PARC_RT_TIMEOUT_S (seconds, default
 * 300). Must be called once per process before any communication. */
parc_rt_status_t parc_rt_init(int *argc, char ***argv,
                              parc_rt_context_t **out_ctx);

/* Waits (up to the timeout) for operations abandoned by a timed-out wait,
 * releases every communicator and finalises MPI if parc_rt_init started it.
 * Returns PARC_RT_TIMEOUT, without finalising MPI, if abandoned operations
 * are still pending: call parc_rt_abort then. */
parc_rt_status_t parc_rt_finalize(parc_rt_context_t *ctx);

int parc_rt_context_rank(const parc_rt_context_t *ctx);
int parc_rt_context_size(const parc_rt_context_t *ctx);
/* Overrides PARC_RT_TIMEOUT_S for this context (seconds, > 0). */
parc_rt_status_t parc_rt_context_set_timeout(parc_rt_context_t *ctx,
                                             double seconds);

/* Prints "parc: rank R: <message>" to stderr, where the message is
 * parc_rt_last_error() (or the status name if empty), then tears down every
 * rank with MPI_Abort. `ctx` may be NULL (before init). Never returns. */
void parc_rt_abort(parc_rt_context_t *ctx, parc_rt_status_t status)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* Aborts all ranks if `expr` fails; the common pattern in generated code. */
#define PARC_RT_CHECK(ctx, expr)                                               \
  do {                                                                         \
    parc_rt_status_t parc_rt_check_status_ = (expr);                           \
    if (parc_rt_check_status_ != PARC_RT_OK)                                   \
      parc_rt_abort((ctx), parc_rt_check_status_);                             \
  } while (0)

/* The communicator over all ranks; owned by the context. */
parc_rt_comm_t *parc_rt_context_world(parc_rt_context_t *ctx);

/* Collective over all ranks (MPI_Comm_split): ranks passing the same `color`
 * form one communicator, ordered by `key` then world rank. A negative color
 * yields *out_comm = NULL (this rank joins no group). The communicator is
 * owned by the context; it may be released earlier. */
parc_rt_status_t parc_rt_comm_split(parc_rt_context_t *ctx, int color, int key,
                                    parc_rt_comm_t **out_comm);
int parc_rt_comm_rank(const parc_rt_comm_t *comm);
int parc_rt_comm_size(const parc_rt_comm_t *comm);
/* Releases a communicator from parc_rt_comm_split (not the world). */
parc_rt_status_t parc_rt_comm_release(parc_rt_comm_t *comm);

/*===----------------------------------------------------------------------===
 * Collectives
 *
 * Counts are in elements of `dtype`. Every blocking call has a `_start` form
 * returning a request; buffers must stay untouched until parc_rt_wait returns.
 * A wait polls for at most the context timeout (measured from the wait, not
 * the start, so overlapped compute does not count) and then returns
 * PARC_RT_TIMEOUT naming the operation. A timed-out operation cannot be
 * cancelled: its buffers must stay alive until parc_rt_finalize or
 * parc_rt_abort. `send == recv` means in place where noted.
 *===----------------------------------------------------------------------===*/

typedef enum parc_rt_reduce_op_t {
  PARC_RT_REDUCE_SUM = 0,
  PARC_RT_REDUCE_MAX,
  PARC_RT_REDUCE_MIN,
} parc_rt_reduce_op_t;

/* recv[i] = op over ranks of send[i]; send == recv for in place. */
parc_rt_status_t parc_rt_all_reduce(parc_rt_comm_t *comm, const void *send,
                                    void *recv, int64_t count,
                                    parc_rt_dtype_t dtype,
                                    parc_rt_reduce_op_t op);
parc_rt_status_t parc_rt_all_reduce_start(parc_rt_comm_t *comm,
                                          const void *send, void *recv,
                                          int64_t count, parc_rt_dtype_t dtype,
                                          parc_rt_reduce_op_t op,
                                          parc_rt_request_t **out_request);

/* recv = concat over ranks (in comm rank order) of send, along the leading
 * dimension: recv holds size * send_count elements. */
parc_rt_status_t parc_rt_all_gather(parc_rt_comm_t *comm, const void *send,
                                    void *recv, int64_t send_count,
                                    parc_rt_dtype_t dtype);
parc_rt_status_t parc_rt_all_gather_start(parc_rt_comm_t *comm,
                                          const void *send, void *recv,
                                          int64_t send_count,
                                          parc_rt_dtype_t dtype,
                                          parc_rt_request_t **out_request);

/* The all-gather along an inner dimension: send is `rows` rows of
 * `row_count` elements, and row o of recv is row o of every rank's send in
 * comm rank order, written in place with no transpose after. row_takes,
 * when not null, holds one count per rank (each in [0, row_count]): recv
 * keeps only the leading row_takes[q] elements of rank q's rows (a padded
 * part's padding dropped), so a recv row holds their sum, not
 * size * row_count. root -1: every rank receives; a comm rank: only it
 * does (the others' recv is left as it was), which moves size - 1 blocks,
 * not size * (size - 1). rows == 1 without row_takes, root -1, is
 * parc_rt_all_gather. */
parc_rt_status_t parc_rt_all_gather_rows(parc_rt_comm_t *comm,
                                         const void *send, void *recv,
                                         int64_t rows, int64_t row_count,
                                         const int64_t *row_takes, int root,
                                         parc_rt_dtype_t dtype);
parc_rt_status_t parc_rt_all_gather_rows_start(
    parc_rt_comm_t *comm, const void *send, void *recv, int64_t rows,
    int64_t row_count, const int64_t *row_takes, int root,
    parc_rt_dtype_t dtype, parc_rt_request_t **out_request);

/* send holds size * recv_count elements; rank r receives block r of the
 * element-wise reduction (op: SUM, MAX or MIN). */
parc_rt_status_t parc_rt_reduce_scatter(parc_rt_comm_t *comm, const void *send,
                                        void *recv, int64_t recv_count,
                                        parc_rt_dtype_t dtype,
                                        parc_rt_reduce_op_t op);
parc_rt_status_t parc_rt_reduce_scatter_start(parc_rt_comm_t *comm,
                                              const void *send, void *recv,
                                              int64_t recv_count,
                                              parc_rt_dtype_t dtype,
                                              parc_rt_reduce_op_t op,
                                              parc_rt_request_t **out_request);

/* recv = block r (count elements) of send, r = this rank's index in comm:
 * the rank's slice of a tensor every rank holds whole. No communication
 * (sequence parallelism scatters a replicated activation this way). */
parc_rt_status_t parc_rt_local_chunk(parc_rt_comm_t *comm, const void *send,
                                     void *recv, int64_t count,
                                     parc_rt_dtype_t dtype);

/* Block j of send (count elements) goes to rank j; block i of recv comes
 * from rank i. */
parc_rt_status_t parc_rt_all_to_all(parc_rt_comm_t *comm, const void *send,
                                    void *recv, int64_t count,
                                    parc_rt_dtype_t dtype);
parc_rt_status_t parc_rt_all_to_all_start(parc_rt_comm_t *comm,
                                          const void *send, void *recv,
                                          int64_t count, parc_rt_dtype_t dtype,
                                          parc_rt_request_t **out_request);

/* Like all_to_all with per-rank counts and displacements (elements), each
 * an array of comm size entries. The arrays are copied: they may be freed
 * once the call returns. */
parc_rt_status_t parc_rt_all_to_all_v(parc_rt_comm_t *comm, const void *send,
                                      const int64_t *send_counts,
                                      const int64_t *send_displs, void *recv,
                                      const int64_t *recv_counts,
                                      const int64_t *recv_displs,
                                      parc_rt_dtype_t dtype);
parc_rt_status_t parc_rt_all_to_all_v_start(
    parc_rt_comm_t *comm, const void *send, const int64_t *send_counts,
    const int64_t *send_displs, void *recv, const int64_t *recv_counts,
    const int64_t *recv_displs, parc_rt_dtype_t dtype,
    parc_rt_request_t **out_request);

/* Point to point; `peer` is a rank of `comm`, tag >= 0. A recv fails with
 * PARC_RT_COMM_ERROR if the message does not hold exactly `count` elements. */
parc_rt_status_t parc_rt_send(parc_rt_comm_t *comm, const void *buf,
                              int64_t count, parc_rt_dtype_t dtype, int peer,
                              int tag);
parc_rt_status_t parc_rt_send_start(parc_rt_comm_t *comm, const void *buf,
                                    int64_t count, parc_rt_dtype_t dtype,
                                    int peer, int tag,
                                    parc_rt_request_t **out_request);
parc_rt_status_t parc_rt_recv(parc_rt_comm_t *comm, void *buf, int64_t count,
                              parc_rt_dtype_t dtype, int peer, int tag);
parc_rt_status_t parc_rt_recv_start(parc_rt_comm_t *comm, void *buf,
                                    int64_t count, parc_rt_dtype_t dtype,
                                    int peer, int tag,
                                    parc_rt_request_t **out_request);

parc_rt_status_t parc_rt_barrier(parc_rt_comm_t *comm);
parc_rt_status_t parc_rt_barrier_start(parc_rt_comm_t *comm,
                                       parc_rt_request_t **out_request);

/* In place: root's buf is copied to every rank's buf. */
parc_rt_status_t parc_rt_broadcast(parc_rt_comm_t *comm, void *buf,
                                   int64_t count, parc_rt_dtype_t dtype,
                                   int root);
parc_rt_status_t parc_rt_broadcast_start(parc_rt_comm_t *comm, void *buf,
                                         int64_t count, parc_rt_dtype_t dtype,
                                         int root,
                                         parc_rt_request_t **out_request);

/* Completes and releases a request (also on failure, except that a timed-out
 * operation is kept by the context until finalize). */
parc_rt_status_t parc_rt_wait(parc_rt_request_t *request);
/* Waits for every request in order; returns the first failure after
 * releasing them all. NULL entries are skipped. */
parc_rt_status_t parc_rt_wait_all(int64_t count,
                                  parc_rt_request_t *const *requests);
/* Non-blocking check; *out_done = 1 when parc_rt_wait would not block.
 * out_done may be NULL: generated programs call this between kernels only
 * to progress communication that MPI advances inside its calls. */
parc_rt_status_t parc_rt_test(parc_rt_request_t *request, int *out_done);
/* Cumulative seconds of this context's completed communication: *total the
 * wall time with at least one request in flight, from its start to its
 * completion as observed by a poll (overlapping requests count once), and
 * *exposed of that spent in start calls or blocked in a wait; total -
 * exposed was hidden behind compute.
 * The cuda backend returns PARC_RT_UNSUPPORTED. */
parc_rt_status_t parc_rt_comm_time(const parc_rt_context_t *ctx,
                                   double *out_total_s, double *out_exposed_s);

/*===----------------------------------------------------------------------===
 * Memory
 *===----------------------------------------------------------------------===*/

typedef struct parc_rt_arena_t parc_rt_arena_t;

/* One zero-initialised block holding every planned buffer of a program.
 * `alignment` is a power of two (64 in generated code). */
parc_rt_status_t parc_rt_arena_create(size_t bytes, size_t alignment,
                                      parc_rt_arena_t **out_arena);
void *parc_rt_arena_base(parc_rt_arena_t *arena);
size_t parc_rt_arena_size(const parc_rt_arena_t *arena);
void parc_rt_arena_release(parc_rt_arena_t *arena);

/* Frees memory the runtime allocated for the caller (parc_rt_npy_read). */
void parc_rt_free(void *ptr);

/* memcpy / fill of `count` elements with the one element at `value`. */
parc_rt_status_t parc_rt_copy(void *dst, const void *src, size_t bytes);
parc_rt_status_t parc_rt_fill(parc_rt_dtype_t dtype, void *dst, int64_t count,
                              const void *value);

/* Kernel threads (OpenMP and BLAS); n >= 1. */
parc_rt_status_t parc_rt_set_num_threads(int n);
int parc_rt_num_threads(void);

/*===----------------------------------------------------------------------===
 * Weights (.safetensors) and tensors in/out (.npy)
 *===----------------------------------------------------------------------===*/

typedef struct parc_rt_weights_t parc_rt_weights_t;

/* Maps a rank's .safetensors file read-only. Fails with PARC_RT_IO_ERROR for
 * a missing, truncated or malformed file. */
parc_rt_status_t parc_rt_weights_open(const char *path,
                                      parc_rt_weights_t **out_weights);
void parc_rt_weights_release(parc_rt_weights_t *weights);
int64_t parc_rt_weights_count(const parc_rt_weights_t *weights);
/* Name of tensor i (file order), NULL if out of range. */
const char *parc_rt_weights_name(const parc_rt_weights_t *weights, int64_t i);

/* Looks a tensor up by name; `out_dims` holds PARC_RT_MAX_RANK entries. The
 * data stays valid until the weights are released. A missing tensor is
 * PARC_RT_INVALID_ARGUMENT naming it and the file. */
parc_rt_status_t parc_rt_weights_get(const parc_rt_weights_t *weights,
                                     const char *name, const void **out_data,
                                     parc_rt_dtype_t *out_dtype,
                                     int64_t *out_rank, int64_t *out_dims);
/* parc_rt_weights_get plus a check of dtype and shape, so that a stale or
 * mismatched weight file fails with both types in the message. */
parc_rt_status_t parc_rt_weights_get_checked(const parc_rt_weights_t *weights,
                                             const char *name,
                                             parc_rt_dtype_t dtype,
                                             int64_t rank, const int64_t *dims,
                                             const void **out_data);

/* Writes `n` tensors to a .safetensors file atomically (temp file + rename).
 * Tensor i has dtypes[i], shape (ranks[i], dims[i]) and contiguous data[i]. */
parc_rt_status_t
parc_rt_safetensors_write(const char *path, int64_t n, const char *const *names,
                          const parc_rt_dtype_t *dtypes, const int64_t *ranks,
                          const int64_t *const *dims, const void *const *data);

/* .npy (format 1.0, 2.0 and 3.0; little-endian, C order). bf16 is stored
 * with descr '<V2', the form numpy writes for ml_dtypes.bfloat16. */
parc_rt_status_t parc_rt_npy_info(const char *path, parc_rt_dtype_t *out_dtype,
                                  int64_t *out_rank, int64_t *out_dims);
/* Reads into caller memory after checking dtype and shape. */
parc_rt_status_t parc_rt_npy_read_into(const char *path, parc_rt_dtype_t dtype,
                                       int64_t rank, const int64_t *dims,
                                       void *dst);
/* Reads into a 64-byte aligned buffer freed with parc_rt_free. */
parc_rt_status_t parc_rt_npy_read(const char *path, void **out_data,
                                  parc_rt_dtype_t *out_dtype, int64_t *out_rank,
                                  int64_t *out_dims);
/* Writes format 1.0 atomically (temp file + rename). */
parc_rt_status_t parc_rt_npy_write(const char *path, parc_rt_dtype_t dtype,
                                   int64_t rank, const int64_t *dims,
                                   const void *data);

/*===----------------------------------------------------------------------===
 * Elementwise kernels
 *===----------------------------------------------------------------------===*/

typedef enum parc_rt_unary_op_t {
  PARC_RT_UNARY_NEG = 0,
  PARC_RT_UNARY_ABS,
  PARC_RT_UNARY_EXP,
  PARC_RT_UNARY_LOG,
  PARC_RT_UNARY_SQRT,
  PARC_RT_UNARY_RECIPROCAL,
  PARC_RT_UNARY_TANH,
  PARC_RT_UNARY_ERF,
  PARC_RT_UNARY_SIGMOID,
  PARC_RT_UNARY_RELU,
  PARC_RT_UNARY_NOT, /* bool only */
  PARC_RT_UNARY_SILU,
  PARC_RT_UNARY_GELU,      /* exact: x/2 (1 + erf(x / sqrt 2)) */
  PARC_RT_UNARY_GELU_TANH, /* tanh approximation */
  PARC_RT_UNARY_FLOOR,
  PARC_RT_UNARY_CEIL,
  PARC_RT_UNARY_SIN,
  PARC_RT_UNARY_COS,
} parc_rt_unary_op_t;

/* y[i] = op(x[i]); x == y allowed. Float dtypes for all ops; NEG, ABS,
 * RELU also for signed integers; NOT for bool. */
parc_rt_status_t parc_rt_unary(parc_rt_unary_op_t op, parc_rt_dtype_t dtype,
                               const void *x, void *y, int64_t count);

typedef enum parc_rt_binary_op_t {
  PARC_RT_BINARY_ADD = 0,
  PARC_RT_BINARY_SUB,
  PARC_RT_BINARY_MUL,
  PARC_RT_BINARY_DIV, /* integer division truncates; by zero is an error */
  PARC_RT_BINARY_POW,
  PARC_RT_BINARY_MIN,
  PARC_RT_BINARY_MAX,
  PARC_RT_BINARY_EQUAL, /* comparisons write bool */
  PARC_RT_BINARY_LESS,
  PARC_RT_BINARY_LESS_EQUAL,
  PARC_RT_BINARY_GREATER,
  PARC_RT_BINARY_GREATER_EQUAL,
  PARC_RT_BINARY_AND, /* logical ops: bool only */
  PARC_RT_BINARY_OR,
  PARC_RT_BINARY_XOR,
} parc_rt_binary_op_t;

/* out = op(a, b) with numpy broadcasting; a and b have `dtype`, out has
 * `dtype` (bool for comparisons). The output shape must equal the broadcast
 * shape. out may alias a or b when that input has the output's shape. */
parc_rt_status_t parc_rt_binary(parc_rt_binary_op_t op, parc_rt_dtype_t dtype,
                                const void *a, int64_t a_rank,
                                const int64_t *a_dims, const void *b,
                                int64_t b_rank, const int64_t *b_dims,
                                void *out, int64_t out_rank,
                                const int64_t *out_dims);

/* out = cond ? x : y, all three broadcast to out; cond is bool. */
parc_rt_status_t parc_rt_where(parc_rt_dtype_t dtype, const void *cond,
                               int64_t cond_rank, const int64_t *cond_dims,
                               const void *x, int64_t x_rank,
                               const int64_t *x_dims, const void *y,
                               int64_t y_rank, const int64_t *y_dims, void *out,
                               int64_t out_rank, const int64_t *out_dims);

/* Converts count elements. Float to integer truncates toward zero (NaN -> 0,
 * out-of-range saturates); anything to bool is `!= 0`; f16/bf16 round to
 * nearest even. */
parc_rt_status_t parc_rt_cast(parc_rt_dtype_t from, const void *x,
                              parc_rt_dtype_t to, void *y, int64_t count);

/*===----------------------------------------------------------------------===
 * Linear algebra
 *===----------------------------------------------------------------------===*/

/* numpy matmul: a [..., M, K] x b [..., K, N] -> out [broadcast(...), M, N];
 * a rank-1 a (or b) is a row (column) vector whose unit dim is dropped from
 * the output. Float dtypes via BLAS; i32/i64 by a plain loop. */
parc_rt_status_t parc_rt_matmul(parc_rt_dtype_t dtype, const void *a,
                                int64_t a_rank, const int64_t *a_dims,
                                const void *b, int64_t b_rank,
                                const int64_t *b_dims, void *out,
                                int64_t out_rank, const int64_t *out_dims);

/* ONNX Gemm: y[M,N] = alpha * op(a) op(b) + beta * c, op = transpose if
 * trans_*; a is [M,K] ([K,M] if trans_a), b is [K,N] ([N,K] if trans_b);
 * c (may be NULL) broadcasts to [M,N]. */
parc_rt_status_t parc_rt_gemm(parc_rt_dtype_t dtype, const void *a,
                              const void *b, const void *c, int64_t c_rank,
                              const int64_t *c_dims, void *y, int64_t m,
                              int64_t n, int64_t k, int trans_a, int trans_b,
                              float alpha, float beta);

/*===----------------------------------------------------------------------===
 * Normalisation and reductions
 *===----------------------------------------------------------------------===*/

/* Softmax / log-softmax of x (rank, dims) over `axis` (negative counts from
 * the back). y may equal x. */
parc_rt_status_t parc_rt_softmax(parc_rt_dtype_t dtype, const void *x, void *y,
                                 int64_t rank, const int64_t *dims,
                                 int64_t axis);
parc_rt_status_t parc_rt_log_softmax(parc_rt_dtype_t dtype, const void *x,
                                     void *y, int64_t rank, const int64_t *dims,
                                     int64_t axis);

/* Normalises over dims[axis..rank): scale (and bias, may be NULL) hold
 * prod(dims[axis..]) elements. layer_norm: (x - mean) / sqrt(var + eps);
 * rms_norm: x / sqrt(mean(x^2) + eps). y may equal x. */
parc_rt_status_t parc_rt_layer_norm(parc_rt_dtype_t dtype, const void *x,
                                    const void *scale, const void *bias,
                                    void *y, int64_t rank, const int64_t *dims,
                                    int64_t axis, float epsilon);
parc_rt_status_t parc_rt_rms_norm(parc_rt_dtype_t dtype, const void *x,
                                  const void *scale, const void *bias, void *y,
                                  int64_t rank, const int64_t *dims,
                                  int64_t axis, float epsilon);

typedef enum parc_rt_reduction_t {
  PARC_RT_REDUCTION_SUM = 0,
  PARC_RT_REDUCTION_MEAN,
  PARC_RT_REDUCTION_MAX,
  PARC_RT_REDUCTION_MIN,
  PARC_RT_REDUCTION_PROD,
} parc_rt_reduction_t;

/* Reduces x over the listed axes (distinct, negative counts from the back).
 * y holds x's shape with the reduced dims set to 1 (keepdims and not are
 * the same contiguous buffer). Empty reductions give the identity. */
parc_rt_status_t parc_rt_reduce(parc_rt_reduction_t reduction,
                                parc_rt_dtype_t dtype, const void *x,
                                int64_t rank, const int64_t *dims,
                                int64_t num_axes, const int64_t *axes, void *y);

/* ONNX TopK along `axis`: values (dtype) and indices (i64) have dims with
 * dims[axis] = k; always sorted; ties keep the lower index first; NaN
 * compares greater than every number. */
parc_rt_status_t parc_rt_topk(parc_rt_dtype_t dtype, const void *x,
                              int64_t rank, const int64_t *dims, int64_t axis,
                              int64_t k, int largest, void *values,
                              void *indices /* i64 */);

/*===----------------------------------------------------------------------===
 * Data movement (dtype-agnostic unless noted)
 *===----------------------------------------------------------------------===*/

/* y[i_perm[0], ...] = x[i_0, ...]: y dims are dims[perm[d]]. */
parc_rt_status_t parc_rt_transpose(parc_rt_dtype_t dtype, const void *x,
                                   int64_t rank, const int64_t *dims,
                                   const int64_t *perm, void *y);

/* y[j...] = x[starts[d] + j_d * steps[d] ...] for y of out_dims; starts are
 * normalised (0 <= start < dims[d] when out_dims[d] > 0), steps nonzero
 * (negative walks backwards). */
parc_rt_status_t parc_rt_slice(parc_rt_dtype_t dtype, const void *x,
                               int64_t rank, const int64_t *dims,
                               const int64_t *starts, const int64_t *steps,
                               void *y, const int64_t *out_dims);

/* Concatenates n inputs along axis: input i has out_dims with
 * dims[axis] = axis_sizes[i]; sum(axis_sizes) == out_dims[axis]. */
parc_rt_status_t parc_rt_concat(parc_rt_dtype_t dtype, int64_t n,
                                const void *const *inputs,
                                const int64_t *axis_sizes, int64_t rank,
                                const int64_t *out_dims, int64_t axis,
                                void *out);
/* Inverse of concat: output i gets axis_sizes[i] slices of x. */
parc_rt_status_t parc_rt_split(parc_rt_dtype_t dtype, const void *x,
                               int64_t rank, const int64_t *dims, int64_t axis,
                               int64_t n, const int64_t *axis_sizes,
                               void *const *outputs);

/* ONNX Gather: out dims = dims[:axis] + indices dims + dims[axis+1:].
 * Indices are i32 or i64; negative ones count from the end; anything else
 * outside [-dims[axis], dims[axis]) is PARC_RT_INVALID_ARGUMENT. */
parc_rt_status_t parc_rt_gather(parc_rt_dtype_t dtype, const void *data,
                                int64_t rank, const int64_t *dims, int64_t axis,
                                parc_rt_dtype_t index_dtype,
                                const void *indices, int64_t index_rank,
                                const int64_t *index_dims, void *out);

typedef enum parc_rt_scatter_reduction_t {
  PARC_RT_SCATTER_NONE = 0,
  PARC_RT_SCATTER_ADD,
  PARC_RT_SCATTER_MUL,
  PARC_RT_SCATTER_MAX,
  PARC_RT_SCATTER_MIN,
} parc_rt_scatter_reduction_t;

/* ONNX ScatterElements: out = data, then for every position p of indices
 * (same rank as data; updates has indices' dims) out[p with p[axis] =
 * indices[p]] (op)= updates[p]. out may equal data. */
parc_rt_status_t
parc_rt_scatter_elements(parc_rt_dtype_t dtype, const void *data, int64_t rank,
                         const int64_t *dims, int64_t axis,
                         parc_rt_dtype_t index_dtype, const void *indices,
                         const int64_t *index_dims, const void *updates,
                         parc_rt_scatter_reduction_t reduction, void *out);

/* Broadcasting copy of x to out_dims (ONNX Expand with the output shape
 * already resolved). */
parc_rt_status_t parc_rt_expand(parc_rt_dtype_t dtype, const void *x,
                                int64_t rank, const int64_t *dims, void *y,
                                int64_t out_rank, const int64_t *out_dims);

/* ONNX Trilu over the last two dims: keeps j - i >= k (upper) or
 * j - i <= k (lower) and zeroes the rest. */
parc_rt_status_t parc_rt_trilu(parc_rt_dtype_t dtype, const void *x,
                               int64_t rank, const int64_t *dims, int64_t k,
                               int upper, void *y);

/*===----------------------------------------------------------------------===
 * Convolution, pooling, rotary embedding
 *===----------------------------------------------------------------------===*/

/* N-d convolution, NC(spatial...) layout, rank = 2 + spatial dims.
 * w is [C_out, C_in / group, kernel...]; bias (may be NULL) is [C_out].
 * strides, dilations hold rank-2 entries; pads 2*(rank-2): all begins, then
 * all ends (ONNX order). y_dims must match the ONNX output formula. */
parc_rt_status_t parc_rt_conv(parc_rt_dtype_t dtype, const void *x,
                              int64_t rank, const int64_t *x_dims,
                              const void *w, const int64_t *w_dims,
                              const void *bias, int64_t group,
                              const int64_t *strides, const int64_t *pads,
                              const int64_t *dilations, void *y,
                              const int64_t *y_dims);

/* N-d max pooling; padding never wins. y_dims may follow floor or ceil
 * mode; windows past the padded input are clipped. */
parc_rt_status_t parc_rt_max_pool(parc_rt_dtype_t dtype, const void *x,
                                  int64_t rank, const int64_t *x_dims,
                                  const int64_t *kernel, const int64_t *strides,
                                  const int64_t *pads, const int64_t *dilations,
                                  void *y, const int64_t *y_dims);

/* Rotary embedding, rotate-half (GPT-NeoX / Llama) form, on the first
 * rotary_dim (even, <= last dim D) features of x; the rest is copied.
 * cos and sin are [dims[seq_axis], rotary_dim / 2]: the row is the
 * position along seq_axis (offset the pointers for a KV-cache step).
 *   y[i]       = x[i] cos[i] - x[i + h] sin[i]
 *   y[i + h]   = x[i + h] cos[i] + x[i] sin[i]    (h = rotary_dim / 2)
 * y may equal x. cos/sin have x's dtype. */
parc_rt_status_t parc_rt_rotary(parc_rt_dtype_t dtype, const void *x,
                                int64_t rank, const int64_t *dims,
                                int64_t seq_axis, int64_t rotary_dim,
                                const void *cos, const void *sin, void *y);

/*===----------------------------------------------------------------------===
 * Mixture of experts
 *===----------------------------------------------------------------------===*/

typedef enum parc_rt_moe_activation_t {
  PARC_RT_MOE_SILU = 0,
  PARC_RT_MOE_GELU,
  PARC_RT_MOE_RELU,
  PARC_RT_MOE_IDENTITY,
} parc_rt_moe_activation_t;

/* Sparse MoE on `tokens` rows x [tokens, hidden] with router logits
 * [tokens, experts]: per token softmax, the top_k largest probabilities
 * (ties: lower expert first), renormalised to sum 1 if `normalize`; y is
 * the weighted sum of the chosen experts' outputs, computed for those
 * experts only. Expert e: act(x fc1[e]) [* (x fc3[e])] fc2[e], fc1 and fc3
 * (may be NULL: ungated) [experts, hidden, ffn], fc2 [experts, ffn, hidden].
 * capacity > 0 keeps at most that many (token, expert) pairs per expert, in
 * token order; the rest are dropped (they add nothing). `layer` names the
 * call in the routing report. f32, f16, bf16 (computed in f32). */
parc_rt_status_t parc_rt_moe(parc_rt_dtype_t dtype, const void *x,
                             const void *logits, const void *fc1,
                             const void *fc2, const void *fc3, void *y,
                             int64_t tokens, int64_t hidden, int64_t ffn,
                             int64_t experts, int64_t top_k, int normalize,
                             parc_rt_moe_activation_t activation,
                             int64_t capacity, const char *layer);

/* The steps of an expert-parallel MoE layer (the IR's nn.moe_route,
 * dist.moe_permute, dist.all_to_all_v, nn.moe_experts, nn.moe_combine).
 * Counts and ids are i64 buffers in kernel memory, rows travel as f32.
 *
 * route: logits [tokens, experts] -> expert_ids [tokens, top_k] (descending
 * probability, ties: lower expert), weights [tokens, top_k] f32
 * (renormalised if `normalize`), counts [experts]: tokens per expert. */
parc_rt_status_t parc_rt_moe_route(parc_rt_dtype_t dtype, const void *logits,
                                   void *expert_ids, void *weights,
                                   void *counts, int64_t tokens,
                                   int64_t experts, int64_t top_k,
                                   int normalize);

/* permute over `comm` (P members, experts/P local experts each): counts
 * [P, experts] are every member's route counts; capacity > 0 keeps each
 * expert's first pairs in (member, token) order. Writes rows [tokens*top_k,
 * hidden] (x's kept rows by expert), send_counts [P], layout [P,
 * experts/P] (rows this rank receives per member and local expert),
 * pair_rows [tokens*top_k] (each pair's row, -1 if dropped) and
 * recv_counts [P] (rows this rank receives per member); records the
 * layer's routing statistics under `layer`. */
parc_rt_status_t parc_rt_moe_permute(
    parc_rt_comm_t *comm, parc_rt_dtype_t dtype, const void *x,
    const void *expert_ids, const void *counts, void *rows, void *send_counts,
    void *layout, void *pair_rows, void *recv_counts, int64_t tokens,
    int64_t hidden, int64_t experts, int64_t top_k, int64_t capacity,
    const char *layer);

/* dist.all_to_all_v along the leading dim, in slices of slice_elems
 * elements: send holds send_slices, send_counts [P] of them go to the
 * members in group order; recv holds recv_slices, recv_counts [P] of them
 * come from the members in group order. Both counts are i64 buffers in
 * kernel memory, read when the call starts (only payloads travel); they
 * must agree across the group and fit the buffers. */
parc_rt_status_t parc_rt_all_to_all_v_slices(
    parc_rt_comm_t *comm, const void *send, const void *send_counts,
    int64_t send_slices, void *recv, const void *recv_counts,
    int64_t recv_slices, int64_t slice_elems, parc_rt_dtype_t dtype);
parc_rt_status_t parc_rt_all_to_all_v_slices_start(
    parc_rt_comm_t *comm, const void *send, const void *send_counts,
    int64_t send_slices, void *recv, const void *recv_counts,
    int64_t recv_slices, int64_t slice_elems, parc_rt_dtype_t dtype,
    parc_rt_request_t **out_request);

/* experts: rows [max_rows, hidden] f32 hold, sender by sender and local
 * expert by local expert, layout[s, e] rows; out[i] = expert(rows[i]) in
 * f32. fc1/fc2/fc3 as parc_rt_moe's, [local_experts, ...] in `dtype`. */
parc_rt_status_t parc_rt_moe_experts(parc_rt_dtype_t dtype, const void *rows,
                                     const void *layout, const void *fc1,
                                     const void *fc2, const void *fc3,
                                     void *out, int64_t max_rows,
                                     int64_t senders, int64_t local_experts,
                                     int64_t hidden, int64_t ffn,
                                     parc_rt_moe_activation_t activation);

/* combine: y[t] (`dtype`) = sum over the token's pairs j with
 * pair_rows[t*top_k+j] >= 0, in row order, of weights[t, j] *
 * results[row] (f32). */
parc_rt_status_t parc_rt_moe_combine(parc_rt_dtype_t dtype,
                                     const void *results,
                                     const void *pair_rows,
                                     const void *weights, void *y,
                                     int64_t tokens, int64_t hidden,
                                     int64_t top_k);

/* Writes the routing statistics of the last call of every MoE layer as
 * JSON: pairs per expert and per expert-parallel rank, capacity, dropped
 * pairs and this rank's all-to-all bytes. Writes nothing if no MoE ran. */
parc_rt_status_t parc_rt_moe_report_write(const char *path);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PARC_RUNTIME_H */
