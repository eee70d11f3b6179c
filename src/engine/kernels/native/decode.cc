// Kernels of the sampler's decode step: products of a few token rows with weight matrices,
// writing K/V rows into the cache, attention over it, and drawing tokens from rows of logits.
//
// Decoding multiplies a handful of rows (one per sequence being decoded) by every weight matrix
// W [N, K]. A general GEMM packs W first, which for a few rows costs about as much memory traffic
// as the product itself; here W is streamed once, straight from its layout, as dot products over
// rows split into even and odd k: each step of 2 VW values of k of a weight row is split into its
// even-k and odd-k values as it is loaded (for bf16 one shift and one AND of the same words, no
// shuffle), the token rows were split the same way once per call, and a block of weight rows (2
// for groups of 8 token rows, 4 to 6 for fewer) meets a group of up to 8 token rows with all the
// accumulators in registers. One row is memory-bound as before (it streams the weights at the
// speed of the dot-product kernel it replaced); 16 rows run at 65-80 GFLOP per CPU-second with
// bf16 weights coming from memory (one thread, Cascade Lake without BF16, SmolLM2 shapes), against
// 40-45 for the outer-product kernel that took 5-64 rows until session 12, which broadcast each
// weight element against transposed token rows and was bound by its loads
// (docs/embedded-engine.md, "16-row products").
// A row's bits depend only on K: not on the other rows, their number or the thread count. W may
// be kept in 16 bits (bf16 / f16, half.h): each value is widened as it is loaded, so the bits are
// those of the float32 kernel on a widened copy, and a decode step reads half the bytes.

#include "decode.h"
#include "half.h"
#include "kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "pool.h"
#include "simd.h"

namespace ck {

namespace {

// Columns (weight rows) per task: a multiple of every block width (2, 4, 6), enough work to be
// worth a hand-over, small enough that both cores get a share of a 576-wide projection.
constexpr ptrdiff_t kColsPerTask = 48;

// Loads up to VW floats, zero past n (the tail of a row).
inline vf load_part(const float* p, ptrdiff_t n) {
  vf v = splat(0.0f);
  for (ptrdiff_t i = 0; i < n; i++) v[i] = p[i];
  return v;
}

// The sum of a vector's lanes by halving: lanes j and j + VW/2 first, then j and j + VW/4, ...
inline float tree_hsum(vf v) {
  float t[VW];
  store(t, v);
  for (int w = VW / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; j++) t[j] += t[j + w];
  return t[0];
}

// out[j] = tree_hsum(v[j]) for 4 vectors, with shuffles (4 sums for the price of about one).
inline void reduce4(const vf v[4], float* out) {
#if CK_VW == 16
  const vf a = __builtin_shufflevector(v[0], v[1], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
               __builtin_shufflevector(v[0], v[1], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  const vf b = __builtin_shufflevector(v[2], v[3], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
               __builtin_shufflevector(v[2], v[3], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  // Lanes 4g..4g+3 now hold vector g's halving after two levels.
  const vf c = __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27) +
               __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
  const vf d = c + __builtin_shufflevector(c, c, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
  const vf e = d + __builtin_shufflevector(d, d, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
  out[0] = e[0];
  out[1] = e[4];
  out[2] = e[8];
  out[3] = e[12];
#else
  for (int j = 0; j < 4; j++) out[j] = tree_hsum(v[j]);
#endif
}

template <class F>
void run_column_tasks(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, F&& columns) {
  const ptrdiff_t tasks = (N + kColsPerTask - 1) / kColsPerTask;
  const auto task = [&](ptrdiff_t t, int) { columns(t * kColsPerTask, std::min(N, (t + 1) * kColsPerTask)); };
  // Below ~128k multiply-adds a hand-over to the pool costs more than it saves.
  if (tasks == 1 || M * N * K < (1 << 17)) {
    for (ptrdiff_t t = 0; t < tasks; t++) task(t, 0);
  } else {
    parallel_for(tasks, task);
  }
}

// ---- dot products over token rows split into even and odd k ----
//
// Each weight value feeds one multiply-add per token row, so with 16 rows the products are bound
// by the multiply-adds and by the loads and conversions that feed them, not by memory. Here a
// block of weight rows is read in steps of 2 VW values of k, kept in their layout, and each
// step is split into the VW even-k and the VW odd-k values: for bf16 that is one shift and one
// AND of the same VW 32-bit words (no shuffle, so the shuffle port stays free), for float32 two
// lane permutations, for f16 two narrowings and conversions. The token rows are split the same
// way once per call, so each step is, per token row, two multiply-adds per weight row with the
// token vectors loaded once per block: for 8 rows and blocks of 2, 16 accumulators in registers,
// about 0.6 loads per multiply-add. Each sum is, per lane, k in step order (even then odd), then a
// tree reduction, whatever the type of W, the rows beside it or the thread count.

constexpr int SPL = 2 * VW;     // k per step
// Token rows per group, and weight rows per block for R token rows: R x C accumulators, 2 C
// split weight vectors, a token vector and the AND mask must fit the 32 (16 with AVX2) vector
// registers. With 8 rows, blocks of 3 ran slower than 2 (30 registers live, one spilled).
#if CK_VW == 16
constexpr int SPL_R = 8;
template <int R>
constexpr int split_nb() {
  return R >= 5 ? 2 : R >= 3 ? 4 : 6;
}
#else
constexpr int SPL_R = 4;
template <int R>
constexpr int split_nb() {
  return R >= 3 ? 2 : 3;
}
#endif
constexpr ptrdiff_t SPL_KS = 24;  // steps per chunk of K: a group's split rows (8 x 768 floats) stay in L1

#if CK_VW == 16
#define CK_EVEN_LANES 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define CK_ODD_LANES 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#elif CK_VW == 8
#define CK_EVEN_LANES 0, 2, 4, 6, 8, 10, 12, 14
#define CK_ODD_LANES 1, 3, 5, 7, 9, 11, 13, 15
#else
#define CK_EVEN_LANES 0, 2, 4, 6
#define CK_ODD_LANES 1, 3, 5, 7
#endif

typedef uint32_t vu32 __attribute__((vector_size(VW * 4)));
typedef uint32_t vu32u __attribute__((vector_size(VW * 4), aligned(2)));

// SPL values of W from p as the VW even-k values and the VW odd-k values, widened.
inline void split_step(const float* p, vf& e, vf& o) {
  const vf lo = load(p), hi = load(p + VW);
  e = __builtin_shufflevector(lo, hi, CK_EVEN_LANES);
  o = __builtin_shufflevector(lo, hi, CK_ODD_LANES);
}

inline void split_step(const bf16* p, vf& e, vf& o) {
  const vu32 u = *reinterpret_cast<const vu32u*>(p);
  const vu32 ev = u << 16, ov = u & 0xffff0000u;
  std::memcpy(&e, &ev, sizeof e);
  std::memcpy(&o, &ov, sizeof o);
}

inline void split_step(const f16* p, vf& e, vf& o) {
  typedef uint16_t vh __attribute__((vector_size(VW * 2)));
  const vu32 u = *reinterpret_cast<const vu32u*>(p);
  const vh he = __builtin_convertvector(u & 0xffffu, vh), ho = __builtin_convertvector(u >> 16, vh);
  e = loadw(reinterpret_cast<const f16*>(&he));
  o = loadw(reinterpret_cast<const f16*>(&ho));
}

// The first n < SPL values of a step, zero past them.
template <class TW>
inline void split_step_part(const TW* p, ptrdiff_t n, vf& e, vf& o) {
  TW t[SPL];
  std::memset(t, 0, sizeof t);
  std::memcpy(t, p, sizeof(TW) * static_cast<size_t>(n));
  split_step(t, e, o);
}

#if CK_VW == 16
// Lane p = tree_hsum(v[p]) for 16 vectors: the same halvings, done for all 16 at once while
// transposing (30 shuffles for 16 sums, where reduce4 takes 8 for 4 and then extracts 3 lanes).
inline vf reduce16(const vf v[16]) {
  vf a[8], b[4], c[2];
  for (int m = 0; m < 8; m++)  // lanes 8h..8h+7: v[2m + h] after one halving
    a[m] = __builtin_shufflevector(v[2 * m], v[2 * m + 1], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
           __builtin_shufflevector(v[2 * m], v[2 * m + 1], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  for (int m = 0; m < 4; m++)  // lanes 4h..4h+3: v[4m + h] after two
    b[m] = __builtin_shufflevector(a[2 * m], a[2 * m + 1], 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27) +
           __builtin_shufflevector(a[2 * m], a[2 * m + 1], 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
  for (int m = 0; m < 2; m++)  // lanes 2h, 2h + 1: v[8m + h] after three
    c[m] = __builtin_shufflevector(b[2 * m], b[2 * m + 1], 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29) +
           __builtin_shufflevector(b[2 * m], b[2 * m + 1], 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
  return __builtin_shufflevector(c[0], c[1], 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30) +
         __builtin_shufflevector(c[0], c[1], 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
}
#endif

// Sums (tree order) of R x C accumulators into s[i * C + j].
template <int R, int C>
inline void split_reduce(const vf* acc, float* s) {
  int q = 0;
#if CK_VW == 16
  for (; q + 16 <= R * C; q += 16) store(s + q, reduce16(acc + q));
#endif
  for (; q + 4 <= R * C; q += 4) reduce4(acc + q, s + q);
  for (; q < R * C; q++) s[q] = tree_hsum(acc[q]);
}

// acc[i][j] += X row i . W row j over `steps` whole steps and then `tail` (< SPL) values. X is a
// group's split rows from the chunk's first step ([step][R][SPL]); W row j starts at W + j * ldw.
// The sums start from zero when `first`, else from `part`; when `last` they are reduced into s,
// else stored back into part. `pf`, when not null, is the next block of weight rows: its lines at
// the same k are prefetched so that their fetch from memory overlaps this block's arithmetic.
template <int R, int C, class TW>
void split_block(const float* __restrict X, const TW* __restrict W, ptrdiff_t ldw, ptrdiff_t steps, ptrdiff_t tail,
                 bool first, bool last, float* __restrict part, float* __restrict s, const TW* pf) {
  vf acc[R * C];
  for (int q = 0; q < R * C; q++) acc[q] = first ? splat(0.0f) : load(part + q * VW);
  const auto step = [&](const float* x, const vf* we, const vf* wo) {
    for (int i = 0; i < R; i++) {
      const vf xe = load(x + i * SPL), xo = load(x + i * SPL + VW);
      for (int j = 0; j < C; j++) {
        acc[i * C + j] += xe * we[j];
        acc[i * C + j] += xo * wo[j];
      }
    }
  };
  for (ptrdiff_t t = 0; t < steps; t++) {
    if (pf != nullptr)
      for (int j = 0; j < C; j++)
        for (size_t b = 0; b < sizeof(TW) * SPL; b += 64) __builtin_prefetch(reinterpret_cast<const char*>(pf + j * ldw + t * SPL) + b);
    vf we[C], wo[C];
    for (int j = 0; j < C; j++) split_step(W + j * ldw + t * SPL, we[j], wo[j]);
    step(X + t * R * SPL, we, wo);
  }
  if (tail > 0) {
    vf we[C], wo[C];
    for (int j = 0; j < C; j++) split_step_part(W + j * ldw + steps * SPL, tail, we[j], wo[j]);
    step(X + steps * R * SPL, we, wo);
  }
  if (last) split_reduce<R, C>(acc, s);
  else
    for (int q = 0; q < R * C; q++) store(part + q * VW, acc[q]);
}

// Token rows i0 .. i0 + R - 1 against columns [j0, j1): X is the group's split rows.
template <int R, class TW>
void split_group(ptrdiff_t N, ptrdiff_t K, float alpha, const float* X, const TW* W, float beta, float* C,
                 ptrdiff_t i0, ptrdiff_t j0, ptrdiff_t j1) {
  // At least one pass, so that K = 0 still writes alpha * 0 + beta * C.
  const ptrdiff_t full = K / SPL, tail = K % SPL, total = std::max<ptrdiff_t>(1, full + (tail > 0 ? 1 : 0));
  thread_local std::vector<float> t_part;
  if (total > SPL_KS) t_part.resize(static_cast<size_t>((j1 - j0) * R * VW));
  float* part = t_part.data();
  constexpr int NB = split_nb<R>();
  float s[R * NB];
  for (ptrdiff_t c0 = 0; c0 < total; c0 += SPL_KS) {
    const bool last = c0 + SPL_KS >= total;
    const ptrdiff_t steps = last ? full - c0 : SPL_KS;
    const ptrdiff_t tn = last ? tail : 0;
    const float* x = X + c0 * R * SPL;
    const auto block = [&](auto c_tag, ptrdiff_t j) {
      constexpr int Cb = decltype(c_tag)::value;
      const TW* w = W + j * K + c0 * SPL;
      // Every group prefetches the next block: the first from memory, the others from L2 (without,
      // the second group of 16 rows waited on L2 and ran 10 % slower).
      const TW* pf = j + 2 * Cb <= N ? w + Cb * K : nullptr;
      split_block<R, Cb>(x, w, K, steps, tn, c0 == 0, last, part + (j - j0) * R * VW, s, pf);
      if (!last) return;
      for (int i = 0; i < R; i++) {
        float* c = C + (i0 + i) * N + j;
        for (int q = 0; q < Cb; q++) c[q] = beta == 0.0f ? alpha * s[i * Cb + q] : alpha * s[i * Cb + q] + beta * c[q];
      }
    };
    ptrdiff_t j = j0;
    for (; j + NB <= j1; j += NB) block(std::integral_constant<int, NB>{}, j);
    for (; j + 2 <= j1; j += 2) block(std::integral_constant<int, 2>{}, j);
    for (; j < j1; j++) block(std::integral_constant<int, 1>{}, j);
  }
}

thread_local std::vector<float> t_split;

template <class TW>
void split_rows(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A, const TW* W, float beta,
                float* C) {
  const ptrdiff_t steps = (K + SPL - 1) / SPL, Kp = steps * SPL;
  // Group g (rows 8g ..) at g * 8 * Kp, as [step][rows of the group][VW even k, VW odd k].
  // Aligned to 64 bytes: a vector load that straddles two cache lines costs two.
  t_split.resize(static_cast<size_t>(M * Kp + 16));
  float* xs = t_split.data() + ((64 - reinterpret_cast<uintptr_t>(t_split.data()) % 64) % 64) / sizeof(float);
  for (ptrdiff_t g0 = 0; g0 < M; g0 += SPL_R) {
    const ptrdiff_t R = std::min<ptrdiff_t>(SPL_R, M - g0);
    float* xg = xs + g0 * Kp;
    for (ptrdiff_t i = 0; i < R; i++) {
      const float* a = A + (g0 + i) * K;
      for (ptrdiff_t t = 0; t < steps; t++) {
        vf e, o;
        if ((t + 1) * SPL <= K) split_step(a + t * SPL, e, o);
        else split_step_part(a + t * SPL, K - t * SPL, e, o);
        store(xg + (t * R + i) * SPL, e);
        store(xg + (t * R + i) * SPL + VW, o);
      }
    }
  }
  run_column_tasks(M, N, K, [&](ptrdiff_t j0, ptrdiff_t j1) {
    for (ptrdiff_t g0 = 0; g0 < M; g0 += SPL_R) {
      const float* xg = xs + g0 * Kp;
      // The first group reads the weights from memory; the others find them in L2.
      switch (std::min<ptrdiff_t>(SPL_R, M - g0)) {
        case 8: split_group<8>(N, K, alpha, xg, W, beta, C, g0, j0, j1); break;
        case 7: split_group<7>(N, K, alpha, xg, W, beta, C, g0, j0, j1); break;
        case 6: split_group<6>(N, K, alpha, xg, W, beta, C, g0, j0, j1); break;
        case 5: split_group<5>(N, K, alpha, xg, W, beta, C, g0, j0, j1); break;
        case 4: split_group<4>(N, K, alpha, xg, W, beta, C, g0, j0, j1); break;
        case 3: split_group<3>(N, K, alpha, xg, W, beta, C, g0, j0, j1); break;
        case 2: split_group<2>(N, K, alpha, xg, W, beta, C, g0, j0, j1); break;
        default: split_group<1>(N, K, alpha, xg, W, beta, C, g0, j0, j1); break;
      }
    }
  });
}

template <class TW>
void gemm_rows_nt_t(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A, const TW* W, float beta,
                    float* C) {
  if (M <= 0 || N <= 0) return;
  split_rows(M, N, K, alpha, A, W, beta, C);
}

}  // namespace

void gemm_rows_nt(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A, const float* W, float beta,
                  float* C) {
  gemm_rows_nt_t(M, N, K, alpha, A, W, beta, C);
}

void gemm_rows_nt_half(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A, const uint16_t* W,
                       HalfType type, float beta, float* C) {
  with_half(type, W, [&](const auto* w) { gemm_rows_nt_t(M, N, K, alpha, A, w, beta, C); });
}

namespace {

// Per-worker score rows of the decode attention, grown on demand.
thread_local std::vector<float> t_scores;

// p[t] = scale * dot(q, k rows t) for the 4 keys at k (rows of d values, float32 or f16, widened
// as they are loaded), summed in reduce4's tree.
// k[t] is key t's row: the 4 rows need not be adjacent (a shared prompt prefix ends among them).
template <class T>
inline void scores4(const float* q, const T* const* k, ptrdiff_t d, float scale, float* p) {
  vf acc[4] = {splat(0.0f), splat(0.0f), splat(0.0f), splat(0.0f)};
  ptrdiff_t c = 0;
  for (; c + VW <= d; c += VW) {
    const vf qv = load(q + c);
    for (int t = 0; t < 4; t++) acc[t] += qv * loadw(k[t] + c);
  }
  if (c < d) {
    const vf qv = load_part(q + c, d - c);
    for (int t = 0; t < 4; t++) acc[t] += qv * loadw_part(k[t] + c, d - c);
  }
  reduce4(acc, p);
  for (int t = 0; t < 4; t++) p[t] *= scale;
}

template <class T>
inline float score1(const float* q, const T* k, ptrdiff_t d, float scale) {
  vf acc = splat(0.0f);
  ptrdiff_t c = 0;
  for (; c + VW <= d; c += VW) acc += load(q + c) * loadw(k + c);
  if (c < d) acc += load_part(q + c, d - c) * loadw_part(k + c, d - c);
  return tree_hsum(acc) * scale;
}

}  // namespace

namespace {

// A prompt's positions prefilled in one call are queries of one slot at consecutive lengths. In
// blocks of up to kBlockQueries of them, per KV head, the scores are one product S = scale·Q·Kᵀ
// over the slot's keys and the outputs one product O = softmax(S)·V (gemm_serial), each row's
// softmax over its own length and the rest of the row zero (causal). Per query, as below, the keys
// and values were read once per query and every score was a separate dot product: 7 % of a Qwen3
// prefill's time for 2 % of its arithmetic. A row's bits do not depend on the block it is in.
constexpr ptrdiff_t kBlockMinQueries = 4;
constexpr ptrdiff_t kBlockQueries = 32;

struct QueryBlock {
  ptrdiff_t b0, m;  // queries b0 .. b0 + m - 1; m == 1 is a lone query (the per-query task)
};

// Runs of at least kBlockMinQueries queries of one slot at consecutive lengths, cut into blocks
// counted from the run's start; empty when there are none (decode steps). rep = heads per KV head.
std::vector<QueryBlock> query_blocks(const int32_t* slots, const int32_t* lens, ptrdiff_t n, ptrdiff_t rep) {
  std::vector<QueryBlock> out;
  bool any = false;
  for (ptrdiff_t b = 0; b < n;) {
    ptrdiff_t e = b + 1;
    const auto slot = [&](ptrdiff_t i) { return slots != nullptr ? slots[i] : static_cast<int32_t>(i); };
    while (e < n && slot(e) == slot(b) && lens[e] == lens[e - 1] + 1) e++;
    if (e - b < kBlockMinQueries) {
      for (; b < e; b++) out.push_back({b, 1});
      continue;
    }
    any = true;
    for (; b < e;) {
      // S holds m·rep rows of lens[b + m − 1] scores: at most 4 MiB per thread.
      ptrdiff_t m = std::min(kBlockQueries, e - b);
      while (m > 1 && static_cast<double>(m * rep) * lens[b + m - 1] > (1 << 20)) m /= 2;
      out.push_back({b, m});
      b += m;
    }
  }
  if (!any) out.clear();
  return out;
}

thread_local std::vector<float> t_block;

void attention_block(const float* q, const float* k_cache, const float* v_cache, float* out, ptrdiff_t slot,
                     const int32_t* lens, ptrdiff_t b0, ptrdiff_t m, ptrdiff_t g, ptrdiff_t heads, ptrdiff_t kv_heads,
                     ptrdiff_t d, ptrdiff_t max_len, float scale) {
  const ptrdiff_t rep = heads / kv_heads, rows = m * rep, L = lens[b0 + m - 1];
  t_block.resize(static_cast<size_t>(2 * rows * d + rows * L));
  float* Q = t_block.data();
  float* O = Q + rows * d;
  float* S = O + rows * d;
  for (ptrdiff_t i = 0; i < m; i++)
    std::memcpy(Q + i * rep * d, q + ((b0 + i) * heads + g * rep) * d, sizeof(float) * rep * d);
  const float* K = k_cache + (slot * kv_heads + g) * max_len * d;
  const float* V = v_cache + (slot * kv_heads + g) * max_len * d;
  gemm_serial(false, true, rows, L, d, scale, Q, d, K, d, 0.0f, S, L);
  for (ptrdiff_t i = 0; i < m; i++) {
    const ptrdiff_t len = lens[b0 + i];
    for (ptrdiff_t r = 0; r < rep; r++) {
      float* row = S + (i * rep + r) * L;
      softmax_inplace(row, len);
      std::fill(row + len, row + L, 0.0f);
    }
  }
  gemm_serial(false, false, rows, d, L, 1.0f, S, L, V, d, 0.0f, O, d);
  for (ptrdiff_t i = 0; i < m; i++)
    std::memcpy(out + ((b0 + i) * heads + g * rep) * d, O + i * rep * d, sizeof(float) * rep * d);
}

// One task per (query b, KV head g): the query heads that share g read its cached keys and values
// once, each key block from L1 for all of them; scores are dot products reduced four keys at a time.
// T is the cache's element type: float, or f16 (widened exactly as it is loaded, so the f16 cache
// computes what the float code would on the rounded values).
// With prefix_slots, query b reads positions 0..prefix_lens[b]-1 from slot prefix_slots[b] (a prompt
// shared by the samples of a request) and the rest from its own slot, in the same order and with
// the same arithmetic as if they had been copied there.
template <class T>
void attention_decode_t(const float* q, const T* k_cache, const T* v_cache, float* out, const int32_t* slots,
                        const int32_t* lens, ptrdiff_t n, ptrdiff_t heads, ptrdiff_t kv_heads, ptrdiff_t d,
                        ptrdiff_t max_len, float scale, ptrdiff_t window, const int32_t* prefix_slots,
                        const int32_t* prefix_lens) {
  const ptrdiff_t rep = heads / kv_heads;
  ptrdiff_t flops = 0;
  for (ptrdiff_t b = 0; b < n; b++) flops += 4 * heads * lens[b] * d;
  const size_t per_worker = static_cast<size_t>(rep * max_len);
  t_scores.resize(static_cast<size_t>(threads()) * per_worker);
  float* rows = t_scores.data();
  const auto task = [&](ptrdiff_t bg, int worker) {
    const ptrdiff_t b = bg / kv_heads, g = bg % kv_heads;
    // A sliding window reads only the last `window` positions of the slot.
    const ptrdiff_t lo = window > 0 ? std::max<ptrdiff_t>(0, lens[b] - window) : 0;
    const ptrdiff_t len = lens[b] - lo;
    const ptrdiff_t slot = slots != nullptr ? slots[b] : b;
    const T* kc = k_cache + (slot * kv_heads + g) * max_len * d + lo * d;
    const T* vc = v_cache + (slot * kv_heads + g) * max_len * d + lo * d;
    // Window positions 0..shared-1 (absolute lo..lo+shared-1) are the prefix slot's, at kp/vp.
    ptrdiff_t shared = 0;
    const T* kp = kc;
    const T* vp = vc;
    if (prefix_slots != nullptr && prefix_lens[b] > lo) {
      shared = std::min<ptrdiff_t>(prefix_lens[b] - lo, len);
      kp = k_cache + (prefix_slots[b] * kv_heads + g) * max_len * d + lo * d;
      vp = v_cache + (prefix_slots[b] * kv_heads + g) * max_len * d + lo * d;
    }
    const auto key = [&](ptrdiff_t j) { return (j < shared ? kp : kc) + j * d; };
    // Query heads g*rep .. g*rep + rep - 1 are consecutive rows of q and out.
    const float* qg = q + (b * heads + g * rep) * d;
    float* og = out + (b * heads + g * rep) * d;
    float* p = rows + static_cast<size_t>(worker) * per_worker;
    ptrdiff_t j = 0;
    for (; j + 4 <= len; j += 4) {
      const T* ks[4] = {key(j), key(j + 1), key(j + 2), key(j + 3)};
      for (ptrdiff_t r = 0; r < rep; r++) scores4(qg + r * d, ks, d, scale, p + r * max_len + j);
    }
    for (; j < len; j++)
      for (ptrdiff_t r = 0; r < rep; r++) p[r * max_len + j] = score1(qg + r * d, key(j), d, scale);
    for (ptrdiff_t r = 0; r < rep; r++) softmax_inplace(p + r * max_len, len);
    // out_r = sum_t p[r][t] v_t, for up to 4 heads x 4 vectors of d at a time in registers.
    for (ptrdiff_t r0 = 0; r0 < rep; r0 += 4) {
      const int rs = static_cast<int>(std::min<ptrdiff_t>(4, rep - r0));
      for (ptrdiff_t c0 = 0; c0 < d; c0 += 4 * VW) {
        const ptrdiff_t width = std::min<ptrdiff_t>(4 * VW, d - c0);
        const int nv = static_cast<int>((width + VW - 1) / VW);
        vf acc[4][4];
        for (int r = 0; r < 4; r++)
          for (int i = 0; i < 4; i++) acc[r][i] = splat(0.0f);
        // Two runs over the positions (the shared prefix's, then the slot's own): one order of sums.
        for (int part = 0; part < 2; part++) {
          const T* base = part == 0 ? vp : vc;
          const ptrdiff_t t0 = part == 0 ? 0 : shared, t1 = part == 0 ? shared : len;
          for (ptrdiff_t t = t0; t < t1; t++) {
            const T* vt = base + t * d + c0;
            vf v[4];
            for (int i = 0; i < nv; i++) v[i] = (i + 1) * VW <= width ? loadw(vt + i * VW) : loadw_part(vt + i * VW, width - i * VW);
            for (int r = 0; r < rs; r++) {
              const float w = p[(r0 + r) * max_len + t];
              for (int i = 0; i < nv; i++) acc[r][i] += w * v[i];
            }
          }
        }
        for (int r = 0; r < rs; r++) {
          float* o = og + (r0 + r) * d + c0;
          for (int i = 0; i < nv; i++) {
            if ((i + 1) * VW <= width) {
              store(o + i * VW, acc[r][i]);
            } else {
              for (ptrdiff_t c = 0; c < width - i * VW; c++) o[i * VW + c] = acc[r][i][c];
            }
          }
        }
      }
    }
  };
  if constexpr (std::is_same_v<T, float>) {
    // A prompt's queries only: the blocks read one slot, so rows reading a shared prefix take `task`.
    if (window == 0 && prefix_slots == nullptr && n >= kBlockMinQueries) {
      std::vector<QueryBlock> blocks = query_blocks(slots, lens, n, rep);
      if (!blocks.empty()) {
        const ptrdiff_t nb = static_cast<ptrdiff_t>(blocks.size());
        parallel_for(nb * kv_heads, [&](ptrdiff_t t, int worker) {
          const QueryBlock& qb = blocks[static_cast<size_t>(t / kv_heads)];
          const ptrdiff_t g = t % kv_heads;
          if (qb.m == 1) task(qb.b0 * kv_heads + g, worker);
          else
            attention_block(q, k_cache, v_cache, out, slots != nullptr ? slots[qb.b0] : qb.b0, lens, qb.b0, qb.m, g,
                            heads, kv_heads, d, max_len, scale);
        });
        return;
      }
    }
  }
  if (flops < (1 << 18)) {
    for (ptrdiff_t i = 0; i < n * kv_heads; i++) task(i, 0);
  } else {
    parallel_for(n * kv_heads, task);
  }
}

}  // namespace

void attention_decode(const float* q, const float* k_cache, const float* v_cache, float* out, const int32_t* slots,
                      const int32_t* lens, ptrdiff_t n, ptrdiff_t heads, ptrdiff_t kv_heads, ptrdiff_t d,
                      ptrdiff_t max_len, float scale, ptrdiff_t window, const int32_t* prefix_slots,
                      const int32_t* prefix_lens) {
  attention_decode_t(q, k_cache, v_cache, out, slots, lens, n, heads, kv_heads, d, max_len, scale, window, prefix_slots,
                     prefix_lens);
}

void attention_decode_f16(const float* q, const uint16_t* k_cache, const uint16_t* v_cache, float* out,
                          const int32_t* slots, const int32_t* lens, ptrdiff_t n, ptrdiff_t heads, ptrdiff_t kv_heads,
                          ptrdiff_t d, ptrdiff_t max_len, float scale, ptrdiff_t window, const int32_t* prefix_slots,
                          const int32_t* prefix_lens) {
  attention_decode_t(q, reinterpret_cast<const f16*>(k_cache), reinterpret_cast<const f16*>(v_cache), out, slots, lens,
                     n, heads, kv_heads, d, max_len, scale, window, prefix_slots, prefix_lens);
}

namespace {

// Row i of k and v to position positions[i] of slot slots[i], each head's head_dim values through
// put(src, dst, n) (a copy, or the rounding to f16).
template <class T, class Put>
void kv_store_t(const float* k, const float* v, T* k_cache, T* v_cache, const int32_t* slots, const int32_t* positions,
                ptrdiff_t n, ptrdiff_t kv_heads, ptrdiff_t head_dim, ptrdiff_t max_len, Put&& put) {
  const ptrdiff_t kw = kv_heads * head_dim;
  for (ptrdiff_t i = 0; i < n; i++) {
    for (ptrdiff_t g = 0; g < kv_heads; g++) {
      const ptrdiff_t dst = ((slots[i] * kv_heads + g) * max_len + positions[i]) * head_dim;
      put(k + i * kw + g * head_dim, k_cache + dst, head_dim);
      put(v + i * kw + g * head_dim, v_cache + dst, head_dim);
    }
  }
}

}  // namespace

void kv_store(const float* k, const float* v, float* k_cache, float* v_cache, const int32_t* slots,
              const int32_t* positions, ptrdiff_t n, ptrdiff_t kv_heads, ptrdiff_t head_dim, ptrdiff_t max_len) {
  kv_store_t(k, v, k_cache, v_cache, slots, positions, n, kv_heads, head_dim, max_len,
             [](const float* src, float* dst, ptrdiff_t m) { std::memcpy(dst, src, sizeof(float) * m); });
}

void kv_store_f16(const float* k, const float* v, uint16_t* k_cache, uint16_t* v_cache, const int32_t* slots,
                  const int32_t* positions, ptrdiff_t n, ptrdiff_t kv_heads, ptrdiff_t head_dim, ptrdiff_t max_len) {
  kv_store_t(k, v, k_cache, v_cache, slots, positions, n, kv_heads, head_dim, max_len, narrow_f16);
}

namespace {

// Lowest index of the largest value (NaN never wins).
ptrdiff_t argmax(const float* z, ptrdiff_t n) {
  ptrdiff_t best = 0;
  for (ptrdiff_t i = 1; i < n; i++)
    if (z[i] > z[best]) best = i;
  return best;
}

// Elements per block of the CDF walk: the walk adds whole blocks until the one where the
// cumulative weight crosses the target, then walks that block element by element.
constexpr ptrdiff_t kWalkBlock = 256;

inline float vmax_row(const float* z, ptrdiff_t n) {
  vf mv = splat(-__builtin_inff());
  ptrdiff_t i = 0;
  for (; i + VW <= n; i += VW) {
    const vf x = load(z + i);
    mv = x > mv ? x : mv;
  }
  float mx = hmax(mv);
  for (; i < n; i++) mx = z[i] > mx ? z[i] : mx;
  return mx;
}

// e[i] = exp(z[i] * inv_t - m) for i < n, with m = max(z) * inv_t; block[b] = the sum of block b
// (float lanes, then float64); returns the float64 sum of the blocks in order.
double softmax_weights(const float* z, ptrdiff_t n, float inv_t, float* e, double* block, float* m_out) {
  const float m = vmax_row(z, n) * inv_t;
  *m_out = m;
  double sum = 0;
  for (ptrdiff_t b0 = 0; b0 < n; b0 += kWalkBlock) {
    const ptrdiff_t b1 = std::min(n, b0 + kWalkBlock);
    vf acc = splat(0.0f);
    ptrdiff_t i = b0;
    for (; i + VW <= b1; i += VW) {
      const vf x = vexp(load(z + i) * inv_t - m);
      store(e + i, x);
      acc += x;
    }
    float s = tree_hsum(acc);
    if (i < b1) {
      float tmp[VW];
      for (ptrdiff_t j = i; j < b1; j++) tmp[j - i] = z[j] * inv_t - m;
      vexp_tail(tmp, e + i, static_cast<int>(b1 - i));
      for (ptrdiff_t j = i; j < b1; j++) s += e[j];
    }
    block[b0 / kWalkBlock] = s;
    sum += s;
  }
  return sum;
}

// The first index where the running sum of e exceeds target: whole blocks first, then inside the
// crossing block. Rounding can leave the running sum a hair below the target (u close to 1), or
// make a block's elements fall short of its block sum; then the last index with a nonzero weight
// (in that block, or overall) is taken.
ptrdiff_t cdf_walk(const float* e, const double* block, ptrdiff_t n, double target) {
  double acc = 0;
  for (ptrdiff_t b0 = 0; b0 < n; b0 += kWalkBlock) {
    const double bs = block[b0 / kWalkBlock];
    if (acc + bs <= target) {
      acc += bs;
      continue;
    }
    const ptrdiff_t b1 = std::min(n, b0 + kWalkBlock);
    ptrdiff_t last = -1;
    for (ptrdiff_t i = b0; i < b1; i++) {
      if (e[i] > 0) last = i;
      acc += e[i];
      if (acc > target) return i;
    }
    if (last >= 0) return last;
  }
  for (ptrdiff_t i = n - 1; i > 0; i--)
    if (e[i] > 0) return i;
  return 0;
}

inline double m_plus_log(double sum, float m) { return static_cast<double>(m) + std::log(sum); }

thread_local std::vector<float> t_weights;
thread_local std::vector<double> t_blocks;

}  // namespace

void sample_rows(const float* logits, ptrdiff_t rows, ptrdiff_t vocab, const float* temperatures, const double* uniforms,
                 int32_t* tokens, double* logprobs) {
  const auto row = [&](ptrdiff_t r, int) {
    const float* z = logits + r * vocab;
    t_weights.resize(static_cast<size_t>(vocab));
    t_blocks.resize(static_cast<size_t>((vocab + kWalkBlock - 1) / kWalkBlock));
    float* e = t_weights.data();
    double* blocks = t_blocks.data();
    const float t = temperatures[r];
    float m;
    if (t == 0.0f) {
      const ptrdiff_t tok = argmax(z, vocab);
      const double sum = softmax_weights(z, vocab, 1.0f, e, blocks, &m);
      tokens[r] = static_cast<int32_t>(tok);
      logprobs[r] = static_cast<double>(z[tok]) - m_plus_log(sum, m);
      return;
    }
    const float inv_t = 1.0f / t;
    const double sum = softmax_weights(z, vocab, inv_t, e, blocks, &m);
    const ptrdiff_t tok = cdf_walk(e, blocks, vocab, uniforms[r] * sum);
    tokens[r] = static_cast<int32_t>(tok);
    logprobs[r] = static_cast<double>(z[tok] * inv_t) - m_plus_log(sum, m);
  };
  if (rows * vocab < (1 << 16)) {
    for (ptrdiff_t r = 0; r < rows; r++) row(r, 0);
  } else {
    parallel_for(rows, row);
  }
}

double read_bandwidth_probe(const float* x, ptrdiff_t n) {
  constexpr ptrdiff_t chunk = 1 << 20;
  const ptrdiff_t chunks = (n + chunk - 1) / chunk;
  std::vector<float> part(static_cast<size_t>(chunks), 0.0f);
  parallel_for(chunks, [&](ptrdiff_t c, int) {
    const ptrdiff_t i0 = c * chunk, i1 = std::min(n, i0 + chunk);
    vf a0 = splat(0.0f), a1 = splat(0.0f), a2 = splat(0.0f), a3 = splat(0.0f);
    ptrdiff_t i = i0;
    for (; i + 4 * VW <= i1; i += 4 * VW) {
      a0 += load(x + i);
      a1 += load(x + i + VW);
      a2 += load(x + i + 2 * VW);
      a3 += load(x + i + 3 * VW);
    }
    float s = hsum(a0 + a1 + a2 + a3);
    for (; i < i1; i++) s += x[i];
    part[c] = s;
  });
  double s = 0;
  for (float p : part) s += p;
  return s;
}

}  // namespace ck
