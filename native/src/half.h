// binary16 <-> float32, portable: the codec every kernel and the index share. Decoding goes through a
// table of the 65,536 patterns (filled once per process by initHalfTable); encoding rounds to nearest
// even as F16C does, so the SIMD encoder in kernels.h and this one agree bit for bit.

#pragma once

#include <cstdint>
#include <cstring>

namespace arkivector {

/** Every binary16 pattern's float32 value (initHalfTable). */
inline float H2F[65536];

inline float halfToFloat(uint16_t h) {
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
inline uint16_t floatToHalf(float x) {
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

/** Fills H2F; once per process, before any index exists. */
inline void initHalfTable() {
  for (uint32_t i = 0; i < 65536; i++) H2F[i] = halfToFloat((uint16_t)i);
}

}  // namespace arkivector
