// arkivector's native engine (issue 23): an N-API addon over hnswlib's own headers (the copy that ships
// inside hnswlib-node) with a half-precision space. Each element holds its binary16 values once, inside
// the graph, behind a float32 inverse norm; every distance is computed from binary16 by a kernel chosen
// at run time (AVX-512, F16C+AVX2+FMA, or portable C++), so one build runs on any x86-64 (or other) CPU
// and never dies with an illegal instruction. Filters arrive once per query as typed arrays (a label ->
// slot map and a bitset over slots): no call into JavaScript per visited node.
//
// Plain N-API (node_api.h, which Node ships), no node-addon-api. Every method catches C++ exceptions and
// throws a JavaScript Error instead; every argument is checked before hnswlib sees it.

#include <node_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <queue>
#include <stdexcept>
#include <string>
#include <vector>

#include "hnswlib/hnswlib.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include "labelMirror.h"
#include "loadChecks.h"
#include "replaceRepair.h"

#if defined(__x86_64__) || defined(__i386__)
#define ARKIVECTOR_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace {

// ---- binary16 <-> float32 (portable) ----

float H2F[65536];

float halfToFloat(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      // Subnormal: normalise.
      int e = -1;
      do {
        e++;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000 | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Round to nearest even; magnitudes beyond the largest half saturate to ±65504 (callers reject NaN and
// infinities before).
uint16_t floatToHalf(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  const uint16_t sign = (uint16_t)((b >> 16) & 0x8000);
  const uint32_t absb = b & 0x7fffffff;
  if (absb >= 0x477ff000) return sign | 0x7bff;  // ≥ 65520 rounds to inf: saturate
  if (absb < 0x33000001) return sign;            // ≤ 2^-25: rounds to zero
  const int exp = (int)(absb >> 23);
  uint32_t mant = absb & 0x7fffff;
  if (exp < 113) {
    // Subnormal half.
    mant |= 0x800000;
    const int shift = 126 - exp;  // 14..24
    const uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    uint32_t r = half + ((rem > mid || (rem == mid && (half & 1))) ? 1 : 0);
    return sign | (uint16_t)r;
  }
  uint32_t h = ((uint32_t)(exp - 112) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  if (h >= 0x7c00) h = 0x7bff;
  return sign | (uint16_t)h;
}

// ---- kernels ----

enum Kernel { KERNEL_PORTABLE = 0, KERNEL_AVX2 = 1, KERNEL_AVX512 = 2 };
const char* const KERNEL_NAMES[] = {"portable", "avx2", "avx512"};

// Half × half for the graph; float32 query × half for exact answers (the final distances of a search,
// and the exact scan), so they agree with the engine's JavaScript exact scan.
struct Kernels {
  float (*dot)(const uint16_t*, const uint16_t*, size_t);
  float (*l2)(const uint16_t*, const uint16_t*, size_t);
  float (*dotMixed)(const float*, const uint16_t*, size_t);
  float (*l2Mixed)(const float*, const uint16_t*, size_t);
};

// One template per kernel, for both operand types: A is uint16_t (binary16, the graph's half × half) or
// float (the float32 query's exact distances).
inline float value(const uint16_t* p, size_t i) { return H2F[p[i]]; }
inline float value(const float* p, size_t i) { return p[i]; }

template <typename A>
float dotPortable(const A* a, const uint16_t* b, size_t n) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += value(a, i) * H2F[b[i]];
    s1 += value(a, i + 1) * H2F[b[i + 1]];
    s2 += value(a, i + 2) * H2F[b[i + 2]];
    s3 += value(a, i + 3) * H2F[b[i + 3]];
  }
  for (; i < n; i++) s0 += value(a, i) * H2F[b[i]];
  return (s0 + s1) + (s2 + s3);
}

template <typename A>
float l2Portable(const A* a, const uint16_t* b, size_t n) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float d0 = value(a, i) - H2F[b[i]];
    const float d1 = value(a, i + 1) - H2F[b[i + 1]];
    const float d2 = value(a, i + 2) - H2F[b[i + 2]];
    const float d3 = value(a, i + 3) - H2F[b[i + 3]];
    s0 += d0 * d0;
    s1 += d1 * d1;
    s2 += d2 * d2;
    s3 += d3 * d3;
  }
  for (; i < n; i++) {
    const float d = value(a, i) - H2F[b[i]];
    s0 += d * d;
  }
  return (s0 + s1) + (s2 + s3);
}

#ifdef ARKIVECTOR_X86
__attribute__((target("avx2,f16c,fma"))) inline float hsum256(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v);
  __m128 hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
  return _mm_cvtss_f32(lo);
}

__attribute__((target("avx2,f16c,fma"))) inline __m256 load8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
__attribute__((target("avx2,f16c,fma"))) inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }

template <typename A>
__attribute__((target("avx2,f16c,fma"), always_inline)) inline float dotAvx2(const A* a, const uint16_t* b, size_t n) {
  __m256 acc0 = _mm256_setzero_ps();
  __m256 acc1 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(load8(a + i), load8(b + i), acc0);
    acc1 = _mm256_fmadd_ps(load8(a + i + 8), load8(b + i + 8), acc1);
  }
  for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(load8(a + i), load8(b + i), acc0);
  float s = hsum256(_mm256_add_ps(acc0, acc1));
  for (; i < n; i++) s += value(a, i) * H2F[b[i]];
  return s;
}

template <typename A>
__attribute__((target("avx2,f16c,fma"), always_inline)) inline float l2Avx2(const A* a, const uint16_t* b, size_t n) {
  __m256 acc0 = _mm256_setzero_ps();
  __m256 acc1 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 d0 = _mm256_sub_ps(load8(a + i), load8(b + i));
    const __m256 d1 = _mm256_sub_ps(load8(a + i + 8), load8(b + i + 8));
    acc0 = _mm256_fmadd_ps(d0, d0, acc0);
    acc1 = _mm256_fmadd_ps(d1, d1, acc1);
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 d = _mm256_sub_ps(load8(a + i), load8(b + i));
    acc0 = _mm256_fmadd_ps(d, d, acc0);
  }
  float s = hsum256(_mm256_add_ps(acc0, acc1));
  for (; i < n; i++) {
    const float d = value(a, i) - H2F[b[i]];
    s += d * d;
  }
  return s;
}

// GCC 12's AVX-512 intrinsic headers trip -Wmaybe-uninitialized on their own temporaries.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// Spilled and summed: GCC 12's _mm512_reduce_add_ps warns about an uninitialised temporary.
__attribute__((target("avx512f,f16c,fma"))) inline float hsum512(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float s = 0;
  for (int i = 0; i < 16; i++) s += lanes[i];
  return s;
}

__attribute__((target("avx512f,f16c,fma"))) inline __m512 load16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
__attribute__((target("avx512f,f16c,fma"))) inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }

template <typename A>
__attribute__((target("avx512f,f16c,fma"), always_inline)) inline float dotAvx512(const A* a, const uint16_t* b, size_t n) {
  __m512 acc0 = _mm512_setzero_ps();
  __m512 acc1 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm512_fmadd_ps(load16(a + i), load16(b + i), acc0);
    acc1 = _mm512_fmadd_ps(load16(a + i + 16), load16(b + i + 16), acc1);
  }
  for (; i + 16 <= n; i += 16) acc0 = _mm512_fmadd_ps(load16(a + i), load16(b + i), acc0);
  float s = hsum512(_mm512_add_ps(acc0, acc1));
  for (; i < n; i++) s += value(a, i) * H2F[b[i]];
  return s;
}

template <typename A>
__attribute__((target("avx512f,f16c,fma"), always_inline)) inline float l2Avx512(const A* a, const uint16_t* b, size_t n) {
  __m512 acc0 = _mm512_setzero_ps();
  __m512 acc1 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 d0 = _mm512_sub_ps(load16(a + i), load16(b + i));
    const __m512 d1 = _mm512_sub_ps(load16(a + i + 16), load16(b + i + 16));
    acc0 = _mm512_fmadd_ps(d0, d0, acc0);
    acc1 = _mm512_fmadd_ps(d1, d1, acc1);
  }
  for (; i + 16 <= n; i += 16) {
    const __m512 d = _mm512_sub_ps(load16(a + i), load16(b + i));
    acc0 = _mm512_fmadd_ps(d, d, acc0);
  }
  float s = hsum512(_mm512_add_ps(acc0, acc1));
  for (; i < n; i++) {
    const float d = value(a, i) - H2F[b[i]];
    s += d * d;
  }
  return s;
}
#pragma GCC diagnostic pop
#endif

const Kernels KERNELS[] = {
    {dotPortable<uint16_t>, l2Portable<uint16_t>, dotPortable<float>, l2Portable<float>},
#ifdef ARKIVECTOR_X86
    {dotAvx2<uint16_t>, l2Avx2<uint16_t>, dotAvx2<float>, l2Avx2<float>},
    {dotAvx512<uint16_t>, l2Avx512<uint16_t>, dotAvx512<float>, l2Avx512<float>},
#else
    {dotPortable<uint16_t>, l2Portable<uint16_t>, dotPortable<float>, l2Portable<float>},
    {dotPortable<uint16_t>, l2Portable<uint16_t>, dotPortable<float>, l2Portable<float>},
#endif
};

// The best kernel this CPU (and its OS: AVX state saved on context switches) can run.
int detectKernel() {
#ifdef ARKIVECTOR_X86
  __builtin_cpu_init();
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
  // libgcc's checks include the OS's XCR0 support for the AVX and AVX-512 register states.
  if (f16c && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")) return KERNEL_AVX512;
  if (f16c && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return KERNEL_AVX2;
#endif
  return KERNEL_PORTABLE;
}

int DETECTED = KERNEL_PORTABLE;
// ARKIVECTOR_SIMD=portable|avx2|avx512 lowers the default (never above what the CPU runs).
int DEFAULT_KERNEL = KERNEL_PORTABLE;

int kernelByName(const std::string& name, int fallback) {
  for (int i = 0; i < 3; i++)
    if (name == KERNEL_NAMES[i]) return i;
  return fallback;
}

// Float32 values to binary16 patterns, as floatToHalf rounds them, 8 at a time with F16C where the default
// kernel is a SIMD one: the hardware rounds to nearest even as floatToHalf does, and gives infinity where
// floatToHalf saturates (finite inputs only), which the fix-up below turns into ±65504. A query's encoding
// cost 1.5 µs of a 30 µs search at 20k × 128, most of it in the scalar rounding.
#ifdef ARKIVECTOR_X86
__attribute__((target("avx2,f16c,fma"))) void toHalvesF16c(const float* f, uint16_t* out, size_t n) {
  size_t i = 0;
  const __m128i magnitude = _mm_set1_epi16(0x7fff);
  const __m128i infinity = _mm_set1_epi16(0x7c00);
  const __m128i one = _mm_set1_epi16(1);
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m128i inf = _mm_cmpeq_epi16(_mm_and_si128(h, magnitude), infinity);
    h = _mm_sub_epi16(h, _mm_and_si128(inf, one));  // 0x7c00 → 0x7bff, 0xfc00 → 0xfbff
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; i++) out[i] = floatToHalf(f[i]);
}
#endif

void toHalves(const float* f, uint16_t* out, size_t n) {
#ifdef ARKIVECTOR_X86
  if (DEFAULT_KERNEL >= KERNEL_AVX2) return toHalvesF16c(f, out, n);
#endif
  for (size_t i = 0; i < n; i++) out[i] = floatToHalf(f[i]);
}

// ---- the half space ----
// Element layout: float32 inverse norm (of the binary16 values; 0 for a zero vector), then dim binary16
// values. Distances follow hnswlib-node's conventions so the engine's `fromHnsw` applies unchanged:
// cosine 1 − cos, ip 1 − a·b, l2 the squared distance.

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

// The graph's distance functions, one per kernel and metric, each with its kernel inlined (hnswlib calls
// them through one pointer; a kernel behind a second pointer cost a call per distance, ~7 % of a walk at
// 20k × 128). Built with -ffp-contract=off (binding.gyp): the cosine's products are not fused into the
// subtraction where the kernel's target allows FMA, so every kernel's arithmetic is as written.
#define ARKIVECTOR_DISTANCES(NAME, TARGET, DOT, L2)                                                     \
  TARGET float distCosine##NAME(const void* a, const void* b, const void* param) {                    \
    const SpaceParam* s = static_cast<const SpaceParam*>(param);                                      \
    return 1.0f - DOT(halvesOf(a), halvesOf(b), s->dim) * invNormOf(a) * invNormOf(b);                \
  }                                                                                                   \
  TARGET float distIp##NAME(const void* a, const void* b, const void* param) {                        \
    return 1.0f - DOT(halvesOf(a), halvesOf(b), static_cast<const SpaceParam*>(param)->dim);          \
  }                                                                                                   \
  TARGET float distL2##NAME(const void* a, const void* b, const void* param) {                        \
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
const hnswlib::DISTFUNC<float> DISTANCES[3][3] = {
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

// ---- filters ----

// Allowed: labels whose slot (labelSlot[label], −1 = invisible) is ≥ 0 and, with a bitset, set in it.
class SlotFilter : public hnswlib::BaseFilterFunctor {
 public:
  const int32_t* labelSlot = nullptr;
  size_t labels = 0;
  const uint8_t* bits = nullptr;
  size_t slots = 0;
  size_t calls = 0;
  bool operator()(hnswlib::labeltype label) override {
    calls++;
    return allows(label);
  }
  // The test without the count or the virtual call (the filtered walk's, which counts its own).
  bool allows(hnswlib::labeltype label) const {
    if (label >= labels) return false;
    const int32_t s = labelSlot[label];
    if (s < 0) return false;
    if (bits == nullptr) return true;
    return (size_t)s < slots && ((bits[(size_t)s >> 3] >> (s & 7)) & 1) != 0;
  }
};

// ---- N-API helpers ----

struct JsError : std::runtime_error {
  explicit JsError(const std::string& m) : std::runtime_error(m) {}
};

#define NAPI_OK(call)                                       \
  do {                                                      \
    if ((call) != napi_ok) throw JsError("N-API call failed: " #call); \
  } while (0)

napi_valuetype typeOf(napi_env env, napi_value v) {
  napi_valuetype t;
  NAPI_OK(napi_typeof(env, v, &t));
  return t;
}

double numberArg(napi_env env, napi_value v, const char* what) {
  if (typeOf(env, v) != napi_number) throw JsError(std::string(what) + " must be a number");
  double d;
  NAPI_OK(napi_get_value_double(env, v, &d));
  return d;
}

// An integer in [lo, hi].
size_t intArg(napi_env env, napi_value v, const char* what, double lo, double hi) {
  const double d = numberArg(env, v, what);
  if (!(d >= lo && d <= hi) || std::floor(d) != d)
    throw JsError(std::string(what) + " must be an integer in [" + std::to_string((long long)lo) + ", " +
                  std::to_string((long long)hi) + "]");
  return (size_t)d;
}

bool isMissing(napi_env env, napi_value v) {
  const napi_valuetype t = typeOf(env, v);
  return t == napi_undefined || t == napi_null;
}

struct Typed {
  void* data = nullptr;
  size_t length = 0;
};

Typed typedArg(napi_env env, napi_value v, napi_typedarray_type want, const char* what) {
  bool is = false;
  NAPI_OK(napi_is_typedarray(env, v, &is));
  const char* names[] = {"Int8Array",  "Uint8Array",   "Uint8ClampedArray", "Int16Array",    "Uint16Array",
                         "Int32Array", "Uint32Array",  "Float32Array",      "Float64Array",  "BigInt64Array",
                         "BigUint64Array"};
  if (!is) throw JsError(std::string(what) + " must be a " + names[want]);
  napi_typedarray_type t;
  Typed out;
  napi_value buf;
  size_t off;
  NAPI_OK(napi_get_typedarray_info(env, v, &t, &out.length, &out.data, &buf, &off));
  if (t != want) throw JsError(std::string(what) + " must be a " + names[want]);
  return out;
}

std::string stringArg(napi_env env, napi_value v, const char* what) {
  if (typeOf(env, v) != napi_string) throw JsError(std::string(what) + " must be a string");
  size_t len = 0;
  NAPI_OK(napi_get_value_string_utf8(env, v, nullptr, 0, &len));
  if (len > 4096) throw JsError(std::string(what) + " is too long");
  std::string s(len, '\0');
  NAPI_OK(napi_get_value_string_utf8(env, v, &s[0], len + 1, &len));
  if (s.find('\0') != std::string::npos) throw JsError(std::string(what) + " contains a NUL byte");
  return s;
}

napi_value prop(napi_env env, napi_value obj, const char* name) {
  napi_value v;
  NAPI_OK(napi_get_named_property(env, obj, name, &v));
  return v;
}

napi_value num(napi_env env, double d) {
  napi_value v;
  NAPI_OK(napi_create_double(env, d, &v));
  return v;
}

napi_value str(napi_env env, const char* s) {
  napi_value v;
  NAPI_OK(napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v));
  return v;
}

// Runs a method body; a C++ exception becomes a thrown JavaScript Error (never a crash).
template <typename F>
napi_value guarded(napi_env env, F body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    napi_throw_error(env, "ERR_ARKIVECTOR_NATIVE", "arkivector native: out of memory");
  } catch (const std::exception& e) {
    napi_throw_error(env, "ERR_ARKIVECTOR_NATIVE", (std::string("arkivector native: ") + e.what()).c_str());
  }
  return nullptr;
}

// ---- the index ----

constexpr double MAX_DIM = 16000;
constexpr double MAX_LABEL = 4294967294.0;  // uint32, below the all-ones pattern
constexpr double MAX_ELEMENTS = 1 << 30;
constexpr double MAX_M = 2048;
constexpr double MAX_EF = 1 << 20;
constexpr double MAX_K = 1 << 20;

struct Index {
  int metric = METRIC_COSINE;
  int kernel = KERNEL_PORTABLE;
  size_t dim = 0;
  std::unique_ptr<HalfSpace> space;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> hnsw;
  // hnswlib's labels in flat arrays (labelMirror.h): synced by every call that changes a label, rebuilt
  // at a load; read by the filtered walk and the exact scan of an allowed set.
  arkivector::LabelMirror labels;
  std::vector<char> scratch;  // one encoded element (a point or a query)
  std::vector<float> query;   // the last encoded values as float32, and their inverse norm
  float invQuery = 0;
  // Searches in flight on other threads (searchAsync): counted at dispatch on the main thread, and every
  // call that changes the graph waits until none is left. Both happen on the main thread, so no search
  // starts while a change waits.
  std::mutex readersLock;
  std::condition_variable readersDone;
  size_t readers = 0;

  void waitForReaders() {
    std::unique_lock<std::mutex> lock(readersLock);
    readersDone.wait(lock, [this] { return readers == 0; });
  }

  size_t elementSize() const { return 4 + 2 * dim; }

  // Encodes float32 values (or binary16 patterns) into `scratch`; refuses NaN and infinities.
  const void* encode(napi_env env, napi_value v, const char* what) {
    bool is = false;
    NAPI_OK(napi_is_typedarray(env, v, &is));
    if (!is) throw JsError(std::string(what) + " must be a Float32Array or a Uint16Array of binary16 patterns");
    napi_typedarray_type t;
    size_t length;
    void* data;
    napi_value buf;
    size_t off;
    NAPI_OK(napi_get_typedarray_info(env, v, &t, &length, &data, &buf, &off));
    if (t != napi_float32_array && t != napi_uint16_array)
      throw JsError(std::string(what) + " must be a Float32Array or a Uint16Array of binary16 patterns");
    if (length != dim)
      throw JsError(std::string(what) + " has " + std::to_string(length) + " values, expected " + std::to_string(dim));
    uint16_t* out = reinterpret_cast<uint16_t*>(scratch.data() + 4);
    query.resize(dim);
    double qs = 0;
    if (t == napi_float32_array) {
      const float* f = static_cast<const float*>(data);
      for (size_t i = 0; i < dim; i++) {
        if (!std::isfinite(f[i])) throw JsError(std::string(what) + "[" + std::to_string(i) + "] is not finite");
        qs += (double)f[i] * f[i];
      }
      std::memcpy(query.data(), f, dim * sizeof(float));
      toHalves(f, out, dim);
    } else {
      const uint16_t* h = static_cast<const uint16_t*>(data);
      for (size_t i = 0; i < dim; i++) {
        if ((h[i] & 0x7c00) == 0x7c00)
          throw JsError(std::string(what) + "[" + std::to_string(i) + "] is not a finite binary16");
        out[i] = h[i];
        query[i] = H2F[h[i]];
        qs += (double)query[i] * query[i];
      }
    }
    invQuery = qs > 0 ? (float)(1.0 / std::sqrt(qs)) : 0.0f;
    double s = 0;
    for (size_t i = 0; i < dim; i++) {
      const double x = H2F[out[i]];
      s += x * x;
    }
    const float inv = s > 0 ? (float)(1.0 / std::sqrt(s)) : 0.0f;
    std::memcpy(scratch.data(), &inv, 4);
    return scratch.data();
  }
};

Index* unwrap(napi_env env, napi_callback_info info, size_t want, napi_value* args) {
  size_t argc = want;
  napi_value self;
  NAPI_OK(napi_get_cb_info(env, info, &argc, args, &self, nullptr));
  for (size_t i = argc; i < want; i++) NAPI_OK(napi_get_undefined(env, &args[i]));
  void* p = nullptr;
  if (napi_unwrap(env, self, &p) != napi_ok || p == nullptr) throw JsError("not a HalfIndex");
  Index* ix = static_cast<Index*>(p);
  if (!ix->hnsw) throw JsError("the index is closed");
  return ix;
}

int metricArg(napi_env env, napi_value v) {
  const std::string m = stringArg(env, v, "metric");
  if (m == "cosine") return METRIC_COSINE;
  if (m == "ip") return METRIC_IP;
  if (m == "l2") return METRIC_L2;
  throw JsError("metric must be cosine, ip or l2");
}

// A saved file's header, checked before hnswlib reads it: hnswlib trusts its own files.
// Returns the element count it holds.
size_t checkHeader(const std::string& path, const Index& ix, size_t m) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) throw JsError("cannot open " + path);
  in.seekg(0, in.end);
  const long long fileSize = (long long)in.tellg();
  in.seekg(0, in.beg);
  size_t offsetLevel0, maxElements, count, sizePer, labelOffset, offsetData, maxM, maxM0, mm, efc;
  int maxLevel;
  unsigned enter;
  double mult;
  in.read((char*)&offsetLevel0, 8).read((char*)&maxElements, 8).read((char*)&count, 8).read((char*)&sizePer, 8);
  in.read((char*)&labelOffset, 8).read((char*)&offsetData, 8).read((char*)&maxLevel, 4).read((char*)&enter, 4);
  in.read((char*)&maxM, 8).read((char*)&maxM0, 8).read((char*)&mm, 8).read((char*)&mult, 8).read((char*)&efc, 8);
  if (!in) throw JsError("the index file is too short");
  const size_t header = 8 * 6 + 4 + 4 + 8 * 5;
  const size_t links0 = maxM0 * 4 + 4;
  const bool ok = count <= MAX_ELEMENTS && offsetLevel0 == 0 && mm >= 2 && mm <= MAX_M && (m == 0 || mm == m) && maxM == mm &&
                  maxM0 == 2 * mm && offsetData == links0 && labelOffset == offsetData + ix.elementSize() &&
                  sizePer == labelOffset + sizeof(hnswlib::labeltype) && count <= maxElements &&
                  efc >= 1 && efc <= MAX_EF && std::isfinite(mult) &&
                  std::fabs(mult * std::log((double)mm) - 1.0) < 1e-9 &&
                  (long long)(header + count * sizePer + count * 4) <= fileSize &&
                  (count == 0 || (enter < count && maxLevel >= 0 && maxLevel < 64));
  if (!ok) throw JsError("the index file does not match this index (dim, metric, m) or is damaged");
  return count;
}

// After hnswlib loaded a file: the checks of loadChecks.h.
void checkLinks(const hnswlib::HierarchicalNSW<float>& h) {
  if (const char* why = arkivector::graphDamage(h, (hnswlib::labeltype)MAX_LABEL))
    throw JsError(std::string("the index file is damaged (") + why + ")");
}

// Level 0 (every element's links, vector and label: 912 B at 384 dims) on transparent huge pages where the
// kernel offers them on request (`madvise` mode, the common default): a search reads a few hundred
// elements scattered over the whole block, and the exact scan of an allowed set thousands, each on
// another 4 KiB page, so with small pages nearly every element read also misses the TLB. Blocks under
// HUGE_PAGE_MIN stay as they are (an empty or small collection must not round up to 2 MiB pages).
// A block just allocated (Written::None) faults its pages in huge once advised. One already written, after a
// load or a resize, holds small pages (realloc keeps or remaps them: a store grown block by block held 6 MiB
// of its 90 MiB level 0 at 100k × 384 on huge pages, and its exact scan of a 10 % set ran ~12 % slower than
// in a graph made at full size). They are collapsed in place (MADV_COLLAPSE, Linux 6.1+: one 2 MiB region at
// a time, so the peak stays the block). Where the kernel cannot, Written::Copy moves them once into a new
// block advised before the copy (a load: twice the block for a moment); Written::Keep leaves them (a resize).
enum class Written { None, Copy, Keep };
constexpr size_t HUGE_PAGE = (size_t)2 << 20;
constexpr size_t HUGE_PAGE_MIN = (size_t)16 << 20;
#if defined(__linux__) && !defined(MADV_COLLAPSE)
#define MADV_COLLAPSE 25
#endif

void adviseHugePages(hnswlib::HierarchicalNSW<float>& h, Written written) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const size_t bytes = h.max_elements_ * h.size_data_per_element_;
  if (bytes < HUGE_PAGE_MIN) return;
  // The whole huge pages inside [p, p + length): madvise wants page-aligned ranges.
  auto inside = [](char* p, size_t length) {
    const uintptr_t from = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    const uintptr_t to = ((uintptr_t)p + length) & ~(uintptr_t)(HUGE_PAGE - 1);
    return std::pair<void*, size_t>((void*)from, to > from ? to - from : 0);
  };
  auto advise = [&](char* p) {
    const auto [at, length] = inside(p, bytes);
    if (length > 0) madvise(at, length, MADV_HUGEPAGE);  // advice only: a refusal changes nothing
  };
  advise(h.data_level0_memory_);
  const size_t used = h.cur_element_count * h.size_data_per_element_;
  if (written == Written::None) return;
  // Under one whole huge page written, nothing to collapse: the rest faults in huge.
  const auto [at, length] = inside(h.data_level0_memory_, used);
  if (length == 0 || madvise(at, length, MADV_COLLAPSE) == 0) return;
  if (written != Written::Copy) return;
  char* copy = static_cast<char*>(malloc(bytes));
  if (copy == nullptr) return;  // keep the small pages
  advise(copy);
  std::memcpy(copy, h.data_level0_memory_, used);
  free(h.data_level0_memory_);
  h.data_level0_memory_ = copy;
#else
  (void)h;
  (void)written;
#endif
}

void finalize(napi_env, void* data, void*) {
  Index* ix = static_cast<Index*>(data);
  ix->waitForReaders();  // an environment torn down with searches in flight
  delete ix;
}

// new HalfIndex({ metric, dim, maxElements, m, efConstruction, seed, kernel?, path? })
napi_value Construct(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    size_t argc = 1;
    napi_value arg, self;
    NAPI_OK(napi_get_cb_info(env, info, &argc, &arg, &self, nullptr));
    if (argc < 1 || typeOf(env, arg) != napi_object) throw JsError("HalfIndex takes an options object");
    std::unique_ptr<Index> ix(new Index());
    ix->metric = metricArg(env, prop(env, arg, "metric"));
    ix->dim = intArg(env, prop(env, arg, "dim"), "dim", 1, MAX_DIM);
    const size_t maxElements = intArg(env, prop(env, arg, "maxElements"), "maxElements", 1, MAX_ELEMENTS);
    napi_value kv = prop(env, arg, "kernel");
    ix->kernel = DEFAULT_KERNEL;
    if (!isMissing(env, kv)) {
      const std::string name = stringArg(env, kv, "kernel");
      const int k = kernelByName(name, -1);
      if (k < 0) throw JsError("kernel must be portable, avx2 or avx512");
      ix->kernel = k < DETECTED ? k : DETECTED;  // never one the CPU cannot run
    }
    ix->space.reset(new HalfSpace(ix->metric, ix->dim, ix->kernel));
    ix->scratch.assign(ix->elementSize(), 0);
    napi_value pv = prop(env, arg, "path");
    if (!isMissing(env, pv)) {
      const std::string path = stringArg(env, pv, "path");
      napi_value mv = prop(env, arg, "m");
      const size_t m = isMissing(env, mv) ? 0 : intArg(env, mv, "m", 2, MAX_M);
      const size_t count = checkHeader(path, *ix, m);
      // Never the capacity saved in the file (a damaged one could ask for any amount of memory).
      const size_t capacity = std::max<size_t>(std::max<size_t>(count, maxElements), 16);
      ix->hnsw.reset(new hnswlib::HierarchicalNSW<float>(ix->space.get(), path, false, capacity, true));
      checkLinks(*ix->hnsw);
      ix->labels.rebuild(*ix->hnsw);
      adviseHugePages(*ix->hnsw, Written::Copy);
    } else {
      const size_t m = intArg(env, prop(env, arg, "m"), "m", 2, MAX_M);
      const size_t efc = intArg(env, prop(env, arg, "efConstruction"), "efConstruction", 1, MAX_EF);
      const size_t seed = intArg(env, prop(env, arg, "seed"), "seed", 0, 4294967295.0);
      ix->hnsw.reset(new hnswlib::HierarchicalNSW<float>(ix->space.get(), maxElements, m, efc, seed, true));
      adviseHugePages(*ix->hnsw, Written::None);
    }
    Index* raw = ix.release();
    if (napi_wrap(env, self, raw, finalize, nullptr, nullptr) != napi_ok) {
      delete raw;
      throw JsError("cannot wrap the index");
    }
    return self;
  });
}

// addPoint(vector: Float32Array | Uint16Array, label, replaceDeleted = false)
napi_value AddPoint(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[3];
    Index* ix = unwrap(env, info, 3, a);
    ix->waitForReaders();
    const void* data = ix->encode(env, a[0], "vector");
    const size_t label = intArg(env, a[1], "label", 0, MAX_LABEL);
    bool replace = false;
    if (!isMissing(env, a[2])) NAPI_OK(napi_get_value_bool(env, a[2], &replace));
    auto& h = *ix->hnsw;
    const bool reuses = replace && h.getDeletedCount() > 0;
    if (!reuses && h.cur_element_count >= h.max_elements_) {
      // An update of an existing label needs no room.
      std::unique_lock<std::mutex> lock(h.label_lookup_lock);
      if (h.label_lookup_.find(label) == h.label_lookup_.end())
        throw JsError("the index is full (" + std::to_string(h.max_elements_) + " elements): resize it first");
    }
    bool present;
    {
      std::unique_lock<std::mutex> lock(h.label_lookup_lock);
      present = h.label_lookup_.find(label) != h.label_lookup_.end();
    }
    // A label the index holds is updated in its own slot: hnswlib's replacement would take another deleted
    // slot for it and leave the old element answering under the same label (a ghost of the old vector).
    if (present) {
      if (h.isMarkedDeleted(h.label_lookup_.at(label))) h.unmarkDelete(label);
      h.addPoint(data, label, false);
    } else if (reuses) {
      // Reusing a deleted slot: arkivector's replacement, which repairs the old neighbourhood too.
      arkivector::replaceDeleted(h, data, label);
    } else {
      h.addPoint(data, label, false);
    }
    ix->labels.sync(h, label);
    return nullptr;
  });
}

napi_value MarkDelete(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[1];
    Index* ix = unwrap(env, info, 1, a);
    ix->waitForReaders();
    const size_t label = intArg(env, a[0], "label", 0, MAX_LABEL);
    ix->hnsw->markDelete(label);
    ix->labels.sync(*ix->hnsw, label);
    return nullptr;
  });
}

// hnswlib's resizeIndex frees the element arrays it replaces (level 0 when it moves, the link-list
// pointers, levels and per-element mutexes, the visited list). glibc keeps those pages when they came
// from its heap rather than their own mapping (its mmap threshold rises with every large free), so RSS
// would keep each old copy: give the free pages back after each resize (growth is geometric, so this
// runs O(log n) times).
void releaseFreedPages() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

napi_value Resize(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[1];
    Index* ix = unwrap(env, info, 1, a);
    ix->waitForReaders();
    const size_t n = intArg(env, a[0], "maxElements", 1, MAX_ELEMENTS);
    if (n < ix->hnsw->cur_element_count) throw JsError("cannot resize below the current element count");
    ix->hnsw->resizeIndex(n);
    // No copy where the kernel cannot collapse: a growth must not hold the block twice.
    adviseHugePages(*ix->hnsw, Written::Keep);
    releaseFreedPages();
    return nullptr;
  });
}

// Output buffers shared by search and exactSearch: labels, distances, stats [count, checks].
struct Outputs {
  uint32_t* labels;
  float* distances;
  int32_t* stats;
  size_t room;
};

Outputs outputsArg(napi_env env, napi_value labels, napi_value distances, napi_value stats, size_t k) {
  Typed l = typedArg(env, labels, napi_uint32_array, "labels");
  Typed d = typedArg(env, distances, napi_float32_array, "distances");
  Typed s = typedArg(env, stats, napi_int32_array, "stats");
  if (s.length < 2) throw JsError("stats must hold 2 entries");
  if (l.length < k || d.length < k) throw JsError("labels and distances must hold k entries");
  return {static_cast<uint32_t*>(l.data), static_cast<float*>(d.data), static_cast<int32_t*>(s.data), k};
}

SlotFilter filterArg(napi_env env, napi_value labelSlot, napi_value bits) {
  SlotFilter f;
  if (!isMissing(env, labelSlot)) {
    Typed t = typedArg(env, labelSlot, napi_int32_array, "labelSlot");
    f.labelSlot = static_cast<const int32_t*>(t.data);
    f.labels = t.length;
  }
  if (!isMissing(env, bits)) {
    if (f.labelSlot == nullptr) throw JsError("an allowed bitset needs the labelSlot map");
    Typed t = typedArg(env, bits, napi_uint8_array, "allowed");
    f.bits = static_cast<const uint8_t*>(t.data);
    f.slots = t.length * 8;
  }
  return f;
}

// The arguments search and filteredSearch share: (query, k, ef, labels, distances, stats, labelSlot?,
// allowed?), read and checked in that order.
struct WalkArgs {
  const void* q;
  size_t k, ef;
  Outputs out;
  SlotFilter f;
};

WalkArgs walkArgs(napi_env env, Index* ix, napi_value* a) {
  const void* q = ix->encode(env, a[0], "query");
  const size_t k = intArg(env, a[1], "k", 1, MAX_K);
  const size_t ef = intArg(env, a[2], "ef", 1, MAX_EF);
  Outputs out = outputsArg(env, a[3], a[4], a[5], k);
  return {q, k, ef, out, filterArg(env, a[6], a[7])};
}

// The unfiltered k nearest (unfilteredWalk.h, below), re-ranked by the float32 query's distances: search
// without a filter, and searchAsync.
void walkHits(Index& ix, const void* q, const float* query, float invQuery, size_t k, size_t ef,
              std::vector<std::pair<float, uint32_t>>& hits);

// Writes sorted hits into the outputs (room for k checked), and their count into stats[0].
void writeHits(const std::vector<std::pair<float, uint32_t>>& hits, Outputs& out) {
  const size_t n = hits.size();
  for (size_t i = 0; i < n; i++) {
    out.labels[i] = hits[i].second;
    out.distances[i] = hits[i].first;
  }
  out.stats[0] = (int32_t)n;
}

// search(query, k, ef, labels: Uint32Array, distances: Float32Array, stats: Int32Array,
//        labelSlot?: Int32Array, allowed?: Uint8Array) → writes stats[0] = hits, stats[1] = filter checks
napi_value Search(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[8];
    Index* ix = unwrap(env, info, 8, a);
    auto [q, k, ef, out, f] = walkArgs(env, ix, a);
    auto& h = *ix->hnsw;
    if (f.labelSlot == nullptr) {
      std::vector<std::pair<float, uint32_t>> hits;
      walkHits(*ix, q, ix->query.data(), ix->invQuery, k, ef, hits);
      writeHits(hits, out);
      out.stats[1] = 0;
      return nullptr;
    }
    h.ef_ = ef;
    auto res = h.searchKnn(q, k, &f);
    // The walk ranks by the binary16 query; the answer carries the float32 query's distances (what an
    // exact scan reports), re-sorted by them.
    std::vector<std::pair<float, uint32_t>> hits;
    hits.reserve(res.size());
    while (!res.empty()) {
      const hnswlib::labeltype label = res.top().second;
      res.pop();
      std::unique_lock<std::mutex> lock(h.label_lookup_lock);
      auto it = h.label_lookup_.find(label);
      if (it == h.label_lookup_.end()) continue;  // cannot happen for a checked index; never dereference end()
      const hnswlib::tableint id = it->second;
      lock.unlock();
      hits.emplace_back(ix->space->exactDistance(ix->query.data(), ix->invQuery, h.getDataByInternalId(id)),
                        (uint32_t)label);
    }
    std::sort(hits.begin(), hits.end());
    writeHits(hits, out);
    out.stats[1] = (int32_t)(f.calls > 0x7fffffff ? 0x7fffffff : f.calls);
    return nullptr;
  });
}

}  // namespace

#include "filteredSearch.h"
#include "unfilteredWalk.h"

namespace {

// exactSearch(query, k, labels, distances, stats, candidates?: Uint32Array of labels): every element not
// marked deleted, or the candidates among them; ties by label.
// The exact top-k of exactSearch and exactAsync: every element not deleted (`all`), or the candidates'
// (labels) elements, looked up first, each once, then read in memory order with prefetch (filteredSearch.h
// scanIds); ties by label. `checks`: the elements or candidates considered.
std::priority_queue<std::pair<float, uint32_t>> exactTop(Index& ix, const float* query, float invQuery, size_t k,
                                                         bool all, const uint32_t* candidates, size_t count,
                                                         size_t& checks) {
  auto& h = *ix.hnsw;
  std::priority_queue<std::pair<float, uint32_t>> top;
  auto distance = [&](const void* x) { return ix.space->exactDistance(query, invQuery, x); };
  if (all) {
    const size_t n = h.cur_element_count;
    for (size_t id = 0; id < n; id++) {
      const uint32_t label = ix.labels.labelOf((hnswlib::tableint)id);
      if (label == arkivector::LabelMirror::NONE) continue;  // deleted
      arkivector_filtered::keepNearest(top, k, distance(h.getDataByInternalId((hnswlib::tableint)id)), label);
    }
    checks = n;
    return top;
  }
  std::vector<hnswlib::tableint> ids;
  arkivector_filtered::liveIds(
      h.cur_element_count, count, [&](size_t i) { return ix.labels.idOf(h, candidates[i]); }, ids);
  arkivector_filtered::scanIds(h, ids, k, distance, [&](hnswlib::tableint id) { return ix.labels.labelOf(id); }, top);
  checks = count;
  return top;
}

napi_value ExactSearch(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[6];
    Index* ix = unwrap(env, info, 6, a);
    ix->encode(env, a[0], "query");
    const size_t k = intArg(env, a[1], "k", 1, MAX_K);
    Outputs out = outputsArg(env, a[2], a[3], a[4], k);
    size_t checks = 0;
    std::priority_queue<std::pair<float, uint32_t>> top;
    if (isMissing(env, a[5])) {
      top = exactTop(*ix, ix->query.data(), ix->invQuery, k, true, nullptr, 0, checks);
    } else {
      Typed c = typedArg(env, a[5], napi_uint32_array, "candidates");
      top = exactTop(*ix, ix->query.data(), ix->invQuery, k, false, static_cast<const uint32_t*>(c.data), c.length,
                     checks);
    }
    const size_t n = top.size();
    for (size_t i = n; i-- > 0;) {
      out.labels[i] = top.top().second;
      out.distances[i] = top.top().first;
      top.pop();
    }
    out.stats[0] = (int32_t)n;
    out.stats[1] = (int32_t)(checks > 0x7fffffff ? 0x7fffffff : checks);
    return nullptr;
  });
}

// The k nearest of a walk's heap (internal ids, by binary16 distance) into hits: labels with the float32
// query's distances, nearest first, as Search and FilteredSearch re-rank them.
template <typename Heap>
void rerank(Index& ix, const float* query, float invQuery, size_t k, Heap& top,
            std::vector<std::pair<float, uint32_t>>& hits) {
  auto& h = *ix.hnsw;
  while (top.size() > k) top.pop();
  hits.reserve(top.size());
  for (; !top.empty(); top.pop()) {
    const hnswlib::tableint id = top.top().second;
    hits.emplace_back(ix.space->exactDistance(query, invQuery, h.getDataByInternalId(id)),
                      (uint32_t)h.getExternalLabel(id));
  }
  std::sort(hits.begin(), hits.end());
}

// The core of filteredSearch (plain values, so it can run on a thread): the walk's k nearest allowed
// elements with the float32 query's distances, nearest first. `q` is the binary16 query (an encoded
// element); the graph must not change while it runs.
// `f` is a SlotFilter (filteredSearch) or LabelBits (filteredAsync): anything with allows(label).
template <typename Filter>
std::vector<std::pair<float, uint32_t>> filteredHits(Index& ix, const void* q, const float* query, float invQuery,
                                                     size_t k, size_t ef, size_t farEf,
                                                     const arkivector_filtered::Near& near, size_t passing,
                                                     const Filter& f, arkivector_filtered::Stats& st) {
  auto& h = *ix.hnsw;
  const arkivector::LabelMirror& labels = ix.labels;
  auto allowed = [&](hnswlib::tableint id) {
    const uint32_t label = labels.labelOf(id);
    return label != arkivector::LabelMirror::NONE && f.allows(label);
  };
  auto top = arkivector_filtered::search(h, q, std::max(ef, k), farEf == 0 ? 0 : std::max(farEf, k), near,
                                         passing, allowed, st);
  std::vector<std::pair<float, uint32_t>> hits;
  rerank(ix, query, invQuery, k, top, hits);
  return hits;
}

// The filtered walk's optional settings, as filteredSearch and filteredAsync take them: farEf (default ef;
// 0: no answer where the descent does not land among allowed elements) and nearScale (default 0), with
// the narrowed width's floor min(ef, 2k).
struct WalkTuning {
  size_t farEf;
  arkivector_filtered::Near near;
};

WalkTuning walkTuning(napi_env env, napi_value farEf, napi_value nearScale, size_t ef, size_t k) {
  WalkTuning t{isMissing(env, farEf) ? std::max(ef, k) : intArg(env, farEf, "farEf", 0, MAX_EF), {}};
  if (!isMissing(env, nearScale)) t.near.scale = numberArg(env, nearScale, "nearScale");
  if (!std::isfinite(t.near.scale) || t.near.scale < 0 || t.near.scale > 1e6) throw JsError("nearScale must be ≥ 0");
  t.near.minEf = std::min(std::max(ef, k), 2 * k);
  return t;
}

// filteredSearch(query, k, ef, labels, distances, stats, labelSlot, allowed, passing, farEf?, nearScale?): the
// ACORN-style walk of filteredSearch.h over the allowed set (`passing` its size, an estimate is fine), at
// width farEf (default ef; 0: no answer) when the descent does not land among allowed elements, and where
// it does, narrowed by the allowed share around the landing × nearScale (default 0: not narrowed; at
// least min(ef, 2k)); the answer carries
// the float32 query's distances, as search's does. stats[1] = allowed tests made; stats[2], when there,
// = 1 if the descent landed among allowed elements, else 0.
napi_value FilteredSearch(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[11];
    Index* ix = unwrap(env, info, 11, a);
    auto [q, k, ef, out, f] = walkArgs(env, ix, a);
    if (f.labelSlot == nullptr) throw JsError("filteredSearch needs the labelSlot map");
    const size_t passing = intArg(env, a[8], "passing", 0, MAX_ELEMENTS);
    const WalkTuning tuning = walkTuning(env, a[9], a[10], ef, k);
    const bool landedRoom = typedArg(env, a[5], napi_int32_array, "stats").length >= 3;
    arkivector_filtered::Stats st;
    const auto hits =
        filteredHits(*ix, q, ix->query.data(), ix->invQuery, k, ef, tuning.farEf, tuning.near, passing, f, st);
    writeHits(hits, out);
    out.stats[1] = (int32_t)std::min<size_t>(st.checks, 0x7fffffff);
    if (landedRoom) out.stats[2] = st.landed ? 1 : 0;
    return nullptr;
  });
}

napi_value Save(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[1];
    Index* ix = unwrap(env, info, 1, a);
    const std::string path = stringArg(env, a[0], "path");
    {
      std::ofstream probe(path, std::ios::binary | std::ios::trunc);
      if (!probe.is_open()) throw JsError("cannot write " + path);
    }
    ix->hnsw->saveIndex(path);
    std::ifstream check(path, std::ios::binary | std::ios::ate);
    if (!check.is_open() || check.tellg() <= 0) throw JsError("writing " + path + " failed");
    return nullptr;
  });
}

// The vector stored under a label, as binary16 patterns (for tests and `get`).
napi_value GetHalves(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[2];
    Index* ix = unwrap(env, info, 2, a);
    const size_t label = intArg(env, a[0], "label", 0, MAX_LABEL);
    Typed out = typedArg(env, a[1], napi_uint16_array, "out");
    if (out.length < ix->dim) throw JsError("out must hold dim entries");
    auto& h = *ix->hnsw;
    std::unique_lock<std::mutex> lock(h.label_lookup_lock);
    auto it = h.label_lookup_.find(label);
    if (it == h.label_lookup_.end() || h.isMarkedDeleted(it->second)) throw JsError("label not found");
    std::memcpy(out.data, halvesOf(h.getDataByInternalId(it->second)), 2 * ix->dim);
    return nullptr;
  });
}

napi_value Info(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[1];
    Index* ix = unwrap(env, info, 0, a);
    auto& h = *ix->hnsw;
    napi_value o;
    NAPI_OK(napi_create_object(env, &o));
    NAPI_OK(napi_set_named_property(env, o, "count", num(env, (double)h.cur_element_count)));
    NAPI_OK(napi_set_named_property(env, o, "capacity", num(env, (double)h.max_elements_)));
    NAPI_OK(napi_set_named_property(env, o, "deleted", num(env, (double)h.getDeletedCount())));
    NAPI_OK(napi_set_named_property(env, o, "kernel", str(env, KERNEL_NAMES[ix->kernel])));
    NAPI_OK(napi_set_named_property(env, o, "elementBytes", num(env, (double)h.size_data_per_element_)));
    return o;
  });
}

// cpu() → { detected, default }: the best kernel this CPU runs and the one new indexes use.
napi_value Cpu(napi_env env, napi_callback_info) {
  return guarded(env, [&]() -> napi_value {
    napi_value o;
    NAPI_OK(napi_create_object(env, &o));
    NAPI_OK(napi_set_named_property(env, o, "detected", str(env, KERNEL_NAMES[DETECTED])));
    NAPI_OK(napi_set_named_property(env, o, "default", str(env, KERNEL_NAMES[DEFAULT_KERNEL])));
    return o;
  });
}

// halfToFloat / floatToHalf exposed for tests (one value at a time).
napi_value EncodeHalf(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    size_t argc = 1;
    napi_value v;
    NAPI_OK(napi_get_cb_info(env, info, &argc, &v, nullptr, nullptr));
    const double d = numberArg(env, v, "value");
    if (!std::isfinite(d)) throw JsError("value is not finite");
    return num(env, floatToHalf((float)d));
  });
}

// ---- searches on threads (issue 23 item 5) ----
// searchAsync / exactAsync run the unfiltered walk and the exact scan on libuv's thread pool and resolve
// a Promise with an ArrayBuffer: n uint32 labels, then their n float32 distances (the float32 query's,
// nearest first, as search and exactSearch write them). The query is encoded on the main thread at
// dispatch, into the work's own copy; the reader count taken then makes addPoint, markDelete and
// resize wait for the search to finish, so it reads the graph as it was at dispatch. A reference to
// the index object keeps it alive until the Promise settles.

struct AsyncSearch {
  napi_async_work work = nullptr;
  napi_deferred deferred = nullptr;
  napi_ref self = nullptr;
  Index* ix = nullptr;
  bool exact = false;
  size_t k = 0, ef = 0;
  std::vector<char> element;  // the binary16 query (inverse norm, halves)
  std::vector<float> query;   // the float32 query
  float invQuery = 0;
  std::vector<uint32_t> candidates;
  bool hasCandidates = false;
  std::vector<std::pair<float, uint32_t>> hits;
  std::string error;
  // filteredAsync: the allowed labels as a bitset the work owns, the walk's arguments, and its stats.
  bool filtered = false;
  std::vector<uint8_t> labelBits;
  size_t passing = 0;
  WalkTuning tuning{};
  size_t checks = 0;
  bool landed = false;
};

// searchKnn's unfiltered walk at width ef (hnswlib's own reads the shared ef_; unfilteredWalk.h walks level
// 0 as searchBaseLayerST does), re-ranked by the float32 query's distances.
void walkHits(Index& ix, const void* q, const float* query, float invQuery, size_t k, size_t ef,
              std::vector<std::pair<float, uint32_t>>& hits) {
  auto& h = *ix.hnsw;
  if (h.cur_element_count == 0) return;
  auto dist = [&](hnswlib::tableint id) { return h.fstdistfunc_(q, h.getDataByInternalId(id), h.dist_func_param_); };
  const hnswlib::tableint cur = arkivector_filtered::descend(h, dist).first;
  const size_t width = std::max(ef, k);
  auto top = h.getDeletedCount() == 0 ? arkivector_walk::level0<true>(h, cur, q, width)
                                      : arkivector_walk::level0<false>(h, cur, q, width);
  rerank(ix, query, invQuery, k, top, hits);
}

void knnHits(AsyncSearch& w) { walkHits(*w.ix, w.element.data(), w.query.data(), w.invQuery, w.k, w.ef, w.hits); }

// exactSearch's scan (exactTop), on a thread.
void exactHits(AsyncSearch& w) {
  size_t checks = 0;
  auto top = exactTop(*w.ix, w.query.data(), w.invQuery, w.k, !w.hasCandidates, w.candidates.data(),
                      w.candidates.size(), checks);
  w.hits.resize(top.size());
  for (size_t i = top.size(); i-- > 0; top.pop()) w.hits[i] = top.top();
}

// An allowed set as a bitset over labels, which a filteredAsync work owns (copied when dispatched).
struct LabelBits {
  const std::vector<uint8_t>& bits;
  bool allows(uint32_t label) const {
    return (size_t)label < bits.size() * 8 && ((bits[label >> 3] >> (label & 7)) & 1) != 0;
  }
};

// filteredSearch's core (filteredHits, with its arguments as FilteredSearch reads them) over the labels set
// in the work's own bitset.
void filteredHits(AsyncSearch& w) {
  arkivector_filtered::Stats st;
  w.hits = filteredHits(*w.ix, w.element.data(), w.query.data(), w.invQuery, w.k, w.ef, w.tuning.farEf,
                        w.tuning.near, w.passing, LabelBits{w.labelBits}, st);
  w.checks = st.checks;
  w.landed = st.landed;
}

void asyncExecute(napi_env, void* data) {
  AsyncSearch& w = *static_cast<AsyncSearch*>(data);
  try {
    if (w.exact)
      exactHits(w);
    else if (w.filtered)
      filteredHits(w);
    else
      knnHits(w);
  } catch (const std::bad_alloc&) {
    w.error = "out of memory";
  } catch (const std::exception& e) {
    w.error = e.what();
  }
  // Notified under the lock: a finalizer waiting for the count may delete the index once it is released.
  std::lock_guard<std::mutex> lock(w.ix->readersLock);
  w.ix->readers--;
  w.ix->readersDone.notify_all();
}

void asyncComplete(napi_env env, napi_status status, void* data) {
  std::unique_ptr<AsyncSearch> w(static_cast<AsyncSearch*>(data));
  napi_value result = nullptr;
  std::string error = status == napi_ok ? w->error : "the search was cancelled";
  if (error.empty()) {
    const size_t n = w->hits.size();
    void* bytes = nullptr;
    // filteredAsync's answer ends with two more uint32: the allowed tests made, and landed (1 / 0).
    if (napi_create_arraybuffer(env, 8 * n + (w->filtered ? 8 : 0), &bytes, &result) == napi_ok) {
      uint32_t* labels = static_cast<uint32_t*>(bytes);
      float* distances = reinterpret_cast<float*>(labels + n);
      for (size_t i = 0; i < n; i++) {
        labels[i] = w->hits[i].second;
        distances[i] = w->hits[i].first;
      }
      if (w->filtered) {
        labels[2 * n] = (uint32_t)std::min<size_t>(w->checks, 0x7fffffff);
        labels[2 * n + 1] = w->landed ? 1 : 0;
      }
    } else {
      error = "cannot allocate the answer";
    }
  }
  if (error.empty()) {
    napi_resolve_deferred(env, w->deferred, result);
  } else {
    napi_value code, message, err;
    napi_create_string_utf8(env, "ERR_ARKIVECTOR_NATIVE", NAPI_AUTO_LENGTH, &code);
    napi_create_string_utf8(env, ("arkivector native: " + error).c_str(), NAPI_AUTO_LENGTH, &message);
    napi_create_error(env, code, message, &err);
    napi_reject_deferred(env, w->deferred, err);
  }
  napi_delete_reference(env, w->self);
  napi_delete_async_work(env, w->work);
}

// Checks the arguments and encodes the query on the main thread, counts the reader, queues the work.
napi_value dispatch(napi_env env, napi_value self, Index* ix, std::unique_ptr<AsyncSearch> w, napi_value query) {
  ix->encode(env, query, "query");
  w->ix = ix;
  w->element = ix->scratch;
  w->query = ix->query;
  w->invQuery = ix->invQuery;
  napi_value promise, name;
  NAPI_OK(napi_create_promise(env, &w->deferred, &promise));
  NAPI_OK(napi_create_string_utf8(env, "arkivector.search", NAPI_AUTO_LENGTH, &name));
  NAPI_OK(napi_create_reference(env, self, 1, &w->self));
  if (napi_create_async_work(env, nullptr, name, asyncExecute, asyncComplete, w.get(), &w->work) != napi_ok) {
    napi_delete_reference(env, w->self);
    throw JsError("cannot queue the search");
  }
  {
    std::lock_guard<std::mutex> lock(ix->readersLock);
    ix->readers++;
  }
  if (napi_queue_async_work(env, w->work) != napi_ok) {
    {
      std::lock_guard<std::mutex> lock(ix->readersLock);
      ix->readers--;
    }
    napi_delete_async_work(env, w->work);
    napi_delete_reference(env, w->self);
    throw JsError("cannot queue the search");
  }
  w.release();  // asyncComplete owns it
  return promise;
}

napi_value thisOf(napi_env env, napi_callback_info info) {
  napi_value self;
  size_t argc = 0;
  NAPI_OK(napi_get_cb_info(env, info, &argc, nullptr, &self, nullptr));
  return self;
}

// searchAsync(query, k, ef) → Promise<ArrayBuffer>: the unfiltered walk, on a thread.
napi_value SearchAsync(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[3];
    Index* ix = unwrap(env, info, 3, a);
    std::unique_ptr<AsyncSearch> w(new AsyncSearch());
    w->k = intArg(env, a[1], "k", 1, MAX_K);
    w->ef = intArg(env, a[2], "ef", 1, MAX_EF);
    return dispatch(env, thisOf(env, info), ix, std::move(w), a[0]);
  });
}

// exactAsync(query, k, candidates?: Uint32Array of labels) → Promise<ArrayBuffer>: the exact scan, on a
// thread (the candidates are copied at dispatch).
napi_value ExactAsync(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[3];
    Index* ix = unwrap(env, info, 3, a);
    std::unique_ptr<AsyncSearch> w(new AsyncSearch());
    w->exact = true;
    w->k = intArg(env, a[1], "k", 1, MAX_K);
    if (!isMissing(env, a[2])) {
      Typed c = typedArg(env, a[2], napi_uint32_array, "candidates");
      const uint32_t* labels = static_cast<const uint32_t*>(c.data);
      w->candidates.assign(labels, labels + c.length);
      w->hasCandidates = true;
    }
    return dispatch(env, thisOf(env, info), ix, std::move(w), a[0]);
  });
}

// filteredAsync(query, k, ef, allowedLabels: Uint8Array, passing, farEf?, nearScale?) → Promise<ArrayBuffer>:
// filteredSearch's walk on a thread, over the labels whose bit is set in allowedLabels (a bitset over
// labels, copied at dispatch, so the thread reads nothing of the caller's). farEf and nearScale as
// filteredSearch takes them. The answer: n labels, n distances, then [allowed tests, landed].
napi_value FilteredAsync(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() -> napi_value {
    napi_value a[7];
    Index* ix = unwrap(env, info, 7, a);
    std::unique_ptr<AsyncSearch> w(new AsyncSearch());
    w->filtered = true;
    w->k = intArg(env, a[1], "k", 1, MAX_K);
    w->ef = intArg(env, a[2], "ef", 1, MAX_EF);
    Typed bits = typedArg(env, a[3], napi_uint8_array, "allowedLabels");
    const uint8_t* b = static_cast<const uint8_t*>(bits.data);
    w->labelBits.assign(b, b + bits.length);
    w->passing = intArg(env, a[4], "passing", 0, MAX_ELEMENTS);
    w->tuning = walkTuning(env, a[5], a[6], w->ef, w->k);
    return dispatch(env, thisOf(env, info), ix, std::move(w), a[0]);
  });
}

// mallocStats() → { heap, inUse, free, mmapped } in bytes (glibc's mallinfo2; all 0 elsewhere): what the
// memory measurement attributes between live native allocations and allocator slack.
napi_value MallocStats(napi_env env, napi_callback_info) {
  return guarded(env, [&]() -> napi_value {
    double heap = 0, inUse = 0, free = 0, mmapped = 0;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    const struct mallinfo2 m = mallinfo2();
    heap = (double)m.arena;
    inUse = (double)m.uordblks;
    free = (double)m.fordblks;
    mmapped = (double)m.hblkhd;
#endif
    napi_value o;
    NAPI_OK(napi_create_object(env, &o));
    NAPI_OK(napi_set_named_property(env, o, "heap", num(env, heap)));
    NAPI_OK(napi_set_named_property(env, o, "inUse", num(env, inUse)));
    NAPI_OK(napi_set_named_property(env, o, "free", num(env, free)));
    NAPI_OK(napi_set_named_property(env, o, "mmapped", num(env, mmapped)));
    return o;
  });
}

// trimMalloc(): gives the C heap's free pages back to the system (releaseFreedPages).
napi_value TrimMalloc(napi_env env, napi_callback_info) {
  return guarded(env, [&]() -> napi_value {
    releaseFreedPages();
    return nullptr;
  });
}

std::once_flag INIT_ONCE;

// Process-wide tables and the kernel choice, once (the addon loads again in every worker thread).
void initOnce() {
  for (uint32_t i = 0; i < 65536; i++) H2F[i] = halfToFloat((uint16_t)i);
  DETECTED = detectKernel();
  DEFAULT_KERNEL = DETECTED;
  const char* forced = std::getenv("ARKIVECTOR_SIMD");
  if (forced != nullptr) {
    const int k = kernelByName(forced, DETECTED);
    DEFAULT_KERNEL = k < DETECTED ? k : DETECTED;
  }
}

napi_value Init(napi_env env, napi_value exports) {
  std::call_once(INIT_ONCE, initOnce);
  napi_property_descriptor methods[] = {
      {"addPoint", nullptr, AddPoint, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"markDelete", nullptr, MarkDelete, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"resize", nullptr, Resize, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"search", nullptr, Search, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"exactSearch", nullptr, ExactSearch, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"filteredSearch", nullptr, FilteredSearch, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"save", nullptr, Save, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"getHalves", nullptr, GetHalves, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"info", nullptr, Info, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"searchAsync", nullptr, SearchAsync, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"exactAsync", nullptr, ExactAsync, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"filteredAsync", nullptr, FilteredAsync, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_value cls;
  if (napi_define_class(env, "HalfIndex", NAPI_AUTO_LENGTH, Construct, nullptr,
                        sizeof(methods) / sizeof(methods[0]), methods, &cls) != napi_ok)
    return nullptr;
  napi_set_named_property(env, exports, "HalfIndex", cls);
  napi_value fn;
  napi_create_function(env, "cpu", NAPI_AUTO_LENGTH, Cpu, nullptr, &fn);
  napi_set_named_property(env, exports, "cpu", fn);
  napi_create_function(env, "encodeHalf", NAPI_AUTO_LENGTH, EncodeHalf, nullptr, &fn);
  napi_set_named_property(env, exports, "encodeHalf", fn);
  napi_create_function(env, "trimMalloc", NAPI_AUTO_LENGTH, TrimMalloc, nullptr, &fn);
  napi_set_named_property(env, exports, "trimMalloc", fn);
  napi_create_function(env, "mallocStats", NAPI_AUTO_LENGTH, MallocStats, nullptr, &fn);
  napi_set_named_property(env, exports, "mallocStats", fn);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
