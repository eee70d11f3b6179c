// Matrix product: OpenBLAS when the build found it, else our own packed, register-tiled kernel.
//
// The packed kernel follows the usual Goto/BLIS structure: for each KC-deep slice of K, op(A) is
// packed into MR-row panels (alpha folded in) and op(B) into NR-column panels; the MR x NR
// micro-kernel then keeps a block of C in vector registers for the whole slice. Transposes only
// change how the packing reads its source. C is cut into tiles that threads take dynamically;
// tiles shrink when there are too few of them, so small M (decode GEMVs) still uses every core.

#include "decode.h"
#include "half.h"
#include "kernels.h"
#include "simd.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <vector>

#ifdef CK_HAVE_OPENBLAS
#include <cblas.h>
#endif
#if defined(__AVX512F__)
// GCC 12 warns that _mm512_undefined_ps() (the unused pass-through of unpack*) is uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace ck {

namespace {

// With AVX-512 our packed kernel is the default even when OpenBLAS is linked: on the project's
// Zen 5 machines Debian's OpenBLAS 0.3.21 (no Zen 5 kernels, so its AVX2 ones) ran the training
// products at 110-125 GFLOP per CPU-second against 205-240 here, and its results changed with the
// thread count. With AVX2 only, OpenBLAS stays the default. COOKBOOK_GEMM overrides (addon.cc).
std::atomic<GemmBackend> g_backend{
#if defined(CK_HAVE_OPENBLAS) && !defined(__AVX512F__)
    GemmBackend::OpenBLAS
#else
    GemmBackend::Packed
#endif
};

constexpr int MR = 6;
constexpr int NR = 2 * VW;
constexpr int MC = 32 * MR;  // rows per tile: its packed A block stays in L2, and fewer tiles repack B less
// Block sizes, set at run time (set_gemm_blocks): the defaults were tuned on Zen 5, and the engine
// may pick others per CPU (src/engine/kernels/gemmTune.ts). KC: depth of a K slice; the B
// micro-panel (KC x NR floats) should stay in L1 while A panels stream from L2. NT: columns per
// tile (the widest column stripe), KC x NT floats of packed B per task.
constexpr int kDefaultKC = VW == 16 ? 192 : 256;
constexpr int kDefaultNT = VW == 16 ? 8 * NR : 16 * NR;  // 256 floats either way
std::atomic<int> g_kc{kDefaultKC};
std::atomic<int> g_nt{kDefaultNT};
std::atomic<bool> g_pack_a{false};
constexpr ptrdiff_t kPackAMinN = 256;  // pack A even when not transposed (else it is read in place)

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};

// Per calling thread (the JS thread, or each worker), grown on demand and reused across calls.
struct Scratch {
  std::unique_ptr<float, AlignedFree> buf;
  size_t cap = 0;
  float* get(size_t n) {
    if (n > cap) {
      size_t bytes = ((n * sizeof(float)) + 63) / 64 * 64;
      buf.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      if (!buf) throw std::bad_alloc();
      cap = bytes / sizeof(float);
    }
    return buf.get();
  }
};
thread_local Scratch t_apack;
thread_local Scratch t_bpack;

// Packed: a is an A panel, a[k * MR + r]. DirectA: a points at row 0 of op(A) stored row-major
// (not transposed), a[r * lda + k], and alpha scales the update instead of the packed panel.
// b is a packed B micro-panel, b[k * NR + j]. (Reading an unpacked B in place was tried for
// products of few rows: slower, as rows of B a power-of-two apart share cache sets.)
template <int R, bool DirectA>
inline void micro(int kc, const float* __restrict a, ptrdiff_t lda, const float* __restrict b, float* __restrict c,
                  ptrdiff_t ldc, int nr, float alpha) {
  vf acc0[R], acc1[R];
#pragma GCC unroll 6
  for (int r = 0; r < R; r++) {
    acc0[r] = splat(0.0f);
    acc1[r] = splat(0.0f);
    // C is read at the end, after kc steps: fetch it now so the update does not wait on memory
    // (C of a large product lives in L3 or DRAM; perf showed the kernel stalling there).
    __builtin_prefetch(c + r * ldc, 1, 3);
    __builtin_prefetch(c + r * ldc + NR - 1, 1, 3);
  }
  for (int k = 0; k < kc; k++) {
    const vf b0 = *reinterpret_cast<const vf*>(b + k * NR);
    const vf b1 = *reinterpret_cast<const vf*>(b + k * NR + VW);
#pragma GCC unroll 6
    for (int r = 0; r < R; r++) {
      const float av = DirectA ? a[r * lda + k] : a[k * MR + r];
      acc0[r] += av * b0;
      acc1[r] += av * b1;
    }
  }
  if (DirectA && alpha != 1.0f) {
#pragma GCC unroll 6
    for (int r = 0; r < R; r++) {
      acc0[r] *= alpha;
      acc1[r] *= alpha;
    }
  }
  if (nr == NR) {
#pragma GCC unroll 6
    for (int r = 0; r < R; r++) {
      float* cr = c + r * ldc;
      store(cr, load(cr) + acc0[r]);
      store(cr + VW, load(cr + VW) + acc1[r]);
    }
  } else {
    for (int r = 0; r < R; r++) {
      float tmp[NR];
      store(tmp, acc0[r]);
      store(tmp + VW, acc1[r]);
      float* cr = c + r * ldc;
      for (int j = 0; j < nr; j++) cr[j] += tmp[j];
    }
  }
}

template <bool DirectA = false>
inline void micro_rows(int rows, int kc, const float* a, const float* b, float* c, ptrdiff_t ldc, int nr,
                       ptrdiff_t lda = 0, float alpha = 1.0f) {
  switch (rows) {
    case 6: micro<6, DirectA>(kc, a, lda, b, c, ldc, nr, alpha); break;
    case 5: micro<5, DirectA>(kc, a, lda, b, c, ldc, nr, alpha); break;
    case 4: micro<4, DirectA>(kc, a, lda, b, c, ldc, nr, alpha); break;
    case 3: micro<3, DirectA>(kc, a, lda, b, c, ldc, nr, alpha); break;
    case 2: micro<2, DirectA>(kc, a, lda, b, c, ldc, nr, alpha); break;
    default: micro<1, DirectA>(kc, a, lda, b, c, ldc, nr, alpha); break;
  }
}

// Ap[panel][k][r] = alpha * op(A)[i0 + r, pc + k]
void pack_a_panel(bool tA, ptrdiff_t lda, const float* A, float alpha, ptrdiff_t i0, int rows, ptrdiff_t pc, int kc,
                  float* dst) {
  if (tA) {
    for (int k = 0; k < kc; k++) {
      const float* src = A + (pc + k) * lda + i0;
      float* d = dst + k * MR;
      for (int r = 0; r < rows; r++) d[r] = alpha * src[r];
      for (int r = rows; r < MR; r++) d[r] = 0;
    }
  } else {
    for (int r = 0; r < rows; r++) {
      const float* src = A + (i0 + r) * lda + pc;
      for (int k = 0; k < kc; k++) dst[k * MR + r] = alpha * src[k];
    }
    for (int r = rows; r < MR; r++)
      for (int k = 0; k < kc; k++) dst[k * MR + r] = 0;
  }
}

#if defined(__AVX512F__)
// GCC 12 reports "'__Y' is used uninitialized" inside the unmasked forms of these shuffles once
// they are inlined (they merge into _mm512_undefined_*()), and a clean install must print no
// warning. The masked forms with an all-ones mask and a defined source are the same instructions.
inline __m512 unpacklo_ps(__m512 a, __m512 b) { return _mm512_mask_unpacklo_ps(a, 0xFFFF, a, b); }
inline __m512 unpackhi_ps(__m512 a, __m512 b) { return _mm512_mask_unpackhi_ps(a, 0xFFFF, a, b); }
inline __m512d unpacklo_pd(__m512d a, __m512d b) { return _mm512_mask_unpacklo_pd(a, 0xFF, a, b); }
inline __m512d unpackhi_pd(__m512d a, __m512d b) { return _mm512_mask_unpackhi_pd(a, 0xFF, a, b); }
template <int imm>
inline __m512 shuffle_f32x4(__m512 a, __m512 b) {
  return _mm512_mask_shuffle_f32x4(a, 0xFFFF, a, b, imm);
}

// In place: r[i][j] becomes r[j][i]. Interleave pairs of rows (32-bit, then 64-bit elements) so
// that lane L of u[4i + c] holds column 4L + c of rows 4i..4i+3, then gather the four lanes of
// each column across registers with two rounds of 128-bit lane shuffles.
inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; i++) {
    t[2 * i] = unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  __m512 u[16];
  for (int i = 0; i < 4; i++) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 2]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 1]), d = _mm512_castps_pd(t[4 * i + 3]);
    u[4 * i] = _mm512_castpd_ps(unpacklo_pd(a, b));
    u[4 * i + 1] = _mm512_castpd_ps(unpackhi_pd(a, b));
    u[4 * i + 2] = _mm512_castpd_ps(unpacklo_pd(c, d));
    u[4 * i + 3] = _mm512_castpd_ps(unpackhi_pd(c, d));
  }
  for (int c = 0; c < 4; c++) {
    const __m512 v = shuffle_f32x4<0x44>(u[c], u[4 + c]), w = shuffle_f32x4<0x44>(u[8 + c], u[12 + c]);
    const __m512 v2 = shuffle_f32x4<0xEE>(u[c], u[4 + c]), w2 = shuffle_f32x4<0xEE>(u[8 + c], u[12 + c]);
    r[c] = shuffle_f32x4<0x88>(v, w);
    r[4 + c] = shuffle_f32x4<0xDD>(v, w);
    r[8 + c] = shuffle_f32x4<0x88>(v2, w2);
    r[12 + c] = shuffle_f32x4<0xDD>(v2, w2);
  }
}
#endif

// Bp[panel][k][j] = op(B)[pc + k, j0 + j], zero past the last column. TB is float, or bf16 / f16
// for frozen weights kept in 16 bits (half.h): they are widened here, so the panels, and everything
// the micro-kernel computes from them, are the same as for a widened copy of B.
template <class TB>
void pack_b_panel(bool tB, ptrdiff_t ldb, const TB* B, ptrdiff_t j0, int cols, ptrdiff_t pc, int kc, float* dst) {
  if (!tB) {
    for (int k = 0; k < kc; k++) {
      const TB* src = B + (pc + k) * ldb + j0;
      float* d = dst + k * NR;
      if (cols == NR) {
        store(d, loadw(src));
        store(d + VW, loadw(src + VW));
      } else {
        for (int j = 0; j < cols; j++) d[j] = widen(src[j]);
        for (int j = cols; j < NR; j++) d[j] = 0;
      }
    }
  } else {
    int k0 = 0;
#if defined(__AVX512F__)
    // Whole 16 x 16 blocks through registers: the scalar loop's strided stores made this pack a
    // third of the head's forward product (x W^T over a 150k vocabulary, few rows).
    if (cols == NR) {
      for (; k0 + 16 <= kc; k0 += 16)
        for (int h = 0; h < NR / 16; h++) {
          __m512 r[16];
          for (int i = 0; i < 16; i++) r[i] = (__m512)loadw(B + (j0 + h * 16 + i) * ldb + pc + k0);
          transpose16(r);
          for (int i = 0; i < 16; i++) _mm512_storeu_ps(dst + (k0 + i) * NR + h * 16, r[i]);
        }
    }
#endif
    for (int j = 0; j < cols; j++) {
      const TB* src = B + (j0 + j) * ldb + pc;
      for (int k = k0; k < kc; k++) dst[k * NR + j] = widen(src[k]);
    }
    for (int j = cols; j < NR; j++)
      for (int k = k0; k < kc; k++) dst[k * NR + j] = 0;
  }
}

}  // namespace

bool have_openblas() {
#ifdef CK_HAVE_OPENBLAS
  return true;
#else
  return false;
#endif
}

GemmBackend gemm_backend() { return g_backend.load(std::memory_order_relaxed); }
GemmBlocks gemm_blocks() {
  return {g_kc.load(std::memory_order_relaxed), g_nt.load(std::memory_order_relaxed), MR, NR, kDefaultKC, kDefaultNT,
          g_pack_a.load(std::memory_order_relaxed)};
}
bool set_gemm_blocks(int kc, int nc, bool pack_a) {
  if (kc < 8 || kc > 2048 || kc % 8 != 0 || nc < NR || nc > 4096 || nc % NR != 0) return false;
  g_kc.store(kc, std::memory_order_relaxed);
  g_nt.store(nc, std::memory_order_relaxed);
  g_pack_a.store(pack_a, std::memory_order_relaxed);
  return true;
}
void set_gemm_backend(GemmBackend b) { g_backend.store(b, std::memory_order_relaxed); }

namespace {

// One block of C (rows i0.., cols j0..), computed start to finish on the calling thread with its
// own packed copies of the A rows and B columns it needs. Leading dimensions are explicit so that
// callers (attention) can multiply strided sub-matrices in place.
void compute_tile(bool tA, bool tB, ptrdiff_t K, float alpha, const float* A, ptrdiff_t lda, const float* B,
                  ptrdiff_t ldb, float beta, float* C, ptrdiff_t ldc, ptrdiff_t i0, ptrdiff_t rows, ptrdiff_t j0,
                  ptrdiff_t cols) {
  for (ptrdiff_t i = i0; i < i0 + rows; i++) {
    float* c = C + i * ldc + j0;
    if (beta == 0.0f) std::fill(c, c + cols, 0.0f);
    else if (beta != 1.0f)
      for (ptrdiff_t j = 0; j < cols; j++) c[j] *= beta;
  }
  if (K <= 0 || alpha == 0.0f) return;
  const int KC = g_kc.load(std::memory_order_relaxed);
  const ptrdiff_t m_panels = (rows + MR - 1) / MR, n_panels = (cols + NR - 1) / NR;
  const ptrdiff_t kc_max = std::min<ptrdiff_t>(K, KC);
  // A not transposed is read in place (see gemm_packed).
  const bool direct = !tA;
  float* ap = direct ? nullptr : t_apack.get(static_cast<size_t>(m_panels * MR * kc_max));
  float* bp = t_bpack.get(static_cast<size_t>(n_panels * NR * kc_max));
  for (ptrdiff_t pc = 0; pc < K; pc += KC) {
    const int kc = static_cast<int>(std::min<ptrdiff_t>(KC, K - pc));
    if (!direct)
      for (ptrdiff_t p = 0; p < m_panels; p++)
        pack_a_panel(tA, lda, A, alpha, i0 + p * MR, static_cast<int>(std::min<ptrdiff_t>(MR, rows - p * MR)), pc,
                     kc, ap + p * MR * kc);
    for (ptrdiff_t p = 0; p < n_panels; p++)
      pack_b_panel(tB, ldb, B, j0 + p * NR, static_cast<int>(std::min<ptrdiff_t>(NR, cols - p * NR)), pc, kc,
                   bp + p * NR * kc);
    for (ptrdiff_t jp = 0; jp < n_panels; jp++) {
      const int nr = static_cast<int>(std::min<ptrdiff_t>(NR, cols - jp * NR));
      for (ptrdiff_t ip = 0; ip < m_panels; ip++) {
        const int r = static_cast<int>(std::min<ptrdiff_t>(MR, rows - ip * MR));
        float* c = C + (i0 + ip * MR) * ldc + j0 + jp * NR;
        if (direct) micro_rows<true>(r, kc, A + (i0 + ip * MR) * lda + pc, bp + jp * NR * kc, c, ldc, nr, lda, alpha);
        else micro_rows(r, kc, ap + ip * MR * kc, bp + jp * NR * kc, c, ldc, nr);
      }
    }
  }
}

// Few rows of C (decode-time products, M <= kSmallM): packing B would cost more than the
// arithmetic, so stream B directly. Columns are split across threads.
constexpr ptrdiff_t kSmallM = 4;
thread_local std::vector<float> t_arows;

thread_local std::vector<float> t_bwide;

// For 16-bit B each task first widens the part of B it reads (rows j0..j1 of B [N, K], or columns
// j0..j1 of B [K, N]) and runs the float32 code on that copy: the same arithmetic, so the same bits.
template <class TB>
void gemm_small_m(bool tA, bool tB, ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A,
                  const TB* B, float beta, float* C) {
  // Rows of op(A), contiguous and scaled by alpha.
  t_arows.resize(static_cast<size_t>(M * K));
  float* a = t_arows.data();
  for (ptrdiff_t i = 0; i < M; i++)
    for (ptrdiff_t k = 0; k < K; k++) a[i * K + k] = alpha * (tA ? A[k * M + i] : A[i * K + k]);
  const ptrdiff_t chunk = tB ? 64 : 512;
  const ptrdiff_t chunks = (N + chunk - 1) / chunk;
  const auto work = [&](ptrdiff_t c, int) {
    const ptrdiff_t j0 = c * chunk, j1 = std::min(N, j0 + chunk);
    float acc[kSmallM][512];
    for (ptrdiff_t i = 0; i < M; i++) std::fill(acc[i], acc[i] + (j1 - j0), 0.0f);
    // op(B) as floats: rows of B [N, K] at brow + j * K, or rows of B [K, N] at brow + k * bstride + j0.
    const float* brow;
    ptrdiff_t bstride = N, boff = j0;
    if constexpr (std::is_same_v<TB, float>) {
      brow = B;
    } else {
      t_bwide.resize(static_cast<size_t>((j1 - j0) * K));
      float* w = t_bwide.data();
      if (tB) {
        widen_row(B + j0 * K, w, (j1 - j0) * K);
        brow = w - j0 * K;
      } else {
        for (ptrdiff_t k = 0; k < K; k++) widen_row(B + k * N + j0, w + k * (j1 - j0), j1 - j0);
        brow = w;
        bstride = j1 - j0;
        boff = 0;
      }
    }
    if (tB) {
      for (ptrdiff_t j = j0; j < j1; j++) {
        const float* b = brow + j * K;
        for (ptrdiff_t i = 0; i < M; i++) {
          const float* ai = a + i * K;
          acc[i][j - j0] = vdot(ai, b, K);
        }
      }
    } else {
      for (ptrdiff_t k = 0; k < K; k++) {
        const float* b = brow + k * bstride + boff;
        for (ptrdiff_t i = 0; i < M; i++) {
          const float av = a[i * K + k];
          float* ac = acc[i];
#pragma omp simd
          for (ptrdiff_t j = 0; j < j1 - j0; j++) ac[j] += av * b[j];
        }
      }
    }
    for (ptrdiff_t i = 0; i < M; i++) {
      float* c = C + i * N;
      if (beta == 0.0f) {
        for (ptrdiff_t j = j0; j < j1; j++) c[j] = acc[i][j - j0];
      } else {
        for (ptrdiff_t j = j0; j < j1; j++) c[j] = acc[i][j - j0] + beta * c[j];
      }
    }
  };
  if (M * N * K < (1 << 16)) {
    for (ptrdiff_t c = 0; c < chunks; c++) work(c, 0);
  } else {
    parallel_for(chunks, work);
  }
}

}  // namespace

namespace {

// op(A) packed once per call (per chunk of K) and shared by every task, instead of every tile
// packing its own rows: with tiles of 192 x 256, a 1024 x 3072 x 1024 product packed A 12 times
// and B 6 times, and the transposing packs then took a quarter of the product's time (perf).
// At most this many floats are packed at once; a longer K is done in chunks of it.
constexpr ptrdiff_t kPackedABudget = ptrdiff_t{1} << 20;

thread_local Scratch t_apack_shared;

// Slice s (depth kc_s) of the packed A starts at s * KC * Mp (Mp = panels * MR); panel p of a
// slice at p * MR * kc_s, as pack_a_panel lays it out.
void pack_a_shared(bool tA, ptrdiff_t lda, const float* A, float alpha, ptrdiff_t M, ptrdiff_t k0, ptrdiff_t k1,
                   float* ap, int KC) {
  const ptrdiff_t m_panels = (M + MR - 1) / MR, mp = m_panels * MR;
  const ptrdiff_t slices = (k1 - k0 + KC - 1) / KC;
  constexpr ptrdiff_t kPanelsPerTask = 16;
  const ptrdiff_t groups = (m_panels + kPanelsPerTask - 1) / kPanelsPerTask;
  const auto task = [&](ptrdiff_t t, int) {
    const ptrdiff_t s = t / groups, g = t % groups;
    const ptrdiff_t pc = k0 + s * KC;
    const int kc = static_cast<int>(std::min<ptrdiff_t>(KC, k1 - pc));
    float* slice = ap + s * KC * mp;
    for (ptrdiff_t p = g * kPanelsPerTask; p < std::min(m_panels, (g + 1) * kPanelsPerTask); p++)
      pack_a_panel(tA, lda, A, alpha, p * MR, static_cast<int>(std::min<ptrdiff_t>(MR, M - p * MR)), pc, kc,
                   slice + p * MR * kc);
  };
  const ptrdiff_t n = slices * groups;
  if (n == 1 || static_cast<double>(mp) * static_cast<double>(k1 - k0) < (1 << 16)) {
    for (ptrdiff_t t = 0; t < n; t++) task(t, 0);
  } else {
    parallel_for(n, task);
  }
}

// C[i0.., j0..] over K range [k0, k1) from the shared packed A: the B columns are packed once per
// KC slice and reused for every row of the block (Goto's loop order: B slice in L2, one B
// micro-panel in L1, A panels of MC rows streaming from L2). `first` applies beta.
// With `direct` (op(A) = A, not transposed) the micro-kernel reads A's rows in place (ap = A,
// mp = lda) and applies alpha itself: no packing of A at all.
template <class TB>
void tile_from_packed_a(bool tB, ptrdiff_t ldb, const TB* B, float* C, ptrdiff_t N, const float* ap, ptrdiff_t mp,
                        ptrdiff_t M, ptrdiff_t k0, ptrdiff_t k1, bool first, float beta, ptrdiff_t i0,
                        ptrdiff_t rows, ptrdiff_t j0, ptrdiff_t cols, bool direct, float alpha, int KC) {
  if (first && beta != 1.0f) {
    for (ptrdiff_t i = i0; i < i0 + rows; i++) {
      float* c = C + i * N + j0;
      if (beta == 0.0f) std::fill(c, c + cols, 0.0f);
      else
        for (ptrdiff_t j = 0; j < cols; j++) c[j] *= beta;
    }
  }
  const ptrdiff_t n_panels = (cols + NR - 1) / NR;
  float* bp = t_bpack.get(static_cast<size_t>(n_panels * NR * std::min<ptrdiff_t>(KC, k1 - k0)));
  for (ptrdiff_t pc = k0; pc < k1; pc += KC) {
    const int kc = static_cast<int>(std::min<ptrdiff_t>(KC, k1 - pc));
    for (ptrdiff_t p = 0; p < n_panels; p++)
      pack_b_panel(tB, ldb, B, j0 + p * NR, static_cast<int>(std::min<ptrdiff_t>(NR, cols - p * NR)), pc, kc,
                   bp + p * NR * kc);
    const float* slice = direct ? nullptr : ap + (pc - k0) * mp;
    for (ptrdiff_t ib = i0; ib < i0 + rows; ib += MC) {
      const ptrdiff_t ie = std::min(i0 + rows, ib + MC);
      for (ptrdiff_t jp = 0; jp < n_panels; jp++) {
        const int nr = static_cast<int>(std::min<ptrdiff_t>(NR, cols - jp * NR));
        const float* b = bp + jp * NR * kc;
        float* c = C + j0 + jp * NR;
        for (ptrdiff_t i = ib; i < ie; i += MR) {
          const int r = static_cast<int>(std::min<ptrdiff_t>(MR, M - i));
          if (direct) micro_rows<true>(r, kc, ap + i * mp + pc, b, c + i * N, N, nr, mp, alpha);
          else micro_rows(r, kc, slice + i * kc, b, c + i * N, N, nr);
        }
      }
    }
  }
}

}  // namespace

namespace {

// A transposed times a few columns (the adapter gradient dB = dy^T (x A^T), [out, rank] over the
// tokens): packing op(A) moves M*K floats for 2*N flops each. C^T = op(B)^T A^T instead packs A
// as the B operand, a plain copy, and reads op(B)^T in place or packs N*K floats.
constexpr ptrdiff_t kSkinnyN = 64;
thread_local std::vector<float> t_ct;

void gemm_transposed(bool tB, ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A, const float* B,
                     float beta, float* C) {
  // op(B)^T is B itself when B is stored [N, K] (tB), else B stored [K, N] read transposed.
  t_ct.resize(static_cast<size_t>(N * M));
  float* ct = t_ct.data();
  gemm_packed(!tB, false, N, M, K, alpha, B, A, 0.0f, ct);
  parallel_range(M, std::max<ptrdiff_t>(1, (1 << 14) / N), [&](ptrdiff_t i0, ptrdiff_t i1, int) {
    for (ptrdiff_t i = i0; i < i1; i++) {
      float* c = C + i * N;
      if (beta == 0.0f) {
        for (ptrdiff_t j = 0; j < N; j++) c[j] = ct[j * M + i];
      } else {
        for (ptrdiff_t j = 0; j < N; j++) c[j] = ct[j * M + i] + beta * c[j];
      }
    }
  });
}

}  // namespace

namespace {

template <class TB>
void gemm_packed_t(bool tA, bool tB, ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A,
                   const TB* B, float beta, float* C) {
  if (M <= 0 || N <= 0) return;
  if (M <= kSmallM && K > 0) {
    gemm_small_m(tA, tB, M, N, K, alpha, A, B, beta, C);
    return;
  }
  if (K <= 0 || alpha == 0.0f) {
    // B is not read: only beta is applied.
    compute_tile(tA, tB, 0, 0.0f, A, tA ? M : K, nullptr, tB ? K : N, beta, C, N, 0, M, 0, N);
    return;
  }
  // (16-bit B never comes transposed-A and skinny: those are gradient products of trainable tensors.)
  if constexpr (std::is_same_v<TB, float>) {
    if (tA && N <= kSkinnyN && M >= 4 * N) {
      gemm_transposed(tB, M, N, K, alpha, A, B, beta, C);
      return;
    }
  }
  // Read once per call: the packing of A and every tile must slice K the same way.
  const int KC = g_kc.load(std::memory_order_relaxed), NT = g_nt.load(std::memory_order_relaxed);
  // Below ~0.5 MFLOP handing tasks to other threads costs more than it saves.
  const int nt = (M * N * K < (1 << 18)) ? 1 : active_threads();
  const ptrdiff_t lda = tA ? M : K, ldb = tB ? K : N;
  const ptrdiff_t m_panels = (M + MR - 1) / MR, mp = m_panels * MR;
  // A not transposed is read in place unless pack_a is set (see below).
  // pack_a only for wide products: the pack moves M*K floats for 2*N flops each, and the rank-32
  // adapter products ran slower with it (55 -> 29-33 GFLOP per CPU-second on the Xeon).
  const bool direct = !tA && !(g_pack_a.load(std::memory_order_relaxed) && N >= kPackAMinN);
  const ptrdiff_t kchunk = !direct ? std::min(K, std::max<ptrdiff_t>(KC, kPackedABudget / mp / KC * KC)) : K;
  float* ap = !direct ? t_apack_shared.get(static_cast<size_t>(mp * kchunk)) : nullptr;

  // Tasks are blocks of C computed start to finish by one thread (no barriers inside a chunk, so
  // a descheduled thread only delays its own blocks, which the others take over). Column
  // stripes over all rows pack each B column once; rows are split too only when there are too
  // few stripes to keep every thread busy.
  // Stripes of equal width, in a number that divides evenly among the threads: every call ends in a
  // join, and 9 stripes on 2 threads left one thread idle for a ninth of each 576-wide product.
  const ptrdiff_t want = nt == 1 ? 1 : 4 * nt, n_panels = (N + NR - 1) / NR;
  ptrdiff_t per = nt == 1 ? NT / NR : 1;
  double best = nt == 1 ? 1 : -1;
  for (ptrdiff_t q = NT / NR; q >= 1 && nt > 1; q--) {
    const ptrdiff_t tiles = (n_panels + q - 1) / q;
    if (tiles < std::min(want / 2, n_panels) && q > 1) continue;
    const double eff = static_cast<double>(n_panels) / nt / static_cast<double>(((tiles + nt - 1) / nt) * q);
    if (eff > best + 1e-9) {
      best = eff;
      per = q;
    }
  }
  const ptrdiff_t ntile = per * NR;
  const ptrdiff_t n_tiles = (N + ntile - 1) / ntile;
  // Splitting rows repacks every B column once more per row block, so only when the stripes alone
  // give fewer than two tasks per thread (rank-32 products: one stripe).
  ptrdiff_t m_tiles = 1, mt = mp;
  if (nt > 1 && n_tiles < 2 * nt) {
    m_tiles = (want + n_tiles - 1) / n_tiles;
    while ((m_tiles * n_tiles) % nt != 0) m_tiles++;
    m_tiles = std::min(m_panels, m_tiles);
    mt = (m_panels + m_tiles - 1) / m_tiles * MR;
    m_tiles = (M + mt - 1) / mt;
  }
  const ptrdiff_t n_tasks = m_tiles * n_tiles;
  // A not transposed is read in place: its rows are already contiguous in k, and the transposing
  // pack cost as much as a rank-32 product's arithmetic. A transposed is packed (its rows would
  // be strided columns). On CPUs with a small, 8-way L1 (Intel) A's rows a power of two apart in
  // place can share cache sets with the B panel; there packing A too (pack_a) may win.
  for (ptrdiff_t k0 = 0; k0 < K; k0 += kchunk) {
    const ptrdiff_t k1 = std::min(K, k0 + kchunk);
    if (!direct) pack_a_shared(tA, lda, A, alpha, M, k0, k1, ap, KC);
    const auto tile = [&](ptrdiff_t task, int) {
      const ptrdiff_t i0 = (task / n_tiles) * mt, j0 = (task % n_tiles) * ntile;
      tile_from_packed_a(tB, ldb, B, C, N, direct ? A : ap, direct ? lda : mp, M, k0, k1, k0 == 0, beta, i0,
                         std::min(mt, M - i0), j0, std::min(ntile, N - j0), direct, alpha, KC);
    };
    if (nt == 1 || n_tasks == 1) {
      for (ptrdiff_t t = 0; t < n_tasks; t++) tile(t, 0);
    } else {
      parallel_for(n_tasks, tile);
    }
  }
}

}  // namespace

void gemm_packed(bool tA, bool tB, ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A,
                 const float* B, float beta, float* C) {
  gemm_packed_t(tA, tB, M, N, K, alpha, A, B, beta, C);
}

void gemm_serial(bool tA, bool tB, ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A,
                 ptrdiff_t lda, const float* B, ptrdiff_t ldb, float beta, float* C, ptrdiff_t ldc) {
  const int NT = g_nt.load(std::memory_order_relaxed);
  for (ptrdiff_t i0 = 0; i0 < M; i0 += MC)
    for (ptrdiff_t j0 = 0; j0 < N; j0 += NT)
      compute_tile(tA, tB, K, alpha, A, lda, B, ldb, beta, C, ldc, i0, std::min<ptrdiff_t>(MC, M - i0), j0,
                   std::min<ptrdiff_t>(NT, N - j0));
}

namespace {

// The sampler's prompt-sized x·Wᵀ (gemm_prefill_nt, decode.h). Unlike gemm_packed, whose 6 x 32
// tile broadcasts 6 activations for 12 multiply-adds, the tile here is 12 token rows x 32 weight
// rows: 24 accumulators, so each k step is 24 multiply-adds for 12 broadcasts and 2 loads. Loop
// order per K slice: a 12-row panel of the activations (12 x KC floats, packed once per call and
// shared by every task) stays in L1 while the weight panels of the task's stripe (KC x 32 each,
// widened and transposed from W as they are packed) stream from L2. (Prefetching the next slice of
// W into L2 during the tiles, in a burst or spread over the k loop, measured within noise here.)
// 24 accumulators need AVX-512's 32 vector registers; with AVX2's 16, 6 rows (12 accumulators).
constexpr int PMR = VW == 16 ? 12 : 6;
constexpr int PNR = NR;
constexpr int PKC = 256;
constexpr int kPrefillStripePanels = 4;

thread_local Scratch t_prefill_a;

template <int R>
inline void prefill_micro(int kc, const float* __restrict a, const float* __restrict b, float* __restrict c,
                          ptrdiff_t ldc, int nr, bool first, float beta) {
  vf acc0[R], acc1[R];
#pragma GCC unroll 12
  for (int r = 0; r < R; r++) {
    acc0[r] = splat(0.0f);
    acc1[r] = splat(0.0f);
  }
  for (int k = 0; k < kc; k++) {
    const vf b0 = *reinterpret_cast<const vf*>(b + k * PNR);
    const vf b1 = *reinterpret_cast<const vf*>(b + k * PNR + VW);
#pragma GCC unroll 12
    for (int r = 0; r < R; r++) {
      const float av = a[k * PMR + r];
      acc0[r] += av * b0;
      acc1[r] += av * b1;
    }
  }
  // The first slice overwrites C (beta 0) or scales it; later slices add: every element sums its
  // slices in the same order whatever M is.
  const bool scale = first && beta != 0.0f;
  if (nr == PNR) {
#pragma GCC unroll 12
    for (int r = 0; r < R; r++) {
      float* cr = c + r * ldc;
      if (first && !scale) {
        store(cr, acc0[r]);
        store(cr + VW, acc1[r]);
      } else if (scale) {
        store(cr, load(cr) * beta + acc0[r]);
        store(cr + VW, load(cr + VW) * beta + acc1[r]);
      } else {
        store(cr, load(cr) + acc0[r]);
        store(cr + VW, load(cr + VW) + acc1[r]);
      }
    }
  } else {
    for (int r = 0; r < R; r++) {
      float tmp[PNR];
      store(tmp, acc0[r]);
      store(tmp + VW, acc1[r]);
      float* cr = c + r * ldc;
      for (int j = 0; j < nr; j++) cr[j] = first ? (scale ? cr[j] * beta + tmp[j] : tmp[j]) : cr[j] + tmp[j];
    }
  }
}

inline void prefill_micro_rows(int rows, int kc, const float* a, const float* b, float* c, ptrdiff_t ldc, int nr,
                               bool first, float beta) {
  switch (rows) {
    case 12: prefill_micro<12>(kc, a, b, c, ldc, nr, first, beta); break;
    case 11: prefill_micro<11>(kc, a, b, c, ldc, nr, first, beta); break;
    case 10: prefill_micro<10>(kc, a, b, c, ldc, nr, first, beta); break;
    case 9: prefill_micro<9>(kc, a, b, c, ldc, nr, first, beta); break;
    case 8: prefill_micro<8>(kc, a, b, c, ldc, nr, first, beta); break;
    case 7: prefill_micro<7>(kc, a, b, c, ldc, nr, first, beta); break;
    case 6: prefill_micro<6>(kc, a, b, c, ldc, nr, first, beta); break;
    case 5: prefill_micro<5>(kc, a, b, c, ldc, nr, first, beta); break;
    case 4: prefill_micro<4>(kc, a, b, c, ldc, nr, first, beta); break;
    case 3: prefill_micro<3>(kc, a, b, c, ldc, nr, first, beta); break;
    case 2: prefill_micro<2>(kc, a, b, c, ldc, nr, first, beta); break;
    default: prefill_micro<1>(kc, a, b, c, ldc, nr, first, beta); break;
  }
}

template <class TB>
void gemm_prefill_nt_t(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A, const TB* W, float beta,
                       float* C) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == 0.0f) {
    for (ptrdiff_t i = 0; i < M * N; i++) C[i] = beta == 0.0f ? 0.0f : C[i] * beta;
    return;
  }
  const ptrdiff_t m_panels = (M + PMR - 1) / PMR, mp = m_panels * PMR;
  const ptrdiff_t slices = (K + PKC - 1) / PKC;
  // Slice s of the packed activations starts at s * PKC * mp; panel p of it at p * PMR * kc_s,
  // laid out [k][r] with alpha folded in and zero rows past M.
  float* ap = t_prefill_a.get(static_cast<size_t>(mp * K));
  const bool parallel = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) >= (1 << 18);
  const auto pack = [&](ptrdiff_t s, int) {
    const ptrdiff_t pc = s * PKC;
    const int kc = static_cast<int>(std::min<ptrdiff_t>(PKC, K - pc));
    float* slice = ap + pc * mp;
    for (ptrdiff_t p = 0; p < m_panels; p++) {
      float* dst = slice + p * PMR * kc;
      const int rows = static_cast<int>(std::min<ptrdiff_t>(PMR, M - p * PMR));
      for (int r = 0; r < rows; r++) {
        const float* src = A + (p * PMR + r) * K + pc;
        for (int k = 0; k < kc; k++) dst[k * PMR + r] = alpha * src[k];
      }
      for (int r = rows; r < PMR; r++)
        for (int k = 0; k < kc; k++) dst[k * PMR + r] = 0.0f;
    }
  };
  if (parallel) parallel_for(slices, pack);
  else
    for (ptrdiff_t s = 0; s < slices; s++) pack(s, 0);
  // Stripes of W rows, at least ~4 per thread so a late thread does not hold up the call; the
  // partition changes no bits (each element is summed by one task, slice by slice).
  const ptrdiff_t n_panels = (N + PNR - 1) / PNR;
  const ptrdiff_t per =
      std::max<ptrdiff_t>(1, std::min<ptrdiff_t>(kPrefillStripePanels, n_panels / (4 * std::max(1, threads()))));
  const ptrdiff_t ntile = per * PNR, stripes = (N + ntile - 1) / ntile;
  const auto stripe = [&](ptrdiff_t t, int) {
    const ptrdiff_t j0 = t * ntile, cols = std::min(ntile, N - j0);
    const ptrdiff_t panels = (cols + PNR - 1) / PNR;
    float* bp = t_bpack.get(static_cast<size_t>(panels * PNR * PKC));
    for (ptrdiff_t pc = 0; pc < K; pc += PKC) {
      const int kc = static_cast<int>(std::min<ptrdiff_t>(PKC, K - pc));
      for (ptrdiff_t p = 0; p < panels; p++)
        pack_b_panel(true, K, W, j0 + p * PNR, static_cast<int>(std::min<ptrdiff_t>(PNR, cols - p * PNR)), pc, kc,
                     bp + p * PNR * kc);
      const float* slice = ap + pc * mp;
      for (ptrdiff_t ip = 0; ip < m_panels; ip++) {
        const int rows = static_cast<int>(std::min<ptrdiff_t>(PMR, M - ip * PMR));
        for (ptrdiff_t jp = 0; jp < panels; jp++) {
          const int nr = static_cast<int>(std::min<ptrdiff_t>(PNR, cols - jp * PNR));
          prefill_micro_rows(rows, kc, slice + ip * PMR * kc, bp + jp * PNR * kc, C + ip * PMR * N + j0 + jp * PNR,
                             N, nr, pc == 0, beta);
        }
      }
    }
  };
  if (parallel) parallel_for(stripes, stripe);
  else
    for (ptrdiff_t t = 0; t < stripes; t++) stripe(t, 0);
}

}  // namespace

void gemm_prefill_nt(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A, const float* W, float beta,
                     float* C) {
  gemm_prefill_nt_t(M, N, K, alpha, A, W, beta, C);
}

void gemm_prefill_nt_half(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A, const uint16_t* W,
                          HalfType type, float beta, float* C) {
  with_half(type, W, [&](const auto* Wh) { gemm_prefill_nt_t(M, N, K, alpha, A, Wh, beta, C); });
}

#ifdef CK_HAVE_OPENBLAS
namespace {

// OpenBLAS runs single-threaded (pool.cc sets it); parallelism comes from our pool, which cuts C
// (or K) into blocks and hands each to a one-thread cblas_sgemm. OpenBLAS's own threads split a
// product statically and meet at barriers, so on a busy host a descheduled thread leaves the other
// spinning: measured on the training step under load 13-20, 2 OpenBLAS threads took 36 s wall /
// 13 CPU-s where 1 thread took 19 s / 10 CPU-s. Blocks taken dynamically avoid that.

inline void blas(bool tA, bool tB, ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A, ptrdiff_t lda,
                 const float* B, ptrdiff_t ldb, float beta, float* C, ptrdiff_t ldc) {
  cblas_sgemm(CblasRowMajor, tA ? CblasTrans : CblasNoTrans, tB ? CblasTrans : CblasNoTrans, static_cast<blasint>(M),
              static_cast<blasint>(N), static_cast<blasint>(K), alpha, A, static_cast<blasint>(lda), B,
              static_cast<blasint>(ldb), beta, C, static_cast<blasint>(ldc));
}

// Below this many flops per block, handing work to another thread costs more than it saves.
constexpr double kMinBlockFlops = 4.0e6;

// Per calling thread: partial products of a K-split, reused across calls.
thread_local Scratch t_partial;

enum class Split { Rows, Cols, Depth };

void gemm_openblas(bool tA, bool tB, ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A,
                   const float* B, float beta, float* C) {
  const ptrdiff_t lda = tA ? M : K, ldb = tB ? K : N;
  // The partition follows the configured thread count, not the momentary one (solo mode), so a
  // K-split sums in the same blocks on every run: same inputs, same bits, however busy the host.
  const int nt = threads();
  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  // One block per thread: every block repacks an operand, and on the training shapes 2 blocks ran
  // at 80-90 GFLOP per CPU-second where 6 blocks ran at 60-70. A helper that wakes late finds its
  // block taken by the caller; one that stays descheduled sends the pool solo (pool.cc).
  ptrdiff_t p = static_cast<ptrdiff_t>(std::min<double>(nt, flops / kMinBlockFlops));
  if (nt == 1 || p < 2) {
    blas(tA, tB, M, N, K, alpha, A, lda, B, ldb, beta, C, N);
    return;
  }
  // Every block packs its own slice of both operands. Cutting rows repacks op(B) once per block,
  // cutting columns repacks op(A), cutting K repacks neither but sums p partial C's. Take the
  // cheapest in floats moved.
  const double m = static_cast<double>(M), n = static_cast<double>(N), k = static_cast<double>(K);
  const double rows_cost = p * k * n + m * k, cols_cost = p * m * k + k * n, depth_cost = m * k + k * n + 2 * p * m * n;
  Split split = Split::Rows;
  ptrdiff_t extent = M;
  if (cols_cost < rows_cost && cols_cost <= depth_cost) {
    split = Split::Cols;
    extent = N;
  } else if (depth_cost < rows_cost && depth_cost < cols_cost) {
    split = Split::Depth;
    extent = K;
  }
  // Blocks are multiples of 16 (the micro-tile of OpenBLAS's AVX-512 sgemm kernels).
  const ptrdiff_t step = ((extent + p - 1) / p + 15) / 16 * 16;
  p = (extent + step - 1) / step;
  if (p < 2) {
    blas(tA, tB, M, N, K, alpha, A, lda, B, ldb, beta, C, N);
    return;
  }
  float* partial = nullptr;
  if (split == Split::Depth) partial = t_partial.get(static_cast<size_t>((p - 1) * M * N));
  const auto block = [&](ptrdiff_t b, int) {
    const ptrdiff_t lo = b * step, len = std::min(step, extent - lo);
    switch (split) {
      case Split::Rows:
        blas(tA, tB, len, N, K, alpha, tA ? A + lo : A + lo * lda, lda, B, ldb, beta, C + lo * N, N);
        break;
      case Split::Cols:
        blas(tA, tB, M, len, K, alpha, A, lda, tB ? B + lo * ldb : B + lo, ldb, beta, C + lo, N);
        break;
      case Split::Depth:
        // Block 0 applies beta to C itself; the others write private partial sums.
        blas(tA, tB, M, N, len, alpha, tA ? A + lo * lda : A + lo, lda, tB ? B + lo : B + lo * ldb, ldb,
             b == 0 ? beta : 0.0f, b == 0 ? C : partial + (b - 1) * M * N, N);
        break;
    }
  };
  parallel_for(p, block);
  if (split == Split::Depth) {
    // Fixed summation order: the result does not depend on which thread ran which block.
    const ptrdiff_t total = M * N;
    parallel_range(total, 1 << 14, [&](ptrdiff_t i0, ptrdiff_t i1, int) {
      for (ptrdiff_t b = 0; b + 1 < p; b++) {
        const float* src = partial + b * total;
#pragma omp simd
        for (ptrdiff_t i = i0; i < i1; i++) C[i] += src[i];
      }
    });
  }
}

}  // namespace
#endif

#ifdef CK_HAVE_OPENBLAS
namespace {

thread_local Scratch t_bwide_blas;

// OpenBLAS reads float32 only. 16-bit B is widened one block of columns of op(B) at a time into a
// per-thread scratch (at most ~4 Mi floats) and that block of C computed by one one-thread
// cblas_sgemm; blocks go to pool threads dynamically. Each C element still sums all of K in one
// call, in OpenBLAS's own order.
template <class TB>
void gemm_openblas_half(bool tA, bool tB, ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A,
                        const TB* B, float beta, float* C) {
  const ptrdiff_t lda = tA ? M : K;
  const int nt = threads();
  ptrdiff_t cols = std::max<ptrdiff_t>(16, (ptrdiff_t{1} << 22) / K / 16 * 16);
  // At least two blocks per thread when N allows, so a late thread does not hold up the product.
  cols = std::min(cols, std::max<ptrdiff_t>(16, ((N + 2 * nt - 1) / (2 * nt) + 15) / 16 * 16));
  const ptrdiff_t blocks = (N + cols - 1) / cols;
  const auto block = [&](ptrdiff_t b, int) {
    const ptrdiff_t j0 = b * cols, len = std::min(cols, N - j0);
    float* w = t_bwide_blas.get(static_cast<size_t>(len * K));
    if (tB) {
      widen_row(B + j0 * K, w, len * K);
      blas(tA, true, M, len, K, alpha, A, lda, w, K, beta, C + j0, N);
    } else {
      for (ptrdiff_t k = 0; k < K; k++) widen_row(B + k * N + j0, w + k * len, len);
      blas(tA, false, M, len, K, alpha, A, lda, w, len, beta, C + j0, N);
    }
  };
  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  if (nt == 1 || blocks == 1 || flops < kMinBlockFlops) {
    for (ptrdiff_t b = 0; b < blocks; b++) block(b, 0);
  } else {
    parallel_for(blocks, block);
  }
}

}  // namespace
#endif

void gemm_half(bool tA, bool tB, ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A,
               const uint16_t* B, HalfType type, float beta, float* C) {
  with_half(type, B, [&](const auto* Bh) {
#ifdef CK_HAVE_OPENBLAS
    if (gemm_backend() == GemmBackend::OpenBLAS && M > kSmallM && N > 0 && K > 0) {
      threads();
      gemm_openblas_half(tA, tB, M, N, K, alpha, A, Bh, beta, C);
      return;
    }
#endif
    gemm_packed_t(tA, tB, M, N, K, alpha, A, Bh, beta, C);
  });
}

void gemm(bool tA, bool tB, ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A, const float* B,
          float beta, float* C) {
#ifdef CK_HAVE_OPENBLAS
  // Decode-sized products go to the direct kernel either way: OpenBLAS 0.3.21 packs B even for
  // M = 1, which costs more than the arithmetic.
  if (gemm_backend() == GemmBackend::OpenBLAS && M > kSmallM && N > 0 && K > 0) {
    threads();  // makes sure OpenBLAS is set to one thread before its first call
    // BLAS semantics: beta = 0 means C is not read, so NaN in C does not leak (tested).
    gemm_openblas(tA, tB, M, N, K, alpha, A, B, beta, C);
    return;
  }
#endif
  gemm_packed(tA, tB, M, N, K, alpha, A, B, beta, C);
}

}  // namespace ck
