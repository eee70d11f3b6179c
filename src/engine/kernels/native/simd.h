// Portable SIMD through GCC/Clang vector extensions. The width follows what the compiler targets
// (binding.gyp builds with -march=native by default, so this is the installing machine's best).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__AVX512F__)
#define CK_VW 16
#elif defined(__AVX__)
#define CK_VW 8
#else
#define CK_VW 4
#endif

namespace ck {

constexpr int VW = CK_VW;
typedef float vf __attribute__((vector_size(VW * 4)));
// Same vector with 4-byte alignment, for loads and stores at arbitrary float offsets.
typedef float vfu __attribute__((vector_size(VW * 4), aligned(4)));
typedef int32_t vi __attribute__((vector_size(VW * 4)));

inline vf load(const float* p) { return *reinterpret_cast<const vfu*>(p); }
inline void store(float* p, vf v) { *reinterpret_cast<vfu*>(p) = v; }
inline vf splat(float x) { return vf{} + x; }

inline float hsum(vf v) {
  float s = 0;
  for (int i = 0; i < VW; i++) s += v[i];
  return s;
}
inline float hmax(vf v) {
  float m = v[0];
  for (int i = 1; i < VW; i++) m = v[i] > m ? v[i] : m;
  return m;
}

// Dot product with vector accumulators (GCC does not reliably vectorise float reductions without
// -ffast-math, even under `omp simd`).
inline float vdot(const float* a, const float* b, ptrdiff_t n) {
  vf acc0 = splat(0.0f), acc1 = splat(0.0f);
  ptrdiff_t i = 0;
  for (; i + 2 * VW <= n; i += 2 * VW) {
    acc0 += load(a + i) * load(b + i);
    acc1 += load(a + i + VW) * load(b + i + VW);
  }
  for (; i + VW <= n; i += VW) acc0 += load(a + i) * load(b + i);
  float s = hsum(acc0 + acc1);
  for (; i < n; i++) s += a[i] * b[i];
  return s;
}

// sum of a[i] * b[i] * c[i]
inline float vdot3(const float* a, const float* b, const float* c, ptrdiff_t n) {
  vf acc = splat(0.0f);
  ptrdiff_t i = 0;
  for (; i + VW <= n; i += VW) acc += load(a + i) * load(b + i) * load(c + i);
  float s = hsum(acc);
  for (; i < n; i++) s += a[i] * b[i] * c[i];
  return s;
}

// exp(x) for a vector, Cephes-style: 2^n * p(r) with |r| <= ln2/2; about 1 ulp on the normal range.
// Below -87.33 (where the result would be denormal) it returns 0; above 88.37 it returns +inf
// (true exp is still finite up to 88.72, but no caller here needs that range). NaN stays NaN.
// Written by hand so the translation units need no -ffast-math, which would break NaN/inf handling.
inline vf vexp(vf x) {
  const vf hi = splat(88.3762626647949f);
  const vf lo = splat(-87.3365447504019f);
  vf xc = x > hi ? hi : x;
  xc = xc < lo ? lo : xc;
  vf fx = xc * 1.44269504088896341f + 0.5f;
  vi n = __builtin_convertvector(fx, vi);  // truncates toward zero
  vf nf = __builtin_convertvector(n, vf);
  n = nf > fx ? n - 1 : n;  // floor
  nf = __builtin_convertvector(n, vf);
  vf r = xc - nf * 0.693359375f;
  r = r - nf * -2.12194440e-4f;
  vf y = splat(1.9875691500e-4f);
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * (r * r) + r + 1.0f;
  vi bits = (n + 127) << 23;
  vf scale;
  std::memcpy(&scale, &bits, sizeof scale);
  vf res = y * scale;
  res = x < lo ? splat(0.0f) : res;
  res = x > hi ? splat(__builtin_inff()) : res;
  res = x != x ? x : res;
  return res;
}

// exp over an array tail shorter than one vector, with the same numerics as vexp.
inline void vexp_tail(const float* in, float* out, int n) {
  vf t = splat(0.0f);
  for (int i = 0; i < n; i++) t[i] = in[i];
  t = vexp(t);
  for (int i = 0; i < n; i++) out[i] = t[i];
}

inline float expf_v(float x) {
  vf t = splat(x);
  return vexp(t)[0];
}

// p[0..n) = softmax(p[0..n)) in place.
inline void softmax_inplace(float* p, ptrdiff_t n) {
  float m = -__builtin_inff();
  for (ptrdiff_t j = 0; j < n; j++) m = p[j] > m ? p[j] : m;
  const ptrdiff_t nv = n / VW * VW;
  vf acc = splat(0.0f);
  for (ptrdiff_t j = 0; j < nv; j += VW) {
    const vf e = vexp(load(p + j) - m);
    store(p + j, e);
    acc += e;
  }
  float sum = hsum(acc);
  if (nv < n) {
    for (ptrdiff_t j = nv; j < n; j++) p[j] -= m;
    vexp_tail(p + nv, p + nv, static_cast<int>(n - nv));
    for (ptrdiff_t j = nv; j < n; j++) sum += p[j];
  }
  const float inv = 1.0f / sum;
#pragma omp simd
  for (ptrdiff_t j = 0; j < n; j++) p[j] *= inv;
}

}  // namespace ck
