// Elementwise and row-wise kernels: RMSNorm, RoPE, SwiGLU, log-softmax, AdamW, vector helpers.
// The pool (pool.h) splits rows or elements across threads; small inputs stay on the calling
// thread because handing work over costs a few microseconds.

#include "kernels.h"
#include "simd.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ck {

namespace {
// Elements per task (and below which kernels stay on the calling thread).
constexpr ptrdiff_t kChunk = 1 << 14;

// Rows per task so that a task touches about kChunk elements.
inline ptrdiff_t rows_per_chunk(ptrdiff_t dim) { return std::max<ptrdiff_t>(1, kChunk / std::max<ptrdiff_t>(dim, 1)); }

inline float dot(const float* a, const float* b, ptrdiff_t n) { return vdot(a, b, n); }
}  // namespace

void rmsnorm_forward(const float* x, const float* w, float* out, float* rstd, ptrdiff_t rows, ptrdiff_t dim,
                     float eps) {
  parallel_range(rows, rows_per_chunk(dim), [&](ptrdiff_t r0, ptrdiff_t r1, int) {
    for (ptrdiff_t r = r0; r < r1; r++) {
      const float* xr = x + r * dim;
      float* o = out + r * dim;
      const float ss = dot(xr, xr, dim);
      const float rs = 1.0f / std::sqrt(ss / static_cast<float>(dim) + eps);
      rstd[r] = rs;
#pragma omp simd
      for (ptrdiff_t j = 0; j < dim; j++) o[j] = xr[j] * rs * w[j];
    }
  });
}

void rmsnorm_backward(const float* dout, const float* x, const float* w, const float* rstd, float* dx, float* dw,
                      ptrdiff_t rows, ptrdiff_t dim) {
  // dweight is a sum over rows: each fixed chunk of rows sums privately, then the partials are
  // added in chunk order, so the result does not depend on thread timing.
  const ptrdiff_t rpc = rows_per_chunk(dim);
  const ptrdiff_t chunks = (rows + rpc - 1) / rpc;
  std::vector<float> partial(dw != nullptr ? static_cast<size_t>(chunks * dim) : 0, 0.0f);
  const auto work = [&](ptrdiff_t c, int) {
    float* mine = dw != nullptr ? partial.data() + c * dim : nullptr;
    for (ptrdiff_t r = c * rpc; r < std::min(rows, (c + 1) * rpc); r++) {
      const float* g = dout + r * dim;
      const float* xr = x + r * dim;
      float* d = dx + r * dim;
      const float rs = rstd[r];
      const float s = vdot3(w, g, xr, dim);
      const float c3 = rs * rs * rs * s / static_cast<float>(dim);
#pragma omp simd
      for (ptrdiff_t j = 0; j < dim; j++) d[j] = rs * w[j] * g[j] - c3 * xr[j];
      if (mine != nullptr) {
#pragma omp simd
        for (ptrdiff_t j = 0; j < dim; j++) mine[j] += g[j] * xr[j] * rs;
      }
    }
  };
  if (chunks <= 1) {
    for (ptrdiff_t c = 0; c < chunks; c++) work(c, 0);
  } else {
    parallel_for(chunks, work);
  }
  if (dw != nullptr)
    for (ptrdiff_t c = 0; c < chunks; c++)
      for (ptrdiff_t j = 0; j < dim; j++) dw[j] += partial[c * dim + j];
}

namespace {

// cos and sin of every (token, frequency) angle of the last batch, per calling thread. A training
// step applies RoPE 4 times per layer (q and k, forward and backward) with the same positions, and
// the double-precision cos/sin were most of the kernel's time; the inputs are compared in full, so
// a different batch (or a decode step) recomputes.
struct RopeTable {
  std::vector<int32_t> pos;
  std::vector<float> inv;
  std::vector<float> cs;  // [tokens][2 * half]: cos, then sin
};
thread_local RopeTable t_rope;

const float* rope_table(const int32_t* pos, const float* inv_freq, ptrdiff_t tokens, ptrdiff_t half) {
  RopeTable& t = t_rope;
  if (static_cast<ptrdiff_t>(t.pos.size()) == tokens && static_cast<ptrdiff_t>(t.inv.size()) == half &&
      std::equal(pos, pos + tokens, t.pos.begin()) && std::equal(inv_freq, inv_freq + half, t.inv.begin()))
    return t.cs.data();
  t.pos.assign(pos, pos + tokens);
  t.inv.assign(inv_freq, inv_freq + half);
  t.cs.resize(static_cast<size_t>(tokens * 2 * half));
  float* cs = t.cs.data();
  parallel_range(tokens, std::max<ptrdiff_t>(1, 2048 / std::max<ptrdiff_t>(half, 1)), [&](ptrdiff_t t0, ptrdiff_t t1, int) {
    for (ptrdiff_t tk = t0; tk < t1; tk++) {
      const float p = static_cast<float>(pos[tk]);
      float* row = cs + tk * 2 * half;
      for (ptrdiff_t i = 0; i < half; i++) {
        // torch forms the angle in fp32 (docs/numerics.md#rotary-embeddings); cos/sin in double, then rounded.
        const double a = static_cast<double>(p * inv_freq[i]);
        row[i] = static_cast<float>(std::cos(a));
        row[half + i] = static_cast<float>(std::sin(a));
      }
    }
  });
  return cs;
}

}  // namespace

void rope(float* x, const int32_t* pos, const float* inv_freq, ptrdiff_t tokens, ptrdiff_t heads,
          ptrdiff_t head_dim, bool inverse) {
  const ptrdiff_t half = head_dim / 2;
  const float* table = rope_table(pos, inv_freq, tokens, half);
  parallel_range(tokens, rows_per_chunk(heads * head_dim), [&](ptrdiff_t t0, ptrdiff_t t1, int) {
    for (ptrdiff_t t = t0; t < t1; t++) {
      const float* c = table + t * 2 * half;
      const float* s = c + half;
      // The inverse rotation is the forward one with -sin.
      const float sign = inverse ? -1.0f : 1.0f;
      for (ptrdiff_t h = 0; h < heads; h++) {
        float* xo = x + (t * heads + h) * head_dim;
#pragma omp simd
        for (ptrdiff_t i = 0; i < half; i++) {
          const float x1 = xo[i];
          const float x2 = xo[half + i];
          const float si = sign * s[i];
          xo[i] = x1 * c[i] - x2 * si;
          xo[half + i] = x2 * c[i] + x1 * si;
        }
      }
    }
  });
}

namespace {
inline vf vsigmoid(vf g) { return 1.0f / (1.0f + vexp(-g)); }
}  // namespace

void swiglu_forward(const float* gate, const float* up, float* out, ptrdiff_t n) {
  const ptrdiff_t nv = n / VW * VW;
  parallel_range(nv / VW, kChunk / VW, [&](ptrdiff_t b0, ptrdiff_t b1, int) {
    for (ptrdiff_t i = b0 * VW; i < b1 * VW; i += VW) {
      const vf g = load(gate + i);
      store(out + i, g * vsigmoid(g) * load(up + i));
    }
  });
  for (ptrdiff_t i = nv; i < n; i++) {
    const float g = gate[i];
    out[i] = g / (1.0f + expf_v(-g)) * up[i];
  }
}

void swiglu_backward(const float* dout, const float* gate, const float* up, float* dgate, float* dup, ptrdiff_t n) {
  const ptrdiff_t nv = n / VW * VW;
  parallel_range(nv / VW, kChunk / VW, [&](ptrdiff_t b0, ptrdiff_t b1, int) {
    for (ptrdiff_t i = b0 * VW; i < b1 * VW; i += VW) {
      const vf g = load(gate + i);
      const vf s = vsigmoid(g);
      const vf d = load(dout + i);
      store(dgate + i, d * load(up + i) * s * (1.0f + g * (1.0f - s)));
      store(dup + i, d * g * s);
    }
  });
  for (ptrdiff_t i = nv; i < n; i++) {
    const float g = gate[i];
    const float s = 1.0f / (1.0f + expf_v(-g));
    dgate[i] = dout[i] * up[i] * s * (1.0f + g * (1.0f - s));
    dup[i] = dout[i] * g * s;
  }
}

// GELU, tanh approximation: 0.5·g·(1 + tanh(u)) with u = c·(g + a·g³) equals g·σ(2u), and its
// derivative σ(2u) + 2·g·σ(2u)·(1 − σ(2u))·c·(1 + 3a·g²), so the sigmoid kernel serves.
constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kGeluA = 0.044715f;

void geglu_forward(const float* gate, const float* up, float* out, ptrdiff_t n) {
  const ptrdiff_t nv = n / VW * VW;
  parallel_range(nv / VW, kChunk / VW, [&](ptrdiff_t b0, ptrdiff_t b1, int) {
    for (ptrdiff_t i = b0 * VW; i < b1 * VW; i += VW) {
      const vf g = load(gate + i);
      const vf u2 = (2.0f * kGeluC) * (g + kGeluA * g * g * g);
      store(out + i, g * vsigmoid(u2) * load(up + i));
    }
  });
  for (ptrdiff_t i = nv; i < n; i++) {
    const float g = gate[i];
    const float u2 = 2.0f * kGeluC * (g + kGeluA * g * g * g);
    out[i] = g / (1.0f + expf_v(-u2)) * up[i];
  }
}

void geglu_backward(const float* dout, const float* gate, const float* up, float* dgate, float* dup, ptrdiff_t n) {
  const ptrdiff_t nv = n / VW * VW;
  parallel_range(nv / VW, kChunk / VW, [&](ptrdiff_t b0, ptrdiff_t b1, int) {
    for (ptrdiff_t i = b0 * VW; i < b1 * VW; i += VW) {
      const vf g = load(gate + i);
      const vf s = vsigmoid((2.0f * kGeluC) * (g + kGeluA * g * g * g));
      const vf d = load(dout + i);
      const vf dg = s + (2.0f * kGeluC) * g * s * (1.0f - s) * (1.0f + (3.0f * kGeluA) * g * g);
      store(dgate + i, d * load(up + i) * dg);
      store(dup + i, d * g * s);
    }
  });
  for (ptrdiff_t i = nv; i < n; i++) {
    const float g = gate[i];
    const float s = 1.0f / (1.0f + expf_v(-2.0f * kGeluC * (g + kGeluA * g * g * g)));
    const float dg = s + 2.0f * kGeluC * g * s * (1.0f - s) * (1.0f + 3.0f * kGeluA * g * g);
    dgate[i] = dout[i] * up[i] * dg;
    dup[i] = dout[i] * g * s;
  }
}

namespace {
// sum_j exp(x[j] - shift) over a row.
inline float sum_exp(const float* x, ptrdiff_t n, float shift) {
  const ptrdiff_t nv = n / VW * VW;
  vf acc = splat(0.0f);
  for (ptrdiff_t j = 0; j < nv; j += VW) acc += vexp(load(x + j) - shift);
  float s = hsum(acc);
  for (ptrdiff_t j = nv; j < n; j++) s += expf_v(x[j] - shift);
  return s;
}
inline float row_max(const float* x, ptrdiff_t n) {
  // NaN never wins a comparison here; it still reaches the result through sum_exp.
  float m = -__builtin_inff();
  for (ptrdiff_t j = 0; j < n; j++) m = x[j] > m ? x[j] : m;
  return m;
}
}  // namespace

void logprobs_forward(const float* logits, const int32_t* targets, float* logprobs, float* lse, ptrdiff_t rows,
                      ptrdiff_t vocab) {
  parallel_range(rows, rows_per_chunk(vocab), [&](ptrdiff_t r0, ptrdiff_t r1, int) {
    for (ptrdiff_t r = r0; r < r1; r++) {
      const float* x = logits + r * vocab;
      const float m = row_max(x, vocab);
      // All -inf (or empty) rows: the shift must stay finite to avoid inf - inf.
      const float shift = std::isfinite(m) ? m : 0.0f;
      const float l = shift + std::log(sum_exp(x, vocab, shift));
      lse[r] = l;
      const int32_t t = targets[r];
      logprobs[r] = t < 0 ? 0.0f : x[t] - l;
    }
  });
}

void logprobs_backward(const float* dlogprobs, const float* logits, const int32_t* targets, const float* lse,
                       float* dlogits, ptrdiff_t rows, ptrdiff_t vocab) {
  const ptrdiff_t nv = vocab / VW * VW;
  parallel_range(rows, rows_per_chunk(vocab), [&](ptrdiff_t r0, ptrdiff_t r1, int) {
    for (ptrdiff_t r = r0; r < r1; r++) {
      const float* x = logits + r * vocab;
      float* d = dlogits + r * vocab;
      const int32_t t = targets[r];
      if (t < 0) {
        std::fill(d, d + vocab, 0.0f);
        continue;
      }
      const float l = lse[r];
      const float nd = -dlogprobs[r];
      for (ptrdiff_t j = 0; j < nv; j += VW) store(d + j, nd * vexp(load(x + j) - l));
      for (ptrdiff_t j = nv; j < vocab; j++) d[j] = nd * expf_v(x[j] - l);
      d[t] += dlogprobs[r];
    }
  });
}

void adamw(float* p, const float* g, float* m, float* v, ptrdiff_t n, double lr, double beta1, double beta2,
           double eps, double wd, double step, double grad_scale) {
  const float decay = static_cast<float>(1.0 - lr * wd);
  const float step_size = static_cast<float>(lr / (1.0 - std::pow(beta1, step)));
  const float inv_bc2_sqrt = static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(beta2, step)));
  const float b1 = static_cast<float>(beta1), b2 = static_cast<float>(beta2);
  const float c1 = static_cast<float>(1.0 - beta1), c2 = static_cast<float>(1.0 - beta2);
  const float e = static_cast<float>(eps), gs = static_cast<float>(grad_scale);
  parallel_range(n, kChunk, [&](ptrdiff_t i0, ptrdiff_t i1, int) {
#pragma omp simd
    for (ptrdiff_t i = i0; i < i1; i++) {
      const float gi = g[i] * gs;
      const float mi = b1 * m[i] + c1 * gi;
      const float vi = b2 * v[i] + c2 * gi * gi;
      m[i] = mi;
      v[i] = vi;
      p[i] = p[i] * decay - step_size * mi / (std::sqrt(vi) * inv_bc2_sqrt + e);
    }
  });
}

void axpy(ptrdiff_t n, float alpha, const float* x, float* y) {
  parallel_range(n, kChunk, [&](ptrdiff_t i0, ptrdiff_t i1, int) {
#pragma omp simd
    for (ptrdiff_t i = i0; i < i1; i++) y[i] += alpha * x[i];
  });
}

double sum_squares(const float* x, ptrdiff_t n) {
  // Fixed chunks summed in order, so the result does not depend on the thread count or timing.
  const ptrdiff_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<double> part(static_cast<size_t>(chunks), 0.0);
  const auto sum_chunk = [&](ptrdiff_t c, int) {
    double s = 0;
    const ptrdiff_t i1 = std::min(n, (c + 1) * kChunk);
#pragma omp simd reduction(+ : s)
    for (ptrdiff_t i = c * kChunk; i < i1; i++) s += static_cast<double>(x[i]) * x[i];
    part[c] = s;
  };
  if (chunks <= 2) {
    for (ptrdiff_t c = 0; c < chunks; c++) sum_chunk(c, 0);
  } else {
    parallel_for(chunks, sum_chunk);
  }
  double s = 0;
  for (double p : part) s += p;
  return s;
}

void add(const float* a, const float* b, float* out, ptrdiff_t n) {
  parallel_range(n, kChunk, [&](ptrdiff_t i0, ptrdiff_t i1, int) {
#pragma omp simd
    for (ptrdiff_t i = i0; i < i1; i++) out[i] = a[i] + b[i];
  });
}

void embedding_forward(const float* table, const int32_t* ids, float* out, ptrdiff_t n, ptrdiff_t dim) {
  for (ptrdiff_t i = 0; i < n; i++) std::copy(table + ids[i] * dim, table + (ids[i] + 1) * dim, out + i * dim);
}

void embedding_forward_half(const uint16_t* table, HalfType type, const int32_t* ids, float* out, ptrdiff_t n,
                            ptrdiff_t dim) {
  with_half(type, table, [&](const auto* t) {
    for (ptrdiff_t i = 0; i < n; i++) widen_row(t + ids[i] * dim, out + i * dim, dim);
  });
}

void embedding_backward(const float* dout, const int32_t* ids, float* dtable, ptrdiff_t n, ptrdiff_t dim) {
  // Serial: repeated ids would race, and this is memory-bound and small next to the GEMMs.
  for (ptrdiff_t i = 0; i < n; i++) {
    float* d = dtable + ids[i] * dim;
    const float* s = dout + i * dim;
#pragma omp simd
    for (ptrdiff_t j = 0; j < dim; j++) d[j] += s[j];
  }
}

}  // namespace ck
