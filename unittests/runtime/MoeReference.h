//===- MoeReference.h - dense mixture-of-experts reference in double ------===//
//
// What an exported MoE block computes: every expert on every token, each
// weighted by a dense routing tensor that is zero for experts the token did
// not choose (or whose capacity was used up by earlier tokens). Shared by
// the serial and the expert-parallel tests.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_UNITTESTS_RUNTIME_MOEREFERENCE_H
#define PARC_UNITTESTS_RUNTIME_MOEREFERENCE_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace parc::test {

struct MoeCase {
  int64_t tokens, hidden, ffn, experts, topK;
  bool normalize, gated;
  int64_t capacity; // 0: no limit
};

/// Returns y [tokens, hidden]; `dropped` counts the (token, expert) pairs
/// that capacity removed.
inline std::vector<double>
denseMoe(const MoeCase &c, const std::vector<float> &x,
         const std::vector<float> &logits, const std::vector<float> &fc1,
         const std::vector<float> &fc2, const std::vector<float> &fc3,
         int64_t &dropped) {
  const int64_t T = c.tokens, H = c.hidden, F = c.ffn, E = c.experts;
  std::vector<double> routing(T * E, 0.0);
  std::vector<int64_t> used(E, 0);
  dropped = 0;
  for (int64_t t = 0; t < T; ++t) {
    std::vector<double> p(E);
    double mx = logits[t * E], sum = 0;
    for (int64_t e = 0; e < E; ++e)
      mx = std::max(mx, double(logits[t * E + e]));
    for (int64_t e = 0; e < E; ++e)
      sum += p[e] = std::exp(double(logits[t * E + e]) - mx);
    std::vector<int64_t> order(E);
    for (int64_t e = 0; e < E; ++e)
      order[e] = e;
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return p[a] > p[b]; });
    double chosen = 0;
    for (int64_t j = 0; j < c.topK; ++j)
      chosen += p[order[j]] / sum;
    for (int64_t j = 0; j < c.topK; ++j) {
      int64_t e = order[j];
      if (c.capacity && used[e] >= c.capacity) {
        ++dropped;
        continue;
      }
      ++used[e];
      routing[t * E + e] = c.normalize ? p[e] / sum / chosen : p[e] / sum;
    }
  }
  std::vector<double> y(T * H, 0.0), a(F);
  for (int64_t e = 0; e < E; ++e)
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t f = 0; f < F; ++f) {
        double g = 0, u = 0;
        for (int64_t i = 0; i < H; ++i) {
          g += double(x[t * H + i]) * fc1[(e * H + i) * F + f];
          if (c.gated)
            u += double(x[t * H + i]) * fc3[(e * H + i) * F + f];
        }
        double act = g / (1 + std::exp(-g)); // silu
        a[f] = c.gated ? act * u : act;
      }
      for (int64_t i = 0; i < H; ++i) {
        double s = 0;
        for (int64_t f = 0; f < F; ++f)
          s += a[f] * fc2[(e * F + f) * H + i];
        y[t * H + i] += routing[t * E + e] * s;
      }
    }
  return y;
}

} // namespace parc::test

#endif // PARC_UNITTESTS_RUNTIME_MOEREFERENCE_H
