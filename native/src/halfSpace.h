// The half space: hnswlib's SpaceInterface over binary16 elements. Element layout: float32 inverse norm
// (of the binary16 values; 0 for a zero vector), then dim binary16 values. Distances follow
// hnswlib-node's conventions so the engine's `fromHnsw` applies unchanged: cosine 1 − cos, ip 1 − a·b,
// l2 the squared distance.

#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hnswlib/hnswlib.h"
#include "kernels.h"

namespace arkivector {

enum Metric { METRIC_COSINE = 0, METRIC_IP = 1, METRIC_L2 = 2 };

struct SpaceParam {
  size_t dim;
  Kernels k;
};

inline float invNormOf(const void* p) {
  float f;
  std::memcpy(&f, p, 4);
  return f;
}
inline const uint16_t* halvesOf(const void* p) { return reinterpret_cast<const uint16_t*>(static_cast<const char*>(p) + 4); }

// The graph's distance functions, one per kernel and metric, each with its kernel inlined: hnswlib calls
// them through one pointer, and a kernel behind a second pointer would cost a call per distance. Built
// with -ffp-contract=off (binding.gyp): the cosine's products are not fused into the subtraction where
// the kernel's target allows FMA, so every kernel's arithmetic is as written.
#define ARKIVECTOR_DISTANCES(NAME, TARGET, DOT, L2)                                                     \
  TARGET inline float distCosine##NAME(const void* a, const void* b, const void* param) {             \
    const SpaceParam* s = static_cast<const SpaceParam*>(param);                                      \
    return 1.0f - DOT(halvesOf(a), halvesOf(b), s->dim) * invNormOf(a) * invNormOf(b);                \
  }                                                                                                   \
  TARGET inline float distIp##NAME(const void* a, const void* b, const void* param) {                 \
    return 1.0f - DOT(halvesOf(a), halvesOf(b), static_cast<const SpaceParam*>(param)->dim);          \
  }                                                                                                   \
  TARGET inline float distL2##NAME(const void* a, const void* b, const void* param) {                 \
    return L2(halvesOf(a), halvesOf(b), static_cast<const SpaceParam*>(param)->dim);                  \
  }

ARKIVECTOR_DISTANCES(Portable, , dotPortable<uint16_t>, l2Portable<uint16_t>)
#ifdef ARKIVECTOR_X86
ARKIVECTOR_DISTANCES(Avx2, __attribute__((target("avx2,f16c,fma"))), dotAvx2<uint16_t>, l2Avx2<uint16_t>)
ARKIVECTOR_DISTANCES(Avx512, __attribute__((target("avx512f,f16c,fma"))), dotAvx512<uint16_t>, l2Avx512<uint16_t>)
#else
#define distCosineAvx2 distCosinePortable
#define distIpAvx2 distIpPortable
#define distL2Avx2 distL2Portable
#define distCosineAvx512 distCosinePortable
#define distIpAvx512 distIpPortable
#define distL2Avx512 distL2Portable
#endif
#undef ARKIVECTOR_DISTANCES

// [kernel][metric], in the order of Kernel and Metric.
inline const hnswlib::DISTFUNC<float> DISTANCES[3][3] = {
    {distCosinePortable, distIpPortable, distL2Portable},
    {distCosineAvx2, distIpAvx2, distL2Avx2},
    {distCosineAvx512, distIpAvx512, distL2Avx512},
};

class HalfSpace : public hnswlib::SpaceInterface<float> {
 public:
  HalfSpace(int metric, size_t dim, int kernel) : metric_(metric) {
    param_.dim = dim;
    param_.k = KERNELS[kernel];
    fn_ = DISTANCES[kernel][metric];
  }
  size_t get_data_size() override { return 4 + 2 * param_.dim; }
  hnswlib::DISTFUNC<float> get_dist_func() override { return fn_; }
  void* get_dist_func_param() override { return &param_; }
  float distance(const void* a, const void* b) const { return fn_(a, b, &param_); }
  // The distance from a float32 query (`invQ` its inverse norm) to a stored element.
  float exactDistance(const float* q, float invQ, const void* x) const {
    const uint16_t* h = halvesOf(x);
    if (metric_ == METRIC_L2) return param_.k.l2Mixed(q, h, param_.dim);
    const float dot = param_.k.dotMixed(q, h, param_.dim);
    return metric_ == METRIC_COSINE ? 1.0f - dot * invQ * invNormOf(x) : 1.0f - dot;
  }

 private:
  int metric_;
  SpaceParam param_;
  hnswlib::DISTFUNC<float> fn_;
};

}  // namespace arkivector
