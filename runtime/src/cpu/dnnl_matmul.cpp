//===- dnnl_matmul.cpp - GEMMs through oneDNN's matmul primitive ----------===//

#include "dnnl_matmul.h"

#include "../constants.h"

#ifdef PARC_RT_HAVE_DNNL
#include <dnnl.hpp>
#endif

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

namespace parc::rt {

#ifdef PARC_RT_HAVE_DNNL

namespace {

using dnnl::memory;

/// PARC_RT_DNNL_MATMUL=0 keeps every product on sgemm / the f32 widening,
/// PARC_RT_PACK_WEIGHTS=0 keeps weights in their stored layout: both for
/// measuring what each step gives (bench/single_rank_vs_ort.sh).
bool envOff(const char *name) {
  const char *v = std::getenv(name);
  return v && std::strcmp(v, "0") == 0;
}

struct Engine {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  bool bf16 = dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core_bf16;
  bool enabled = !envOff("PARC_RT_DNNL_MATMUL");
  bool pack = !envOff("PARC_RT_PACK_WEIGHTS");
};

Engine &engine() {
  static Engine e;
  return e;
}

using Key = std::tuple<int, bool, bool, int64_t, int64_t, int64_t, float,
                       float, bool>;

struct Primitive {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul matmul;
  memory::desc plainWeights; // b as the caller stores it
};

/// Built once per shape; a rank's forward calls kernels from one thread,
/// the lock only guards the map.
std::shared_ptr<Primitive> primitiveFor(const Key &key) {
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<Primitive>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;
  auto [dtypeInt, transA, transB, m, n, k, alpha, beta, packed] = key;
  const memory::data_type dt = dtypeInt == PARC_RT_BF16
                                   ? memory::data_type::bf16
                                   : memory::data_type::f32;
  memory::desc src({m, k}, dt,
                   transA ? memory::dims{1, m} : memory::dims{k, 1});
  memory::desc plain({k, n}, dt,
                     transB ? memory::dims{1, k} : memory::dims{n, 1});
  memory::desc wei =
      packed ? memory::desc({k, n}, dt, memory::format_tag::any) : plain;
  memory::desc dst({m, n}, dt, memory::dims{n, 1});
  dnnl::primitive_attr attr;
  if (alpha != 1.0f)
    attr.set_output_scales(0, {alpha});
  if (beta != 0.0f) {
    dnnl::post_ops ops;
    ops.append_sum(beta);
    attr.set_post_ops(ops);
  }
  dnnl::matmul::desc desc(src, wei, dst);
  dnnl::matmul::primitive_desc pd(desc, attr, engine().engine);
  auto p = std::make_shared<Primitive>(Primitive{pd, dnnl::matmul(pd), plain});
  cache.emplace(key, p);
  return p;
}

/// A weight in the layout its primitive prefers, with that primitive.
struct Packed {
  std::shared_ptr<Primitive> primitive;
  memory weights;
};

/// The key as a string (floats by their bits), for the constants cache.
std::string keyString(const Key &key) {
  auto [dtypeInt, transA, transB, m, n, k, alpha, beta, packed] = key;
  uint32_t alphaBits, betaBits;
  std::memcpy(&alphaBits, &alpha, 4);
  std::memcpy(&betaBits, &beta, 4);
  return "dnnl_matmul:" + std::to_string(dtypeInt) + ":" +
         std::to_string(transA) + std::to_string(transB) + ":" +
         std::to_string(m) + "x" + std::to_string(n) + "x" +
         std::to_string(k) + ":" + std::to_string(alphaBits) + ":" +
         std::to_string(betaBits);
}

/// b reordered once per weight and shape; null when b is not constant.
std::shared_ptr<Packed> packedWeights(const Key &key, const void *b,
                                      size_t bytes) {
  auto derived = deriveFromConstant(b, bytes, keyString(key), [&] {
    Engine &e = engine();
    auto packed = std::make_shared<Packed>();
    packed->primitive = primitiveFor(key);
    packed->weights = memory(packed->primitive->pd.weights_desc(), e.engine);
    memory plain(packed->primitive->plainWeights, e.engine,
                 const_cast<void *>(b));
    dnnl::reorder(plain, packed->weights)
        .execute(e.stream, plain, packed->weights);
    e.stream.wait();
    return std::static_pointer_cast<void>(packed);
  });
  return std::static_pointer_cast<Packed>(derived);
}

} // namespace

bool dnnlHasBf16() { return engine().bf16; }

bool dnnlMatmul(parc_rt_dtype_t dtype, bool transA, bool transB, int64_t m,
                int64_t n, int64_t k, float alpha, const void *a,
                const void *b, float beta, void *y) {
  Engine &e = engine();
  if (!e.enabled || m <= 0 || n <= 0 || k <= 0 ||
      (dtype != PARC_RT_F32 && dtype != PARC_RT_BF16) ||
      (dtype == PARC_RT_BF16 && !e.bf16))
    return false;
  try {
    const size_t bBytes = size_t(k * n) * parc_rt_dtype_size(dtype);
    // Packing pays where the weight is reused: constant memory only.
    std::shared_ptr<Packed> packed;
    if (e.pack)
      packed = packedWeights(
          {int(dtype), transA, transB, m, n, k, alpha, beta, true}, b, bBytes);
    std::shared_ptr<Primitive> p =
        packed ? packed->primitive
               : primitiveFor({int(dtype), transA, transB, m, n, k, alpha,
                               beta, false});
    memory src(p->pd.src_desc(), e.engine, const_cast<void *>(a));
    memory dst(p->pd.dst_desc(), e.engine, y);
    memory weights = packed ? packed->weights
                            : memory(p->plainWeights, e.engine,
                                     const_cast<void *>(b));
    p->matmul.execute(e.stream, {{DNNL_ARG_SRC, src},
                                 {DNNL_ARG_WEIGHTS, weights},
                                 {DNNL_ARG_DST, dst}});
    e.stream.wait();
    return true;
  } catch (const dnnl::error &) {
    return false; // a shape or ISA the primitive does not take
  }
}

#else

bool dnnlHasBf16() { return false; }

bool dnnlMatmul(parc_rt_dtype_t, bool, bool, int64_t, int64_t, int64_t, float,
                const void *, const void *, float, void *) {
  return false;
}

#endif

} // namespace parc::rt
