// Causal grouped-query attention over packed variable-length sequences (forward, backward). The
// decode step over a KV cache is in decode.cc.
//
// Work is split into tasks of a few query rows of one (sequence, head), scheduled dynamically,
// so one long sequence parallelises as well as many short ones. The backward pass runs in two
// row-parallel passes so no two threads ever add into the same dk/dv row:
//   1. per query row i: dS_i = P_i * (dP_i - rowsum(dP_i * P_i)) * scale, dq_i = dS_i K
//   2. per key row j:   dk_j = sum over heads of the group and i >= j of dS_ij q_i, dv_j likewise with P_ij dout_i.

#include "kernels.h"
#include "simd.h"

#include <algorithm>
#include <vector>

namespace ck {

namespace {

struct Task {
  ptrdiff_t seq, head, begin, end;
};

// Query (or key) rows per task: a multiple of the GEMM micro-tile height, small enough that one
// sequence still splits into several tasks.
constexpr ptrdiff_t kRowsPerTask = 48;

std::vector<Task> make_tasks(const int32_t* seq_starts, ptrdiff_t num_seqs, ptrdiff_t heads) {
  std::vector<Task> tasks;
  for (ptrdiff_t s = 0; s < num_seqs; s++) {
    const ptrdiff_t len = seq_starts[s + 1] - seq_starts[s];
    for (ptrdiff_t h = 0; h < heads; h++)
      for (ptrdiff_t b = 0; b < len; b += kRowsPerTask) tasks.push_back({s, h, b, std::min(len, b + kRowsPerTask)});
  }
  return tasks;
}

// probs offset of each sequence for head 0.
std::vector<ptrdiff_t> probs_bases(const int32_t* seq_starts, ptrdiff_t num_seqs, ptrdiff_t heads) {
  std::vector<ptrdiff_t> base(static_cast<size_t>(num_seqs + 1), 0);
  for (ptrdiff_t s = 0; s < num_seqs; s++) {
    const ptrdiff_t len = seq_starts[s + 1] - seq_starts[s];
    base[s + 1] = base[s] + heads * len * len;
  }
  return base;
}

inline float dot(const float* a, const float* b, ptrdiff_t n) { return vdot(a, b, n); }

inline void axpy_row(float a, const float* x, float* y, ptrdiff_t n) {
#pragma omp simd
  for (ptrdiff_t i = 0; i < n; i++) y[i] += a * x[i];
}

// Runs f(task, worker) for every task, on the pool when the call is big enough to be worth it.
template <class F>
void run_tasks(ptrdiff_t n, ptrdiff_t flops, F&& f) {
  if (flops < (1 << 18)) {
    for (ptrdiff_t i = 0; i < n; i++) f(i, 0);
  } else {
    parallel_for(n, f);
  }
}

// Per-worker score rows, grown on demand.
thread_local std::vector<float> t_rows;
float* worker_rows(ptrdiff_t max_len) {
  const size_t need = static_cast<size_t>(threads() * max_len);
  if (t_rows.size() < need) t_rows.resize(need);
  return t_rows.data();
}

thread_local std::vector<float> t_ds;

}  // namespace

void attention_forward(const float* q, const float* k, const float* v, float* out, float* probs,
                       const int32_t* seq_starts, ptrdiff_t num_seqs, ptrdiff_t heads, ptrdiff_t kv_heads,
                       ptrdiff_t d, float scale, ptrdiff_t window) {
  const ptrdiff_t rep = heads / kv_heads;
  const ptrdiff_t qw = heads * d, kw = kv_heads * d;
  const std::vector<Task> tasks = make_tasks(seq_starts, num_seqs, heads);
  const std::vector<ptrdiff_t> base = probs_bases(seq_starts, num_seqs, heads);
  ptrdiff_t max_len = 0, flops = 0;
  for (ptrdiff_t s = 0; s < num_seqs; s++) {
    const ptrdiff_t len = seq_starts[s + 1] - seq_starts[s];
    max_len = std::max(max_len, len);
    flops += 2 * heads * len * len * d;
  }
  float* scratch = worker_rows(kRowsPerTask * max_len);
  run_tasks(static_cast<ptrdiff_t>(tasks.size()), flops, [&](ptrdiff_t ti, int worker) {
    const Task& t = tasks[ti];
    const ptrdiff_t start = seq_starts[t.seq];
    const ptrdiff_t len = seq_starts[t.seq + 1] - start;
    const ptrdiff_t g = t.head / rep;
    const ptrdiff_t rows = t.end - t.begin, keys = t.end;  // causal: rows of the block see keys < t.end
    float* S = scratch + worker * kRowsPerTask * max_len;     // [rows, keys]
    const float* qb = q + (start + t.begin) * qw + t.head * d;
    const float* kb = k + start * kw + g * d;
    gemm_serial(false, true, rows, keys, d, scale, qb, qw, kb, kw, 0.0f, S, keys);
    for (ptrdiff_t r = 0; r < rows; r++) {
      const ptrdiff_t i = t.begin + r;
      float* p = S + r * keys;
      const ptrdiff_t lo = window > 0 ? std::max<ptrdiff_t>(0, i - window + 1) : 0;
      softmax_inplace(p + lo, i + 1 - lo);
      std::fill(p, p + lo, 0.0f);
      std::fill(p + i + 1, p + keys, 0.0f);
      if (probs != nullptr) {
        float* pr = probs + base[t.seq] + t.head * len * len + i * len;
        std::copy(p, p + keys, pr);
        std::fill(pr + keys, pr + len, 0.0f);
      }
    }
    gemm_serial(false, false, rows, d, keys, 1.0f, S, keys, v + start * kw + g * d, kw, 0.0f,
                out + (start + t.begin) * qw + t.head * d, qw);
  });
}

void attention_backward(const float* dout, const float* q, const float* k, const float* v, const float* probs,
                        float* dq, float* dk, float* dv, const int32_t* seq_starts, ptrdiff_t num_seqs,
                        ptrdiff_t heads, ptrdiff_t kv_heads, ptrdiff_t d, float scale) {
  const ptrdiff_t rep = heads / kv_heads;
  const ptrdiff_t qw = heads * d, kw = kv_heads * d;
  const std::vector<Task> qtasks = make_tasks(seq_starts, num_seqs, heads);
  const std::vector<Task> ktasks = make_tasks(seq_starts, num_seqs, kv_heads);
  const std::vector<ptrdiff_t> base = probs_bases(seq_starts, num_seqs, heads);
  ptrdiff_t flops = 0;
  for (ptrdiff_t s = 0; s < num_seqs; s++) {
    const ptrdiff_t len = seq_starts[s + 1] - seq_starts[s];
    flops += 4 * heads * len * len * d;
  }
  // dS in the layout of probs (zero above the diagonal).
  t_ds.resize(static_cast<size_t>(base[num_seqs]));
  float* ds = t_ds.data();
  run_tasks(static_cast<ptrdiff_t>(qtasks.size()), flops, [&](ptrdiff_t ti, int) {
    const Task& t = qtasks[ti];
    const ptrdiff_t start = seq_starts[t.seq];
    const ptrdiff_t len = seq_starts[t.seq + 1] - start;
    const ptrdiff_t g = t.head / rep;
    const ptrdiff_t off = base[t.seq] + t.head * len * len;
    const ptrdiff_t rows = t.end - t.begin, keys = t.end;
    float* dsb = ds + off + t.begin * len;  // rows of dS, row stride len
    // dP = dO V^T into the dS rows, then dS = P * (dP - rowsum(P * dP)) * scale in place.
    gemm_serial(false, true, rows, keys, d, 1.0f, dout + (start + t.begin) * qw + t.head * d, qw,
                v + start * kw + g * d, kw, 0.0f, dsb, len);
    for (ptrdiff_t r = 0; r < rows; r++) {
      const ptrdiff_t i = t.begin + r;
      const float* pr = probs + off + i * len;
      float* dr = dsb + r * len;
      const float rowsum = vdot(pr, dr, i + 1);
      for (ptrdiff_t j = 0; j <= i; j++) dr[j] = pr[j] * (dr[j] - rowsum) * scale;
      std::fill(dr + i + 1, dr + len, 0.0f);
    }
    gemm_serial(false, false, rows, d, keys, 1.0f, dsb, len, k + start * kw + g * d, kw, 0.0f,
                dq + (start + t.begin) * qw + t.head * d, qw);
  });
  // Pass 1 has returned, so all of dS is written. dK[j] and dV[j] only get terms from rows i >= j.
  run_tasks(static_cast<ptrdiff_t>(ktasks.size()), flops, [&](ptrdiff_t ti, int) {
    const Task& t = ktasks[ti];  // t.head is a kv head here; the block is key rows [begin, end)
    const ptrdiff_t start = seq_starts[t.seq];
    const ptrdiff_t len = seq_starts[t.seq + 1] - start;
    const ptrdiff_t cols = t.end - t.begin, inner = len - t.begin;
    float* dkb = dk + (start + t.begin) * kw + t.head * d;
    float* dvb = dv + (start + t.begin) * kw + t.head * d;
    for (ptrdiff_t h = t.head * rep; h < (t.head + 1) * rep; h++) {
      const ptrdiff_t off = base[t.seq] + h * len * len + t.begin * len + t.begin;  // [i = begin.., j = begin..]
      const float beta = h == t.head * rep ? 0.0f : 1.0f;
      gemm_serial(true, false, cols, d, inner, 1.0f, ds + off, len, q + (start + t.begin) * qw + h * d, qw, beta,
                  dkb, kw);
      gemm_serial(true, false, cols, d, inner, 1.0f, probs + off, len, dout + (start + t.begin) * qw + h * d, qw,
                  beta, dvb, kw);
    }
  });
}

}  // namespace ck
