// The distance kernels, one set per instruction set (portable C++, F16C + AVX2 + FMA, AVX-512F), and
// their choice at run time: each SIMD function carries its own target attribute rather than the whole
// build being compiled for an instruction set, so one build runs on any x86-64 (or other) CPU, takes the
// best set the CPU and its OS support, and never dies with an illegal instruction.

#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "half.h"

#if defined(__x86_64__) || defined(__i386__)
#define ARKIVECTOR_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace arkivector {

enum Kernel { KERNEL_PORTABLE = 0, KERNEL_AVX2 = 1, KERNEL_AVX512 = 2 };
inline const char* const KERNEL_NAMES[] = {"portable", "avx2", "avx512"};

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

// ---- portable ----

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
// ---- F16C + AVX2 + FMA ----

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

// ---- AVX-512F (with F16C and FMA) ----

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

// ---- dispatch ----

// [kernel], in the order of Kernel; a CPU that is not x86 runs the portable set under every name.
inline const Kernels KERNELS[] = {
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
inline int detectKernel() {
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

inline int DETECTED = KERNEL_PORTABLE;
// ARKIVECTOR_SIMD=portable|avx2|avx512 lowers the default (never above what the CPU runs).
inline int DEFAULT_KERNEL = KERNEL_PORTABLE;

inline int kernelByName(const std::string& name, int fallback) {
  for (int i = 0; i < 3; i++)
    if (name == KERNEL_NAMES[i]) return i;
  return fallback;
}

/** Sets DETECTED and DEFAULT_KERNEL; once per process, before any index exists. */
inline void initKernels() {
  DETECTED = detectKernel();
  DEFAULT_KERNEL = DETECTED;
  const char* forced = std::getenv("ARKIVECTOR_SIMD");
  if (forced != nullptr) {
    const int k = kernelByName(forced, DETECTED);
    DEFAULT_KERNEL = k < DETECTED ? k : DETECTED;
  }
}

// ---- encoding ----

// Float32 values to binary16 patterns, as floatToHalf rounds them, 8 at a time with F16C where the default
// kernel is a SIMD one: the hardware rounds to nearest even as floatToHalf does, and gives infinity where
// floatToHalf saturates (finite inputs only), which the fix-up below turns into ±65504. The scalar rounding
// is most of what a query's encoding costs.
#ifdef ARKIVECTOR_X86
__attribute__((target("avx2,f16c,fma"))) inline void toHalvesF16c(const float* f, uint16_t* out, size_t n) {
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

inline void toHalves(const float* f, uint16_t* out, size_t n) {
#ifdef ARKIVECTOR_X86
  if (DEFAULT_KERNEL >= KERNEL_AVX2) return toHalvesF16c(f, out, n);
#endif
  for (size_t i = 0; i < n; i++) out[i] = floatToHalf(f[i]);
}

}  // namespace arkivector
