//===- kernel_check.cpp - every kernel of the ABI on fixed inputs ---------===//
//
// A backend-neutral run of the runtime's kernels: inputs are made on the
// host from a fixed seed, moved into an arena with parc_rt_copy (host to
// device on the cuda backend, a memcpy on the cpu one), run through the
// public C ABI only, and copied back and written as OUT/<case>.npy. The
// same source is linked against each backend (parc-rt-kernel-check and
// parc-rt-kernel-check-cuda); check/compare.py then holds the cuda outputs
// to the cpu ones, case by case. OUT/status.txt records each case's
// status, so a kernel one backend rejects and the other runs shows up too.
//
// Usage: parc-rt-kernel-check OUT_DIR [CASE_SUBSTRING]
//        parc-rt-kernel-check --bench   (GEMM TFLOP/s and kernel GB/s)
//
//===----------------------------------------------------------------------===//

#include "parc/program.h"
#include "parc/runtime.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace {

using Dims = std::vector<int64_t>;

//===----------------------------------------------------------------------===//
// Host tensors and their device copies
//===----------------------------------------------------------------------===//

uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

/// f32 -> f16, round to nearest even (normal range and zero; enough for
/// the small values used here).
uint16_t toF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000u;
  int32_t exp = int32_t((u >> 23) & 0xff) - 127 + 15;
  uint32_t mant = u & 0x7fffffu;
  if (exp <= 0)
    return uint16_t(sign);
  if (exp >= 31)
    return uint16_t(sign | 0x7c00u);
  uint32_t h = sign | (uint32_t(exp) << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    ++h;
  return uint16_t(h);
}

struct Tensor {
  parc_rt_dtype_t dtype = PARC_RT_F32;
  Dims dims;
  std::vector<unsigned char> host;
  void *device = nullptr;

  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= d;
    return n;
  }
  size_t bytes() const { return size_t(count()) * parc_rt_dtype_size(dtype); }
  int64_t rank() const { return int64_t(dims.size()); }
  const int64_t *shape() const { return dims.empty() ? nullptr : dims.data(); }
};

/// Deterministic pseudo-random numbers (64-bit LCG).
struct Random {
  uint64_t state;
  explicit Random(uint64_t seed) : state(seed * 6364136223846793005ull + 1) {}
  double uniform() { // [0, 1)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return double(state >> 11) * (1.0 / 9007199254740992.0);
  }
};

class Check {
public:
  Check(std::string out, std::string filter)
      : out_(std::move(out)), filter_(std::move(filter)) {}

  bool init() {
    if (parc_rt_arena_create(size_t(256) << 20, 256, &arena_) != PARC_RT_OK) {
      std::fprintf(stderr, "arena: %s\n", parc_rt_last_error());
      return false;
    }
    base_ = static_cast<char *>(parc_rt_arena_base(arena_));
    status_ = std::fopen((out_ + "/status.txt").c_str(), "w");
    return status_ != nullptr;
  }
  ~Check() {
    if (status_)
      std::fclose(status_);
    if (arena_)
      parc_rt_arena_release(arena_);
  }

  /// A device tensor holding `values` converted to `dtype`.
  Tensor make(parc_rt_dtype_t dtype, Dims dims,
              const std::function<double(int64_t)> &values) {
    Tensor t;
    t.dtype = dtype;
    t.dims = std::move(dims);
    t.host.resize(t.bytes());
    for (int64_t i = 0; i < t.count(); ++i)
      put(t, i, values(i));
    place(t);
    upload(t);
    return t;
  }
  /// Uniform in [lo, hi).
  Tensor random(parc_rt_dtype_t dtype, Dims dims, double lo = -2,
                double hi = 2) {
    return make(dtype, std::move(dims),
                [&](int64_t) { return lo + (hi - lo) * rng_.uniform(); });
  }
  /// Integers in [lo, hi).
  Tensor ints(parc_rt_dtype_t dtype, Dims dims, int64_t lo, int64_t hi) {
    return make(dtype, std::move(dims), [&](int64_t) {
      return double(lo + int64_t(rng_.uniform() * double(hi - lo)));
    });
  }
  /// Uninitialised output (filled with a marker so unwritten parts show).
  Tensor output(parc_rt_dtype_t dtype, Dims dims) {
    return make(dtype, std::move(dims), [](int64_t) { return 7.0; });
  }

  /// Runs one case: `body` returns the status of its kernel calls and the
  /// outputs to write (`name`.npy, or `name`.<i>.npy for several).
  void run(const std::string &name,
           const std::function<parc_rt_status_t(std::vector<Tensor> &)> &body) {
    if (!filter_.empty() && name.find(filter_) == std::string::npos)
      return;
    std::vector<Tensor> outs;
    const size_t mark = used_;
    parc_rt_status_t s = body(outs);
    for (size_t i = 0; s == PARC_RT_OK && i < outs.size(); ++i) {
      // Copies to the host wait for the device and report its faults.
      s = parc_rt_copy(outs[i].host.data(), outs[i].device, outs[i].bytes());
      if (s != PARC_RT_OK)
        break;
      std::string path = out_ + "/" + name +
                         (outs.size() > 1 ? "." + std::to_string(i) : "") +
                         ".npy";
      s = parc_rt_npy_write(path.c_str(), outs[i].dtype, outs[i].rank(),
                            outs[i].shape(), outs[i].host.data());
    }
    std::fprintf(status_, "%s %s\n", name.c_str(), parc_rt_status_string(s));
    std::printf("%-40s %s%s%s\n", name.c_str(), parc_rt_status_string(s),
                s == PARC_RT_OK ? "" : ": ",
                s == PARC_RT_OK ? "" : parc_rt_last_error());
    ++cases_;
    used_ = mark; // the next case reuses the arena
  }

  int cases() const { return cases_; }

private:
  static void put(Tensor &t, int64_t i, double v) {
    unsigned char *p = t.host.data() + size_t(i) * parc_rt_dtype_size(t.dtype);
    switch (t.dtype) {
    case PARC_RT_F32: {
      float f = float(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case PARC_RT_F64:
      std::memcpy(p, &v, 8);
      break;
    case PARC_RT_F16: {
      uint16_t h = toF16(float(v));
      std::memcpy(p, &h, 2);
      break;
    }
    case PARC_RT_BF16: {
      uint16_t h = toBf16(float(v));
      std::memcpy(p, &h, 2);
      break;
    }
    case PARC_RT_I64: {
      int64_t x = int64_t(v);
      std::memcpy(p, &x, 8);
      break;
    }
    case PARC_RT_I32: {
      int32_t x = int32_t(v);
      std::memcpy(p, &x, 4);
      break;
    }
    case PARC_RT_I8:
      *reinterpret_cast<int8_t *>(p) = int8_t(v);
      break;
    case PARC_RT_U8:
      *p = uint8_t(v);
      break;
    default: // bool
      *p = v != 0;
      break;
    }
  }
  void place(Tensor &t) {
    used_ = (used_ + 255) / 256 * 256;
    t.device = base_ + used_;
    used_ += std::max<size_t>(t.bytes(), 1);
  }
  void upload(Tensor &t) {
    if (parc_rt_copy(t.device, t.host.data(), t.bytes()) != PARC_RT_OK)
      std::fprintf(stderr, "upload: %s\n", parc_rt_last_error());
  }

  std::string out_, filter_;
  parc_rt_arena_t *arena_ = nullptr;
  char *base_ = nullptr;
  size_t used_ = 0;
  FILE *status_ = nullptr;
  Random rng_{42};
  int cases_ = 0;
};

const char *dtypeTag(parc_rt_dtype_t t) { return parc_rt_dtype_name(t); }

constexpr parc_rt_dtype_t kFloats[] = {PARC_RT_F32, PARC_RT_F16, PARC_RT_BF16};

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

void elementwise(Check &c) {
  static const char *unaryNames[] = {
      "neg",  "abs",       "exp",     "log",  "sqrt", "reciprocal",
      "tanh", "erf",       "sigmoid", "relu", "not",  "silu",
      "gelu", "gelu_tanh", "floor",   "ceil", "sin",  "cos"};
  for (parc_rt_dtype_t t : kFloats)
    for (int op = 0; op <= PARC_RT_UNARY_COS; ++op) {
      if (op == PARC_RT_UNARY_NOT)
        continue;
      const bool positive = op == PARC_RT_UNARY_LOG ||
                            op == PARC_RT_UNARY_SQRT ||
                            op == PARC_RT_UNARY_RECIPROCAL;
      c.run(std::string("unary_") + unaryNames[op] + "_" + dtypeTag(t),
            [&](std::vector<Tensor> &o) {
              Tensor x = positive ? c.random(t, {3, 37}, 0.1, 4)
                                  : c.random(t, {3, 37}, -4, 4);
              o.push_back(c.output(t, {3, 37}));
              return parc_rt_unary(parc_rt_unary_op_t(op), t, x.device,
                                   o[0].device, x.count());
            });
    }
  for (int op : {PARC_RT_UNARY_NEG, PARC_RT_UNARY_ABS, PARC_RT_UNARY_RELU})
    c.run(std::string("unary_") + unaryNames[op] + "_i32",
          [&](std::vector<Tensor> &o) {
            Tensor x = c.ints(PARC_RT_I32, {50}, -100, 100);
            o.push_back(c.output(PARC_RT_I32, {50}));
            return parc_rt_unary(parc_rt_unary_op_t(op), PARC_RT_I32, x.device,
                                 o[0].device, 50);
          });
  c.run("unary_not_bool", [&](std::vector<Tensor> &o) {
    Tensor x = c.ints(PARC_RT_BOOL, {33}, 0, 2);
    o.push_back(c.output(PARC_RT_BOOL, {33}));
    return parc_rt_unary(PARC_RT_UNARY_NOT, PARC_RT_BOOL, x.device,
                         o[0].device, 33);
  });
  c.run("unary_exp_inplace_f32", [&](std::vector<Tensor> &o) {
    Tensor x = c.random(PARC_RT_F32, {1000});
    o.push_back(x);
    return parc_rt_unary(PARC_RT_UNARY_EXP, PARC_RT_F32, x.device, x.device,
                         1000);
  });

  static const char *binaryNames[] = {
      "add",     "sub",           "mul",   "div",  "pow",
      "min",     "max",           "equal", "less", "less_equal",
      "greater", "greater_equal", "and",   "or",   "xor"};
  for (parc_rt_dtype_t t : kFloats)
    for (int op = 0; op <= PARC_RT_BINARY_GREATER_EQUAL; ++op) {
      const bool cmp = op >= PARC_RT_BINARY_EQUAL;
      c.run(std::string("binary_") + binaryNames[op] + "_" + dtypeTag(t),
            [&](std::vector<Tensor> &o) {
              // [2,3,4] with [3,1]: broadcasting on both sides.
              Tensor a = op == PARC_RT_BINARY_POW ? c.random(t, {2, 3, 4}, 0.5, 2)
                                                  : c.ints(t, {2, 3, 4}, -3, 4);
              Tensor b = op == PARC_RT_BINARY_DIV
                             ? c.random(t, {3, 1}, 0.5, 2)
                             : c.ints(t, {3, 1}, -3, 4);
              o.push_back(c.output(cmp ? PARC_RT_BOOL : t, {2, 3, 4}));
              return parc_rt_binary(parc_rt_binary_op_t(op), t, a.device, 3,
                                    a.shape(), b.device, 2, b.shape(),
                                    o[0].device, 3, o[0].shape());
            });
    }
  for (int op = 0; op <= PARC_RT_BINARY_MAX; ++op)
    c.run(std::string("binary_") + binaryNames[op] + "_i64",
          [&](std::vector<Tensor> &o) {
            Tensor a = c.ints(PARC_RT_I64, {4, 5}, -20, 20);
            Tensor b = op == PARC_RT_BINARY_POW
                           ? c.ints(PARC_RT_I64, {5}, 0, 4)
                           : c.make(PARC_RT_I64, {5}, [](int64_t i) {
                               return double(i % 2 ? i + 1 : -(i + 2));
                             });
            o.push_back(c.output(PARC_RT_I64, {4, 5}));
            return parc_rt_binary(parc_rt_binary_op_t(op), PARC_RT_I64,
                                  a.device, 2, a.shape(), b.device, 1,
                                  b.shape(), o[0].device, 2, o[0].shape());
          });
  for (int op : {PARC_RT_BINARY_AND, PARC_RT_BINARY_OR, PARC_RT_BINARY_XOR,
                 PARC_RT_BINARY_EQUAL})
    c.run(std::string("binary_") + binaryNames[op] + "_bool",
          [&](std::vector<Tensor> &o) {
            Tensor a = c.ints(PARC_RT_BOOL, {6, 1}, 0, 2);
            Tensor b = c.ints(PARC_RT_BOOL, {1, 7}, 0, 2);
            o.push_back(c.output(PARC_RT_BOOL, {6, 7}));
            return parc_rt_binary(parc_rt_binary_op_t(op), PARC_RT_BOOL,
                                  a.device, 2, a.shape(), b.device, 2,
                                  b.shape(), o[0].device, 2, o[0].shape());
          });
  c.run("binary_add_large_f32", [&](std::vector<Tensor> &o) {
    Tensor a = c.random(PARC_RT_F32, {8, 129, 65});
    Tensor b = c.random(PARC_RT_F32, {129, 1});
    o.push_back(c.output(PARC_RT_F32, {8, 129, 65}));
    return parc_rt_binary(PARC_RT_BINARY_ADD, PARC_RT_F32, a.device, 3,
                          a.shape(), b.device, 2, b.shape(), o[0].device, 3,
                          o[0].shape());
  });
  c.run("where_f32", [&](std::vector<Tensor> &o) {
    Tensor cond = c.ints(PARC_RT_BOOL, {1, 5, 1}, 0, 2);
    Tensor x = c.random(PARC_RT_F32, {3, 5, 4});
    Tensor y = c.random(PARC_RT_F32, {4});
    o.push_back(c.output(PARC_RT_F32, {3, 5, 4}));
    return parc_rt_where(PARC_RT_F32, cond.device, 3, cond.shape(), x.device, 3,
                         x.shape(), y.device, 1, y.shape(), o[0].device, 3,
                         o[0].shape());
  });
  struct CastCase {
    parc_rt_dtype_t from, to;
  };
  for (CastCase k : {CastCase{PARC_RT_F32, PARC_RT_BF16},
                     CastCase{PARC_RT_F32, PARC_RT_F16},
                     CastCase{PARC_RT_F32, PARC_RT_I32},
                     CastCase{PARC_RT_F32, PARC_RT_I8},
                     CastCase{PARC_RT_F32, PARC_RT_BOOL},
                     CastCase{PARC_RT_BF16, PARC_RT_F32},
                     CastCase{PARC_RT_F16, PARC_RT_F32},
                     CastCase{PARC_RT_I64, PARC_RT_F32},
                     CastCase{PARC_RT_I64, PARC_RT_I32},
                     CastCase{PARC_RT_BOOL, PARC_RT_F32},
                     CastCase{PARC_RT_F64, PARC_RT_I64}})
    c.run(std::string("cast_") + dtypeTag(k.from) + "_" + dtypeTag(k.to),
          [&](std::vector<Tensor> &o) {
            Tensor x = c.make(k.from, {40}, [](int64_t i) {
              if (i == 0)
                return 1e10; // saturates integers
              if (i == 1)
                return -1e10;
              if (i == 2)
                return 0.0;
              return (double(i) - 20) * 3.7;
            });
            o.push_back(c.output(k.to, {40}));
            return parc_rt_cast(k.from, x.device, k.to, o[0].device, 40);
          });
  c.run("fill_f32", [&](std::vector<Tensor> &o) {
    o.push_back(c.output(PARC_RT_F32, {1000}));
    const float v = 2.5f;
    return parc_rt_fill(PARC_RT_F32, o[0].device, 1000, &v);
  });
  c.run("copy_u8", [&](std::vector<Tensor> &o) {
    Tensor x = c.ints(PARC_RT_U8, {777}, 0, 255);
    o.push_back(c.output(PARC_RT_U8, {777}));
    return parc_rt_copy(o[0].device, x.device, 777);
  });
}

void linalg(Check &c) {
  struct MatmulCase {
    const char *name;
    Dims a, b, out;
  };
  const MatmulCase matmuls[] = {
      {"fold", {2, 3, 4, 5}, {5, 6}, {2, 3, 4, 6}},
      {"batched", {3, 4, 5}, {3, 5, 6}, {3, 4, 6}},
      {"broadcast", {2, 1, 4, 5}, {3, 5, 6}, {2, 3, 4, 6}},
      {"vec_mat", {5}, {2, 5, 6}, {2, 6}},
      {"mat_vec", {2, 4, 5}, {5}, {2, 4}},
      {"k_zero", {2, 4, 0}, {0, 3}, {2, 4, 3}},
      {"large", {64, 96}, {96, 80}, {64, 80}},
  };
  for (parc_rt_dtype_t t : kFloats)
    for (const MatmulCase &m : matmuls)
      c.run(std::string("matmul_") + m.name + "_" + dtypeTag(t),
            [&](std::vector<Tensor> &o) {
              Tensor a = c.random(t, m.a), b = c.random(t, m.b);
              o.push_back(c.output(t, m.out));
              return parc_rt_matmul(t, a.device, a.rank(), a.shape(), b.device,
                                    b.rank(), b.shape(), o[0].device,
                                    o[0].rank(), o[0].shape());
            });
  c.run("matmul_batched_i32", [&](std::vector<Tensor> &o) {
    Tensor a = c.ints(PARC_RT_I32, {3, 4, 5}, -5, 5);
    Tensor b = c.ints(PARC_RT_I32, {5, 6}, -5, 5);
    o.push_back(c.output(PARC_RT_I32, {3, 4, 6}));
    return parc_rt_matmul(PARC_RT_I32, a.device, 3, a.shape(), b.device, 2,
                          b.shape(), o[0].device, 3, o[0].shape());
  });

  struct GemmCase {
    const char *name;
    bool ta, tb;
    Dims c; // empty: no c
    float alpha, beta;
    int64_t m, n, k;
  };
  const GemmCase gemms[] = {
      {"plain", false, false, {}, 1, 1, 7, 9, 11},
      {"linear_bias", false, true, {9}, 1, 1, 7, 9, 11},
      {"linear_bias_2d", false, true, {1, 64}, 1, 1, 33, 64, 48},
      {"trans_a", true, false, {7, 1}, 0.5f, 2, 7, 9, 11},
      {"trans_both", true, true, {7, 9}, 1.5f, 0.25f, 7, 9, 11},
      {"scalar_c", false, false, {1}, 1, 3, 7, 9, 11},
      {"beta_zero", false, false, {9}, 2, 0, 7, 9, 11},
      {"k_zero", false, false, {9}, 1, 2, 7, 9, 0},
  };
  for (parc_rt_dtype_t t : kFloats)
    for (const GemmCase &g : gemms)
      c.run(std::string("gemm_") + g.name + "_" + dtypeTag(t),
            [&](std::vector<Tensor> &o) {
              Tensor a = c.random(t, g.ta ? Dims{g.k, g.m} : Dims{g.m, g.k});
              Tensor b = c.random(t, g.tb ? Dims{g.n, g.k} : Dims{g.k, g.n});
              Tensor cc = c.random(t, g.c.empty() ? Dims{1} : g.c);
              o.push_back(c.output(t, {g.m, g.n}));
              return parc_rt_gemm(t, a.device, b.device,
                                  g.c.empty() ? nullptr : cc.device,
                                  int64_t(g.c.size()),
                                  g.c.empty() ? nullptr : cc.shape(),
                                  o[0].device, g.m, g.n, g.k, g.ta, g.tb,
                                  g.alpha, g.beta);
            });

  // Grouped-query attention: 4 query heads over 2 key/value heads.
  for (parc_rt_dtype_t t : kFloats) {
    c.run(std::string("attention_scores_gqa_") + dtypeTag(t),
          [&](std::vector<Tensor> &o) {
            Tensor q = c.random(t, {2, 4, 5, 8}), k = c.random(t, {2, 2, 6, 8});
            o.push_back(c.output(t, {2, 4, 5, 6}));
            return parc_rt_attention_scores(t, q.device, 4, q.shape(), k.device,
                                            4, k.shape(), o[0].device, 4,
                                            o[0].shape(), 0.35f);
          });
    c.run(std::string("attention_values_gqa_") + dtypeTag(t),
          [&](std::vector<Tensor> &o) {
            Tensor p = c.random(t, {2, 4, 5, 6}, 0, 1),
                   v = c.random(t, {2, 2, 6, 8});
            o.push_back(c.output(t, {2, 4, 5, 8}));
            return parc_rt_attention_values(t, p.device, 4, p.shape(), v.device,
                                            4, v.shape(), o[0].device, 4,
                                            o[0].shape());
          });
  }

  struct ConvCase {
    const char *name;
    Dims x, w, y;
    int64_t group;
    Dims strides, pads, dilations;
    bool bias;
  };
  const ConvCase convs[] = {
      {"2d", {2, 3, 9, 8}, {4, 3, 3, 3}, {2, 4, 5, 4}, 1, {2, 2}, {1, 1, 1, 1},
       {1, 1}, true},
      {"2d_group_dilated", {1, 4, 10, 10}, {6, 2, 3, 3}, {1, 6, 6, 6}, 2,
       {1, 1}, {0, 0, 0, 0}, {2, 2}, true},
      {"1x1", {2, 8, 5, 5}, {16, 8, 1, 1}, {2, 16, 5, 5}, 1, {1, 1},
       {0, 0, 0, 0}, {1, 1}, false},
      {"1d_asym_pads", {2, 3, 12}, {5, 3, 4}, {2, 5, 6}, 1, {2}, {2, 1}, {1},
       true},
  };
  for (parc_rt_dtype_t t : kFloats)
    for (const ConvCase &k : convs)
      c.run(std::string("conv_") + k.name + "_" + dtypeTag(t),
            [&](std::vector<Tensor> &o) {
              Tensor x = c.random(t, k.x), w = c.random(t, k.w, -1, 1),
                     b = c.random(t, {k.w[0]});
              o.push_back(c.output(t, k.y));
              return parc_rt_conv(t, x.device, x.rank(), x.shape(), w.device,
                                  w.shape(), k.bias ? b.device : nullptr,
                                  k.group, k.strides.data(), k.pads.data(),
                                  k.dilations.data(), o[0].device,
                                  o[0].shape());
            });
  for (parc_rt_dtype_t t : {PARC_RT_F32, PARC_RT_BF16, PARC_RT_I32})
    c.run(std::string("max_pool_2d_ceil_") + dtypeTag(t),
          [&](std::vector<Tensor> &o) {
            Tensor x = t == PARC_RT_I32 ? c.ints(t, {2, 3, 7, 7}, -50, 50)
                                        : c.random(t, {2, 3, 7, 7});
            const int64_t kernel[] = {3, 3}, strides[] = {2, 2},
                          pads[] = {1, 1, 1, 1}, dil[] = {1, 1};
            o.push_back(c.output(t, {2, 3, 4, 4}));
            return parc_rt_max_pool(t, x.device, 4, x.shape(), kernel, strides,
                                    pads, dil, o[0].device, o[0].shape());
          });
}

void norms(Check &c) {
  for (parc_rt_dtype_t t : kFloats) {
    const std::string d = dtypeTag(t);
    c.run("softmax_rows_" + d, [&](std::vector<Tensor> &o) {
      Tensor x = c.random(t, {3, 4, 300}, -8, 8);
      o.push_back(c.output(t, {3, 4, 300}));
      return parc_rt_softmax(t, x.device, o[0].device, 3, x.shape(), -1);
    });
    c.run("softmax_strided_" + d, [&](std::vector<Tensor> &o) {
      Tensor x = c.random(t, {3, 17, 5}, -8, 8);
      o.push_back(c.output(t, {3, 17, 5}));
      return parc_rt_softmax(t, x.device, o[0].device, 3, x.shape(), 1);
    });
    c.run("log_softmax_rows_" + d, [&](std::vector<Tensor> &o) {
      Tensor x = c.random(t, {6, 33}, -8, 8);
      o.push_back(c.output(t, {6, 33}));
      return parc_rt_log_softmax(t, x.device, o[0].device, 2, x.shape(), 1);
    });
    c.run("layer_norm_bias_" + d, [&](std::vector<Tensor> &o) {
      Tensor x = c.random(t, {4, 5, 96}, -3, 5);
      Tensor s = c.random(t, {96}), b = c.random(t, {96});
      o.push_back(c.output(t, {4, 5, 96}));
      return parc_rt_layer_norm(t, x.device, s.device, b.device, o[0].device, 3,
                                x.shape(), -1, 1e-5f);
    });
    c.run("layer_norm_two_axes_" + d, [&](std::vector<Tensor> &o) {
      Tensor x = c.random(t, {4, 5, 24}, -3, 5);
      Tensor s = c.random(t, {5, 24});
      o.push_back(c.output(t, {4, 5, 24}));
      return parc_rt_layer_norm(t, x.device, s.device, nullptr, o[0].device, 3,
                                x.shape(), 1, 1e-5f);
    });
    c.run("rms_norm_" + d, [&](std::vector<Tensor> &o) {
      Tensor x = c.random(t, {7, 1100});
      Tensor s = c.random(t, {1100});
      o.push_back(c.output(t, {7, 1100}));
      return parc_rt_rms_norm(t, x.device, s.device, nullptr, o[0].device, 2,
                              x.shape(), -1, 1e-6f);
    });
  }
  c.run("softmax_inplace_f32", [&](std::vector<Tensor> &o) {
    Tensor x = c.random(PARC_RT_F32, {5, 1000}, -8, 8);
    o.push_back(x);
    return parc_rt_softmax(PARC_RT_F32, x.device, x.device, 2, x.shape(), 1);
  });

  static const char *reductions[] = {"sum", "mean", "max", "min", "prod"};
  struct ReduceCase {
    const char *name;
    Dims x;
    Dims axes;
  };
  const ReduceCase reduceCases[] = {
      {"last", {4, 6, 7}, {-1}},
      {"middle", {4, 6, 7}, {1}},
      {"two", {4, 6, 7}, {0, 2}},
      {"all_long", {5, 300}, {0, 1}},
      {"rows_long", {3, 700}, {1}},
      {"none", {4, 3}, {}},
  };
  for (int r = 0; r <= PARC_RT_REDUCTION_PROD; ++r)
    for (const ReduceCase &k : reduceCases)
      for (parc_rt_dtype_t t : {PARC_RT_F32, PARC_RT_BF16, PARC_RT_I64}) {
        if (r == PARC_RT_REDUCTION_PROD && t != PARC_RT_F32)
          continue;
        c.run(std::string("reduce_") + reductions[r] + "_" + k.name + "_" +
                  dtypeTag(t),
              [&](std::vector<Tensor> &o) {
                Tensor x =
                    t == PARC_RT_I64
                        ? c.ints(t, k.x, -9, 10)
                        : (r == PARC_RT_REDUCTION_PROD
                               ? c.random(t, k.x, 0.9, 1.1)
                               : c.random(t, k.x));
                Dims out = k.x;
                for (int64_t a : k.axes)
                  out[a < 0 ? a + int64_t(out.size()) : a] = 1;
                o.push_back(c.output(t, out));
                return parc_rt_reduce(parc_rt_reduction_t(r), t, x.device,
                                      x.rank(), x.shape(),
                                      int64_t(k.axes.size()),
                                      k.axes.empty() ? nullptr : k.axes.data(),
                                      o[0].device);
              });
      }

  for (int largest : {0, 1})
    for (parc_rt_dtype_t t : {PARC_RT_F32, PARC_RT_BF16, PARC_RT_I32})
      c.run(std::string("topk_") + (largest ? "largest_" : "smallest_") +
                dtypeTag(t),
            [&](std::vector<Tensor> &o) {
              // Integer-valued data: plenty of ties, broken by index.
              Tensor x = c.ints(t, {3, 10, 4}, -4, 5);
              o.push_back(c.output(t, {3, 3, 4}));
              o.push_back(c.output(PARC_RT_I64, {3, 3, 4}));
              return parc_rt_topk(t, x.device, 3, x.shape(), 1, 3, largest,
                                  o[0].device, o[1].device);
            });
  c.run("topk_router_f32", [&](std::vector<Tensor> &o) {
    Tensor x = c.random(PARC_RT_F32, {16, 64});
    o.push_back(c.output(PARC_RT_F32, {16, 8}));
    o.push_back(c.output(PARC_RT_I64, {16, 8}));
    return parc_rt_topk(PARC_RT_F32, x.device, 2, x.shape(), -1, 8, 1,
                        o[0].device, o[1].device);
  });

  for (parc_rt_dtype_t t : kFloats) {
    const std::string d = dtypeTag(t);
    c.run("rotary_partial_" + d, [&](std::vector<Tensor> &o) {
      // [B, S, H, D] with the sequence on axis 1, rotary on 6 of 10 dims.
      Tensor x = c.random(t, {2, 5, 3, 10});
      Tensor cs = c.random(t, {5, 3}), sn = c.random(t, {5, 3});
      o.push_back(c.output(t, {2, 5, 3, 10}));
      return parc_rt_rotary(t, x.device, 4, x.shape(), 1, 6, cs.device,
                            sn.device, o[0].device);
    });
    c.run("rotary_full_" + d, [&](std::vector<Tensor> &o) {
      Tensor x = c.random(t, {2, 3, 5, 8});
      Tensor cs = c.random(t, {1, 1, 5, 8}), sn = c.random(t, {5, 8});
      o.push_back(c.output(t, {2, 3, 5, 8}));
      return parc_rt_rotary_full(t, x.device, 4, x.shape(), cs.device, 4,
                                 cs.shape(), sn.device, 2, sn.shape(),
                                 o[0].device, 4, o[0].shape());
    });
  }
}

void movement(Check &c) {
  struct TransposeCase {
    const char *name;
    Dims x, perm;
    parc_rt_dtype_t t;
  };
  const TransposeCase transposes[] = {
      {"2d_tiled_f32", {70, 45}, {1, 0}, PARC_RT_F32},
      {"heads_bf16", {2, 5, 3, 8}, {0, 2, 1, 3}, PARC_RT_BF16},
      {"kt_f32", {2, 3, 40, 16}, {0, 1, 3, 2}, PARC_RT_F32},
      {"rotate_u8", {4, 5, 6}, {2, 0, 1}, PARC_RT_U8},
      {"3d_i64", {9, 33, 10}, {1, 2, 0}, PARC_RT_I64},
  };
  for (const TransposeCase &k : transposes)
    c.run(std::string("transpose_") + k.name, [&](std::vector<Tensor> &o) {
      Tensor x = c.ints(k.t, k.x, 0, 100);
      Dims out;
      for (int64_t p : k.perm)
        out.push_back(k.x[p]);
      o.push_back(c.output(k.t, out));
      return parc_rt_transpose(k.t, x.device, x.rank(), x.shape(),
                               k.perm.data(), o[0].device);
    });
  c.run("slice_steps_f32", [&](std::vector<Tensor> &o) {
    Tensor x = c.random(PARC_RT_F32, {6, 7, 8});
    const int64_t starts[] = {1, 6, 0}, steps[] = {2, -2, 3};
    o.push_back(c.output(PARC_RT_F32, {3, 4, 3}));
    return parc_rt_slice(PARC_RT_F32, x.device, 3, x.shape(), starts, steps,
                         o[0].device, o[0].shape());
  });
  c.run("concat_axis1_f32", [&](std::vector<Tensor> &o) {
    Tensor a = c.random(PARC_RT_F32, {2, 3, 4}), b = c.random(PARC_RT_F32, {2, 1, 4}),
           d = c.random(PARC_RT_F32, {2, 5, 4});
    o.push_back(c.output(PARC_RT_F32, {2, 9, 4}));
    const void *ins[] = {a.device, b.device, d.device};
    const int64_t sizes[] = {3, 1, 5};
    return parc_rt_concat(PARC_RT_F32, 3, ins, sizes, 3, o[0].shape(), 1,
                          o[0].device);
  });
  c.run("split_last_bf16", [&](std::vector<Tensor> &o) {
    Tensor x = c.random(PARC_RT_BF16, {3, 10});
    o.push_back(c.output(PARC_RT_BF16, {3, 4}));
    o.push_back(c.output(PARC_RT_BF16, {3, 6}));
    void *outs[] = {o[0].device, o[1].device};
    const int64_t sizes[] = {4, 6};
    return parc_rt_split(PARC_RT_BF16, x.device, 2, x.shape(), -1, 2, sizes,
                         outs);
  });
  c.run("expand_f32", [&](std::vector<Tensor> &o) {
    Tensor x = c.random(PARC_RT_F32, {3, 1});
    o.push_back(c.output(PARC_RT_F32, {2, 3, 5}));
    return parc_rt_expand(PARC_RT_F32, x.device, 2, x.shape(), o[0].device, 3,
                          o[0].shape());
  });
  c.run("gather_embedding_f32", [&](std::vector<Tensor> &o) {
    Tensor table = c.random(PARC_RT_F32, {50, 16});
    Tensor idx = c.ints(PARC_RT_I64, {2, 7}, -50, 50);
    o.push_back(c.output(PARC_RT_F32, {2, 7, 16}));
    return parc_rt_gather(PARC_RT_F32, table.device, 2, table.shape(), 0,
                          PARC_RT_I64, idx.device, 2, idx.shape(), o[0].device);
  });
  c.run("gather_axis1_i32idx_bf16", [&](std::vector<Tensor> &o) {
    Tensor data = c.random(PARC_RT_BF16, {3, 9, 5});
    Tensor idx = c.ints(PARC_RT_I32, {4}, -9, 9);
    o.push_back(c.output(PARC_RT_BF16, {3, 4, 5}));
    return parc_rt_gather(PARC_RT_BF16, data.device, 3, data.shape(), 1,
                          PARC_RT_I32, idx.device, 1, idx.shape(), o[0].device);
  });
  c.run("gather_scalar_index_u8", [&](std::vector<Tensor> &o) {
    Tensor data = c.ints(PARC_RT_U8, {6, 3}, 0, 200);
    Tensor idx = c.make(PARC_RT_I64, {}, [](int64_t) { return 4.0; });
    o.push_back(c.output(PARC_RT_U8, {3}));
    return parc_rt_gather(PARC_RT_U8, data.device, 2, data.shape(), 0,
                          PARC_RT_I64, idx.device, 0, nullptr, o[0].device);
  });
  static const char *scatterNames[] = {"none", "add", "mul", "max", "min"};
  for (int r = 0; r <= PARC_RT_SCATTER_MIN; ++r)
    c.run(std::string("scatter_elements_") + scatterNames[r] + "_f32",
          [&](std::vector<Tensor> &o) {
            Tensor data = c.random(PARC_RT_F32, {4, 6});
            // Duplicate targets: applied in index order on both backends.
            Tensor idx = c.ints(PARC_RT_I64, {4, 5}, -6, 6);
            Tensor upd = c.random(PARC_RT_F32, {4, 5});
            o.push_back(c.output(PARC_RT_F32, {4, 6}));
            return parc_rt_scatter_elements(
                PARC_RT_F32, data.device, 2, data.shape(), 1, PARC_RT_I64,
                idx.device, idx.shape(), upd.device,
                parc_rt_scatter_reduction_t(r), o[0].device);
          });
  for (int upper : {0, 1})
    for (int64_t k : {-1, 0, 2})
      c.run(std::string("trilu_") + (upper ? "upper" : "lower") + "_k" +
                std::to_string(k + 1),
            [&](std::vector<Tensor> &o) {
              Tensor x = c.random(PARC_RT_F32, {2, 5, 6});
              o.push_back(c.output(PARC_RT_F32, {2, 5, 6}));
              return parc_rt_trilu(PARC_RT_F32, x.device, 3, x.shape(), k,
                                   upper, o[0].device);
            });
}

void moe(Check &c) {
  // Sparse MoE: SwiGLU top-2 of 4 and plain ReLU top-1 of 8 per float
  // dtype, and a capacity that drops pairs (f32); compared across
  // backends by compare.py, against a dense reference by the unit tests.
  for (parc_rt_dtype_t t : kFloats) {
    const std::string d = dtypeTag(t);
    c.run("moe_swiglu_top2_" + d, [&](std::vector<Tensor> &o) {
      Tensor x = c.random(t, {24, 32}), l = c.random(t, {24, 4}, -3, 3);
      Tensor w1 = c.random(t, {4, 32, 48}, -0.3, 0.3),
             w2 = c.random(t, {4, 48, 32}, -0.3, 0.3),
             w3 = c.random(t, {4, 32, 48}, -0.3, 0.3);
      o.push_back(c.output(t, {24, 32}));
      return parc_rt_moe(t, x.device, l.device, w1.device, w2.device,
                         w3.device, o[0].device, 24, 32, 48, 4, 2, 1,
                         PARC_RT_MOE_SILU, 0, "check");
    });
    c.run("moe_relu_top1_" + d, [&](std::vector<Tensor> &o) {
      Tensor x = c.random(t, {16, 16}), l = c.random(t, {16, 8}, -3, 3);
      Tensor w1 = c.random(t, {8, 16, 24}, -0.3, 0.3),
             w2 = c.random(t, {8, 24, 16}, -0.3, 0.3);
      o.push_back(c.output(t, {16, 16}));
      return parc_rt_moe(t, x.device, l.device, w1.device, w2.device, nullptr,
                         o[0].device, 16, 16, 24, 8, 1, 0, PARC_RT_MOE_RELU, 0,
                         "check");
    });
  }
  c.run("moe_capacity_f32", [&](std::vector<Tensor> &o) {
    Tensor x = c.random(PARC_RT_F32, {32, 8}),
           l = c.random(PARC_RT_F32, {32, 4}, -3, 3);
    Tensor w1 = c.random(PARC_RT_F32, {4, 8, 16}, -0.3, 0.3),
           w2 = c.random(PARC_RT_F32, {4, 16, 8}, -0.3, 0.3),
           w3 = c.random(PARC_RT_F32, {4, 8, 16}, -0.3, 0.3);
    o.push_back(c.output(PARC_RT_F32, {32, 8}));
    return parc_rt_moe(PARC_RT_F32, x.device, l.device, w1.device, w2.device,
                       w3.device, o[0].device, 32, 8, 16, 4, 2, 1,
                       PARC_RT_MOE_SILU, 6, "check");
  });
}

void collectives(Check &c, parc_rt_context_t *ctx) {
  parc_rt_comm_t *world = parc_rt_context_world(ctx);
  const int size = parc_rt_context_size(ctx);
  c.run("all_reduce_sum_f32", [&](std::vector<Tensor> &o) {
    Tensor x = c.random(PARC_RT_F32, {100});
    o.push_back(c.output(PARC_RT_F32, {100}));
    return parc_rt_all_reduce(world, x.device, o[0].device, 100, PARC_RT_F32,
                              PARC_RT_REDUCE_SUM);
  });
  c.run("all_reduce_max_bf16_async", [&](std::vector<Tensor> &o) {
    Tensor x = c.random(PARC_RT_BF16, {64});
    o.push_back(x);
    parc_rt_request_t *r = nullptr;
    parc_rt_status_t s = parc_rt_all_reduce_start(
        world, x.device, x.device, 64, PARC_RT_BF16, PARC_RT_REDUCE_MAX, &r);
    return s == PARC_RT_OK ? parc_rt_wait(r) : s;
  });
  c.run("all_gather_i32", [&](std::vector<Tensor> &o) {
    Tensor x = c.ints(PARC_RT_I32, {10}, 0, 1000);
    o.push_back(c.output(PARC_RT_I32, {int64_t(size) * 10}));
    return parc_rt_all_gather(world, x.device, o[0].device, 10, PARC_RT_I32);
  });
  c.run("all_gather_rows_bf16", [&](std::vector<Tensor> &o) {
    Tensor x = c.random(PARC_RT_BF16, {3, 5});
    o.push_back(c.output(PARC_RT_BF16, {3, int64_t(size) * 5}));
    return parc_rt_all_gather_rows(world, x.device, o[0].device, 3, 5, nullptr,
                                   -1, PARC_RT_BF16);
  });
  // A padded vocabulary's gather: the last rank's padding (2 of 5) dropped;
  // to every rank, then to the last alone (a logits head's gather to the
  // output rank: the others' output keeps its 7s).
  for (int root : {-1, size - 1})
    c.run(root < 0 ? "all_gather_rows_uneven_f32"
                   : "all_gather_rows_uneven_to_root_f32",
          [&](std::vector<Tensor> &o) {
            Tensor x = c.random(PARC_RT_F32, {3, 5});
            std::vector<int64_t> takes(size_t(size), 5);
            takes.back() = 3;
            o.push_back(c.output(PARC_RT_F32, {3, int64_t(size) * 5 - 2}));
            return parc_rt_all_gather_rows(world, x.device, o[0].device, 3, 5,
                                           takes.data(), root, PARC_RT_F32);
          });
  c.run("broadcast_f32", [&](std::vector<Tensor> &o) {
    Tensor x = c.random(PARC_RT_F32, {33});
    o.push_back(x);
    return parc_rt_broadcast(world, x.device, 33, PARC_RT_F32, 0);
  });
  // An expert-parallel MoE layer step by step, as the compiler places it
  // (route, counts all-gathered, permute, all_to_all_v out, experts,
  // all_to_all_v back, combine), over the world: 8 tokens per rank, top-2
  // of 4 experts per rank, with and without a capacity that drops pairs.
  for (parc_rt_dtype_t t : kFloats)
    for (int64_t capacity : {int64_t(0), int64_t(3)}) {
      if (capacity && t != PARC_RT_F32)
        continue;
      std::string name = std::string("moe_ep_steps_") + dtypeTag(t) +
                         (capacity ? "_capacity" : "");
      c.run(name, [&](std::vector<Tensor> &o) {
        const int64_t p = size, s = 8, k = 2, h = 16, f = 24, local = 4,
                      e = local * p, room = s * p * k;
        Tensor x = c.random(t, {s, h}), l = c.random(t, {s, e}, -3, 3);
        Tensor w1 = c.random(t, {local, h, f}, -0.3, 0.3),
               w2 = c.random(t, {local, f, h}, -0.3, 0.3),
               w3 = c.random(t, {local, h, f}, -0.3, 0.3);
        Tensor ids = c.output(PARC_RT_I64, {s, k}),
               weights = c.output(PARC_RT_F32, {s, k}),
               counts = c.output(PARC_RT_I64, {e}),
               all = c.output(PARC_RT_I64, {p * e}),
               rows = c.output(PARC_RT_F32, {s * k, h}),
               sendCounts = c.output(PARC_RT_I64, {p}),
               layout = c.output(PARC_RT_I64, {p, local}),
               pairRows = c.output(PARC_RT_I64, {s * k}),
               in = c.output(PARC_RT_F32, {room, h}),
               recvCounts = c.output(PARC_RT_I64, {p}),
               out = c.output(PARC_RT_F32, {room, h}),
               back = c.output(PARC_RT_F32, {s * k, h}),
               y = c.output(t, {s, h});
        o = {ids, weights, counts, pairRows, layout, y};
        parc_rt_status_t st = parc_rt_moe_route(
            t, l.device, ids.device, weights.device, counts.device, s, e, k, 1);
        if (st == PARC_RT_OK)
          st = parc_rt_all_gather(world, counts.device, all.device, e,
                                  PARC_RT_I64);
        if (st == PARC_RT_OK)
          st = parc_rt_moe_permute(world, t, x.device, ids.device, all.device,
                                   rows.device, sendCounts.device,
                                   layout.device, pairRows.device,
                                   recvCounts.device, s, h, e, k, capacity,
                                   "check");
        // The dispatch started (as dist-overlap places it), the combine
        // blocking; both with the planned counts.
        parc_rt_request_t *r = nullptr;
        if (st == PARC_RT_OK)
          st = parc_rt_all_to_all_v_slices_start(
              world, rows.device, sendCounts.device, s * k, in.device,
              recvCounts.device, room, h, PARC_RT_F32, &r);
        if (st == PARC_RT_OK)
          st = parc_rt_wait(r);
        if (st == PARC_RT_OK)
          st = parc_rt_moe_experts(t, in.device, layout.device, w1.device,
                                   w2.device, w3.device, out.device, room, p,
                                   local, h, f, PARC_RT_MOE_SILU);
        if (st == PARC_RT_OK)
          st = parc_rt_all_to_all_v_slices(world, out.device, recvCounts.device,
                                           room, back.device, sendCounts.device,
                                           s * k, h, PARC_RT_F32);
        if (st == PARC_RT_OK)
          st = parc_rt_moe_combine(t, back.device, pairRows.device,
                                   weights.device, y.device, s, h, k);
        return st;
      });
    }
  c.run("barrier", [&](std::vector<Tensor> &) {
    parc_rt_request_t *r = nullptr;
    parc_rt_status_t s = parc_rt_barrier_start(world, &r);
    if (s == PARC_RT_OK)
      s = parc_rt_wait(r);
    return s == PARC_RT_OK ? parc_rt_barrier(world) : s;
  });
}

//===----------------------------------------------------------------------===//
// --bench: throughput of the hot kernels at LLM sizes
//===----------------------------------------------------------------------===//

/// Mean milliseconds of `body` over `iters` calls after `warmup` ones; a
/// 4-byte copy to the host waits for the device before and after.
double timeMs(void *sync, int warmup, int iters,
              const std::function<parc_rt_status_t()> &body) {
  float host;
  for (int i = 0; i < warmup; ++i)
    if (body() != PARC_RT_OK)
      return -1;
  if (parc_rt_copy(&host, sync, 4) != PARC_RT_OK)
    return -1;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i)
    if (body() != PARC_RT_OK)
      return -1;
  if (parc_rt_copy(&host, sync, 4) != PARC_RT_OK)
    return -1;
  auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(end - start).count() / iters;
}

int bench() {
  const size_t bytes = size_t(3) << 30;
  parc_rt_arena_t *arena = nullptr;
  if (parc_rt_arena_create(bytes, 256, &arena) != PARC_RT_OK) {
    std::fprintf(stderr, "bench: %s\n", parc_rt_last_error());
    return 1;
  }
  char *base = static_cast<char *>(parc_rt_arena_base(arena));
  // Operands live at fixed offsets; their contents are the arena's zeros
  // plus whatever earlier benchmarks left: timing only.
  void *a = base, *b = base + (size_t(512) << 20), *c = base + (size_t(1024) << 20),
       *y = base + (size_t(1536) << 20), *bias = base + (size_t(2560) << 20);
  std::printf("%-44s %10s %12s\n", "gemm (M x N x K)", "ms", "TFLOP/s");
  struct Shape {
    int64_t m, n, k;
  };
  for (parc_rt_dtype_t t : {PARC_RT_F32, PARC_RT_BF16, PARC_RT_F16})
    for (Shape g : {Shape{4096, 4096, 4096}, Shape{8192, 8192, 8192},
                    Shape{16, 4096, 4096}, Shape{2048, 11008, 4096},
                    Shape{2048, 4096, 11008}})
      for (bool withBias : {false, true}) {
        if (t == PARC_RT_F32 && g.m == 8192)
          continue;
        const double ms = timeMs(y, 2, 10, [&] {
          const int64_t dims[1] = {g.n};
          return parc_rt_gemm(t, a, b, withBias ? bias : nullptr, 1,
                              withBias ? dims : nullptr, y, g.m, g.n, g.k, 0, 1,
                              1.0f, 1.0f);
        });
        char label[96];
        std::snprintf(label, sizeof(label), "%s %lldx%lldx%lld%s",
                      parc_rt_dtype_name(t), (long long)g.m, (long long)g.n,
                      (long long)g.k, withBias ? " +bias (cuBLASLt)" : "");
        std::printf("%-44s %10.4f %12.2f\n", label, ms,
                    ms > 0 ? 2.0 * g.m * g.n * g.k / (ms * 1e9) : 0.0);
      }
  std::printf("\n%-44s %10s %12s\n", "memory-bound kernel", "ms", "GB/s");
  auto report = [&](const char *label, double ms, double bytesMoved) {
    std::printf("%-44s %10.4f %12.1f\n", label, ms,
                ms > 0 ? bytesMoved / (ms * 1e6) : 0.0);
  };
  const int64_t n = int64_t(64) << 20; // 64 Mi elements
  {
    const int64_t dims[1] = {n};
    report("binary add f32 (64 Mi)",
           timeMs(y, 2, 10,
                  [&] {
                    return parc_rt_binary(PARC_RT_BINARY_ADD, PARC_RT_F32, a, 1,
                                          dims, b, 1, dims, c, 1, dims);
                  }),
           3.0 * 4 * double(n));
    const int64_t bdims[2] = {n / 4096, 4096}, rdims[1] = {4096};
    report("binary add bf16 row broadcast (16Ki x 4Ki)",
           timeMs(y, 2, 10,
                  [&] {
                    return parc_rt_binary(PARC_RT_BINARY_ADD, PARC_RT_BF16, a,
                                          2, bdims, b, 1, rdims, c, 2, bdims);
                  }),
           2.0 * 2 * double(n));
    report("unary gelu bf16 (64 Mi)",
           timeMs(y, 2, 10,
                  [&] {
                    return parc_rt_unary(PARC_RT_UNARY_GELU, PARC_RT_BF16, a, c,
                                         n);
                  }),
           2.0 * 2 * double(n));
    const int64_t sdims[2] = {n / 2048, 2048};
    report("softmax bf16 rows of 2048",
           timeMs(y, 2, 10,
                  [&] {
                    return parc_rt_softmax(PARC_RT_BF16, a, c, 2, sdims, -1);
                  }),
           2.0 * 2 * double(n));
    const int64_t ndims[2] = {n / 4096, 4096};
    report("rms_norm bf16 rows of 4096",
           timeMs(y, 2, 10,
                  [&] {
                    return parc_rt_rms_norm(PARC_RT_BF16, a, b, nullptr, c, 2,
                                            ndims, -1, 1e-6f);
                  }),
           2.0 * 2 * double(n));
    const int64_t tdims[2] = {8192, 8192}, perm[2] = {1, 0};
    report("transpose f32 8Ki x 8Ki",
           timeMs(y, 2, 10,
                  [&] {
                    return parc_rt_transpose(PARC_RT_F32, a, 2, tdims, perm, c);
                  }),
           2.0 * 4 * 8192.0 * 8192.0);
    const int64_t hdims[4] = {8, 2048, 32, 128}, hperm[4] = {0, 2, 1, 3};
    report("transpose bf16 [B,S,H,D] -> [B,H,S,D]",
           timeMs(y, 2, 10,
                  [&] {
                    return parc_rt_transpose(PARC_RT_BF16, a, 4, hdims, hperm,
                                             c);
                  }),
           2.0 * 2 * 8 * 2048 * 32 * 128.0);
  }
  parc_rt_arena_release(arena);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // Anything that looks like a flag is one: a mistyped option must never
  // become the name of the folder the cases are written to.
  bool help = argc >= 2 && (std::strcmp(argv[1], "--help") == 0 ||
                            std::strcmp(argv[1], "-h") == 0);
  bool unknownFlag = argc >= 2 && argv[1][0] == '-' && !help &&
                     std::strcmp(argv[1], "--bench") != 0;
  if (argc < 2 || argc > 3 || help || unknownFlag) {
    if (unknownFlag)
      std::fprintf(stderr, "%s: unknown option '%s'\n", argv[0], argv[1]);
    std::fprintf(help ? stdout : stderr,
                 "usage: %s OUT_DIR [CASE_SUBSTRING]   write every kernel "
                 "case's output to OUT_DIR\n"
                 "       %s --bench                    time the GEMM and "
                 "attention kernels\n",
                 argv[0], argv[0]);
    return help ? 0 : 2;
  }
  parc_rt_context_t *ctx = nullptr;
  if (parc_rt_init(&argc, &argv, &ctx) != PARC_RT_OK) {
    std::fprintf(stderr, "init: %s\n", parc_rt_last_error());
    return 1;
  }
  if (std::strcmp(argv[1], "--bench") == 0) {
    int rc = bench();
    parc_rt_finalize(ctx);
    return rc;
  }
  ::mkdir(argv[1], 0777);
  int cases = 0;
  {
    Check c(argv[1], argc > 2 ? argv[2] : "");
    if (!c.init()) {
      std::fprintf(stderr, "cannot start: %s\n", parc_rt_last_error());
      parc_rt_abort(ctx, PARC_RT_INTERNAL);
    }
    elementwise(c);
    linalg(c);
    norms(c);
    movement(c);
    moe(c);
    collectives(c, ctx);
    cases = c.cases();
  }
  std::printf("%d cases written to %s\n", cases, argv[1]);
  parc_rt_status_t s = parc_rt_finalize(ctx);
  if (s != PARC_RT_OK) {
    std::fprintf(stderr, "finalize: %s\n", parc_rt_last_error());
    return 1;
  }
  return 0;
}
