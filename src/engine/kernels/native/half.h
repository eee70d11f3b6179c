// Frozen base weights kept in the 16 bits the checkpoint stored them in (bf16 or IEEE f16). The
// kernels that read weights (gemm's B operand, gemm_rows_nt's W, the embedding table) are templates
// over the element type and widen each value to float32 as they load it. Both widenings are exact,
// so a kernel run on 16-bit weights computes with the very floats it would read from a widened
// copy: same arithmetic, same order, same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "simd.h"

#if defined(__AVX512F__) || defined(__F16C__)
// GCC 12 warns that _mm512_undefined_ps() (the unused pass-through of cvtph) is uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace ck {

// Distinct element types, so overloads pick the widening (both are 16 raw bits).
struct bf16 {
  uint16_t bits;
};
struct f16 {
  uint16_t bits;
};

// Codes shared with the JavaScript side (kernels/halfArray.ts HALF_CODES).
enum class HalfType { BF16 = 1, F16 = 2 };

// bf16 is the top half of a float32: a 16-bit shift.
inline float widen(bf16 h) {
  const uint32_t b = static_cast<uint32_t>(h.bits) << 16;
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// Exact IEEE half -> float (subnormals, infinities; NaN stays NaN with its sign).
inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (mant << 13) | (mant != 0 ? 0x400000 : 0);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // Subnormal half: normalise into a float.
    int e = -1;
    do {
      mant <<= 1;
      e++;
    } while ((mant & 0x400) == 0);
    bits = sign | static_cast<uint32_t>(112 - e) << 23 | ((mant & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline float widen(f16 h) { return half_to_float(h.bits); }
inline float widen(float x) { return x; }

// VW consecutive values as a float vector.
inline vf loadw(const float* p) { return load(p); }

inline vf loadw(const bf16* p) {
  typedef uint16_t vh __attribute__((vector_size(VW * 2), aligned(2)));
  typedef uint32_t vu __attribute__((vector_size(VW * 4)));
  const vu u = __builtin_convertvector(*reinterpret_cast<const vh*>(p), vu) << 16;
  vf f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline vf loadw(const f16* p) {
#if CK_VW == 16
  return (vf)_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
#elif CK_VW == 8 && defined(__F16C__)
  return (vf)_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#else
  vf v;
  for (int i = 0; i < VW; i++) v[i] = widen(p[i]);
  return v;
#endif
}

// Up to VW values, zero past n (the tail of a row).
template <class T>
inline vf loadw_part(const T* p, ptrdiff_t n) {
  vf v = splat(0.0f);
  for (ptrdiff_t i = 0; i < n; i++) v[i] = widen(p[i]);
  return v;
}

// dst[0..n) = widened src[0..n).
template <class T>
inline void widen_row(const T* src, float* dst, ptrdiff_t n) {
  ptrdiff_t i = 0;
  for (; i + VW <= n; i += VW) store(dst + i, loadw(src + i));
  for (; i < n; i++) dst[i] = widen(src[i]);
}

// Float -> IEEE half, round to nearest even (overflow to infinity, NaN stays NaN with its sign):
// what the hardware conversion does, for the tails and for CPUs without it.
inline uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000;
  const int32_t exp = static_cast<int32_t>((x >> 23) & 0xff);
  uint32_t mant = x & 0x7fffff;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mant != 0 ? 0x200 : 0));
  const int32_t e = exp - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    const int shift = 14 - e;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  return static_cast<uint16_t>(sign | h);
}

// dst[0..n) = src[0..n) rounded to IEEE half (nearest even).
inline void narrow_f16(const float* src, uint16_t* dst, ptrdiff_t n) {
  ptrdiff_t i = 0;
#if CK_VW == 16
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif CK_VW == 8 && defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
  for (; i < n; i++) dst[i] = float_to_half(src[i]);
}

// Calls f with the typed pointer for a half type code (the Node-API wrappers' dispatch).
template <class F>
inline void with_half(HalfType t, const uint16_t* p, F&& f) {
  if (t == HalfType::BF16) f(reinterpret_cast<const bf16*>(p));
  else f(reinterpret_cast<const f16*>(p));
}

}  // namespace ck
