// Kernels of the sampler (decode.cc) and of the safetensors loader (safetensors_map.cc). Float32
// only, like kernels.h; sizes are ptrdiff_t.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "half.h"

namespace ck {

// C[M,N] = alpha * A[M,K] * W[N,K]^T + beta * C, for few rows M (decode steps). Streams W once;
// each C element's summation order depends only on K and on which of the two kernels M picks
// (1-4 rows, 5 and more): a row's bits do not depend on the other rows within either.
void gemm_rows_nt(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A, const float* W, float beta,
                  float* C);
// The same with W kept in 16 bits (bf16 / f16), widened as it is read: the bits of gemm_rows_nt on a
// widened copy, from half the bytes.
void gemm_rows_nt_half(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A, const uint16_t* W,
                       HalfType type, float beta, float* C);

// C[M,N] = alpha * A[M,K] * W[N,K]^T + beta * C for prompt-sized M (the sampler's prefill and
// prompt logprobs; gemm.cc): a 12-row register tile over activations packed once per call, W widened
// and transposed as it is packed. Each element sums K in slices of fixed depth, in an order that
// depends only on K (a row's bits do not depend on M or the thread count). W may be 16-bit.
void gemm_prefill_nt(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A, const float* W, float beta,
                     float* C);
void gemm_prefill_nt_half(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha, const float* A, const uint16_t* W,
                          HalfType type, float beta, float* C);

// Writes row i of k and v ([n, kv_heads*head_dim]) at position positions[i] of cache slot slots[i];
// the caches are [slots, kv_heads, max_len, head_dim].
void kv_store(const float* k, const float* v, float* k_cache, float* v_cache, const int32_t* slots,
              const int32_t* positions, ptrdiff_t n, ptrdiff_t kv_heads, ptrdiff_t head_dim, ptrdiff_t max_len);

// kv_store into an IEEE f16 cache (round to nearest even), and attention_decode (kernels.h) reading
// one: the sampler's KV cache at half the bytes (docs/embedded-engine.md#the-kv-cache).
void kv_store_f16(const float* k, const float* v, uint16_t* k_cache, uint16_t* v_cache, const int32_t* slots,
                  const int32_t* positions, ptrdiff_t n, ptrdiff_t kv_heads, ptrdiff_t head_dim, ptrdiff_t max_len);
void attention_decode_f16(const float* q, const uint16_t* k_cache, const uint16_t* v_cache, float* out,
                          const int32_t* slots, const int32_t* lens, ptrdiff_t n, ptrdiff_t heads, ptrdiff_t kv_heads,
                          ptrdiff_t d, ptrdiff_t max_len, float scale, ptrdiff_t window,
                          const int32_t* prefix_slots = nullptr, const int32_t* prefix_lens = nullptr);

// One token per row of logits [rows, vocab]: argmax at temperature 0, else a draw with uniforms[r]
// from softmax(z / T) over the whole vocabulary; logprobs[r] = log_softmax(z / T)[token].
void sample_rows(const float* logits, ptrdiff_t rows, ptrdiff_t vocab, const float* temperatures, const double* uniforms,
                 int32_t* tokens, double* logprobs);

// Sum of x over n on every pool thread (the benchmarks' memory read bandwidth probe).
double read_bandwidth_probe(const float* x, ptrdiff_t n);

enum class StoredType { F32 = 0, BF16 = 1, F16 = 2, F64 = 3 };

struct WidenJob {
  size_t offset;  // bytes from the start of the file
  StoredType type;
  float* dst;
  size_t count;  // elements
};

// Maps `file` and converts every job's elements to float32 into its dst, on the pool. Returns an
// empty string, or what went wrong (the caller names the file).
std::string widen_from_file(const std::string& file, const std::vector<WidenJob>& jobs);

// Maps all of `file` read-only (private, so later changes to the file are not promised to show).
// Returns an empty string and sets *data / *size (*data null for an empty file), or what went wrong.
std::string map_file(const std::string& file, void** data, size_t* size);
// Maps bytes [offset, offset + length) of `file` read-only (offset a multiple of the page size;
// length 0 means to the end). A file over 4 GiB cannot be one ArrayBuffer, so it is mapped by parts.
std::string map_file_range(const std::string& file, size_t offset, size_t length, void** data, size_t* size);
void unmap_file(void* data, size_t size);

}  // namespace ck
