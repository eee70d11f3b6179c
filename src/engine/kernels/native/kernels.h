// C++ kernels behind the Node-API addon. Same semantics as src/engine/kernels/types.ts, float32 only.
// Sizes are ptrdiff_t so products of dimensions never overflow 32 bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "half.h"
#include "pool.h"

namespace ck {

// threads() / set_threads(n) / active_threads(): see pool.h (OpenBLAS is kept at one thread; gemm.cc
// splits products across the pool).

enum class GemmBackend { OpenBLAS, Packed };
bool have_openblas();
GemmBackend gemm_backend();
void set_gemm_backend(GemmBackend b);
// Block sizes of the packed GEMM: kc (depth of a K slice) and nc (widest column stripe, a multiple
// of nr) can change at run time; mr x nr is the micro-kernel. Only sizes change, never results'
// correctness: a different kc sums K in different slices (float rounding differs in the last bits).
struct GemmBlocks {
  int kc, nc, mr, nr, default_kc, default_nc;
  bool pack_a;  // op(A) not transposed is packed too, instead of read in place
};
GemmBlocks gemm_blocks();
// False (and nothing changed) unless kc is a multiple of 8 in 8..2048 and nc a multiple of nr in nr..4096.
bool set_gemm_blocks(int kc, int nc, bool pack_a);

void gemm(bool transA, bool transB, ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha,
          const float* A, const float* B, float beta, float* C);
// Single-threaded packed product on strided matrices (op(A)[i,k] = tA ? A[k*lda+i] : A[i*lda+k],
// likewise B; C row stride ldc). For use inside tasks that are already parallel.
void gemm_serial(bool transA, bool transB, ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A,
                 ptrdiff_t lda, const float* B, ptrdiff_t ldb, float beta, float* C, ptrdiff_t ldc);
void gemm_packed(bool transA, bool transB, ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha,
                 const float* A, const float* B, float beta, float* C);
// gemm with B (both layouts) kept in 16 bits (bf16 or f16), widened exactly as it is read: the
// same bits as gemm on a widened copy of B with the packed kernel.
void gemm_half(bool transA, bool transB, ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A,
               const uint16_t* B, HalfType type, float beta, float* C);

void rmsnorm_forward(const float* x, const float* w, float* out, float* rstd, ptrdiff_t rows, ptrdiff_t dim, float eps);
void rmsnorm_backward(const float* dout, const float* x, const float* w, const float* rstd, float* dx, float* dw,
                      ptrdiff_t rows, ptrdiff_t dim);
void rope(float* x, const int32_t* pos, const float* inv_freq, ptrdiff_t tokens, ptrdiff_t heads, ptrdiff_t head_dim,
          bool inverse);

// window > 0: query i sees keys i - window < j <= i only (sliding-window layers); other probs are 0.
void attention_forward(const float* q, const float* k, const float* v, float* out, float* probs,
                       const int32_t* seq_starts, ptrdiff_t num_seqs, ptrdiff_t heads, ptrdiff_t kv_heads,
                       ptrdiff_t head_dim, float scale, ptrdiff_t window);
void attention_backward(const float* dout, const float* q, const float* k, const float* v, const float* probs,
                        float* dq, float* dk, float* dv, const int32_t* seq_starts, ptrdiff_t num_seqs,
                        ptrdiff_t heads, ptrdiff_t kv_heads, ptrdiff_t head_dim, float scale);
// slots == nullptr means query b reads cache slot b. prefix_slots == nullptr (and prefix_lens) means
// no shared prefix; else query b reads positions below prefix_lens[b] from slot prefix_slots[b].
void attention_decode(const float* q, const float* k_cache, const float* v_cache, float* out, const int32_t* slots,
                      const int32_t* lens, ptrdiff_t n, ptrdiff_t heads, ptrdiff_t kv_heads, ptrdiff_t head_dim,
                      ptrdiff_t max_len, float scale, ptrdiff_t window, const int32_t* prefix_slots = nullptr,
                      const int32_t* prefix_lens = nullptr);

void swiglu_forward(const float* gate, const float* up, float* out, ptrdiff_t n);
void swiglu_backward(const float* dout, const float* gate, const float* up, float* dgate, float* dup, ptrdiff_t n);
void geglu_forward(const float* gate, const float* up, float* out, ptrdiff_t n);
void geglu_backward(const float* dout, const float* gate, const float* up, float* dgate, float* dup, ptrdiff_t n);

void logprobs_forward(const float* logits, const int32_t* targets, float* logprobs, float* lse, ptrdiff_t rows,
                      ptrdiff_t vocab);
void logprobs_backward(const float* dlogprobs, const float* logits, const int32_t* targets, const float* lse,
                       float* dlogits, ptrdiff_t rows, ptrdiff_t vocab);

void adamw(float* p, const float* g, float* m, float* v, ptrdiff_t n, double lr, double beta1, double beta2,
           double eps, double wd, double step, double grad_scale);
void axpy(ptrdiff_t n, float alpha, const float* x, float* y);
double sum_squares(const float* x, ptrdiff_t n);
void add(const float* a, const float* b, float* out, ptrdiff_t n);
void embedding_forward(const float* table, const int32_t* ids, float* out, ptrdiff_t n, ptrdiff_t dim);
void embedding_forward_half(const uint16_t* table, HalfType type, const int32_t* ids, float* out, ptrdiff_t n,
                            ptrdiff_t dim);
void embedding_backward(const float* dout, const int32_t* ids, float* dtable, ptrdiff_t n, ptrdiff_t dim);

}  // namespace ck
