// Node-API surface of the kernels: argument checking and unpacking, then a call into ck::.
// Every array length is checked against the sizes the kernel will touch, so a wrong call throws a
// RangeError naming the kernel and argument instead of corrupting memory.

#include <cstring>
#include <napi.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "decode.h"
#include "kernels.h"

#include "napi_args.h"

namespace {

using ck_napi::Args;

Napi::Value Gemm(const Napi::CallbackInfo& info) {
  Args a(info, "gemm", 10);
  const bool tA = a.boolean(0, "transA"), tB = a.boolean(1, "transB");
  const ptrdiff_t M = a.size(2, "M"), N = a.size(3, "N"), K = a.size(4, "K");
  const float alpha = static_cast<float>(a.number(5, "alpha"));
  const float* A = a.f32(6, "A", M * K, "M*K");
  const float* B = a.f32(7, "B", K * N, "K*N");
  const float beta = static_cast<float>(a.number(8, "beta"));
  float* C = a.f32(9, "C", M * N, "M*N");
  ck::gemm(tA, tB, M, N, K, alpha, A, B, beta, C);
  return info.Env().Undefined();
}

Napi::Value RmsnormForward(const Napi::CallbackInfo& info) {
  Args a(info, "rmsnormForward", 7);
  const ptrdiff_t rows = a.size(4, "rows"), dim = a.size(5, "dim");
  const float eps = static_cast<float>(a.number(6, "eps"));
  ck::rmsnorm_forward(a.f32(0, "x", rows * dim, "rows*dim"), a.f32(1, "weight", dim, "dim"),
                      a.f32(2, "out", rows * dim, "rows*dim"), a.f32(3, "rstd", rows, "rows"), rows, dim, eps);
  return info.Env().Undefined();
}

Napi::Value RmsnormBackward(const Napi::CallbackInfo& info) {
  Args a(info, "rmsnormBackward", 8);
  const ptrdiff_t rows = a.size(6, "rows"), dim = a.size(7, "dim");
  ck::rmsnorm_backward(a.f32(0, "dout", rows * dim, "rows*dim"), a.f32(1, "x", rows * dim, "rows*dim"),
                       a.f32(2, "weight", dim, "dim"), a.f32(3, "rstd", rows, "rows"),
                       a.f32(4, "dx", rows * dim, "rows*dim"), a.f32_or_null(5, "dweight", dim, "dim"), rows, dim);
  return info.Env().Undefined();
}

Napi::Value Rope(const Napi::CallbackInfo& info) {
  Args a(info, "rope", 7);
  const ptrdiff_t tokens = a.size(3, "tokens"), heads = a.size(4, "nHeads"), hd = a.size(5, "headDim");
  if (hd % 2 != 0) a.fail_range("headDim must be even, got " + std::to_string(hd));
  const bool inverse = a.boolean(6, "inverse");
  ck::rope(a.f32(0, "x", tokens * heads * hd, "tokens*nHeads*headDim"), a.i32(1, "positions", tokens, "tokens"),
           a.f32(2, "invFreq", hd / 2, "headDim/2"), tokens, heads, hd, inverse);
  return info.Env().Undefined();
}

struct SeqInfo {
  const int32_t* starts;
  ptrdiff_t num_seqs, total, probs_size;
};

SeqInfo check_seqs(Args& a, size_t i) {
  const ptrdiff_t n = a.i32_length(i, "seqStarts");
  const int32_t* s = a.i32(i, "seqStarts", 1, "numSeqs+1");
  if (s[0] != 0) a.fail_range("seqStarts[0] must be 0, got " + std::to_string(s[0]));
  ptrdiff_t probs = 0;
  for (ptrdiff_t j = 1; j < n; j++) {
    if (s[j] < s[j - 1])
      a.fail_range("seqStarts must be non-decreasing, but seqStarts[" + std::to_string(j) + "] = " +
                   std::to_string(s[j]) + " < seqStarts[" + std::to_string(j - 1) + "] = " + std::to_string(s[j - 1]));
    const ptrdiff_t len = s[j] - s[j - 1];
    probs += len * len;
  }
  return {s, n - 1, s[n - 1], probs};
}

void check_heads(Args& a, ptrdiff_t heads, ptrdiff_t kv) {
  if (kv <= 0 || heads % kv != 0)
    a.fail_range("nHeads (" + std::to_string(heads) + ") must be a positive multiple of nKvHeads (" +
                 std::to_string(kv) + ")");
}

Napi::Value AttentionForward(const Napi::CallbackInfo& info) {
  Args a(info, "attentionForward", 10);
  const ptrdiff_t H = a.size(6, "nHeads"), Hkv = a.size(7, "nKvHeads"), d = a.size(8, "headDim");
  check_heads(a, H, Hkv);
  const float scale = static_cast<float>(a.number(9, "scale"));
  const SeqInfo s = check_seqs(a, 5);
  const ptrdiff_t T = s.total;
  ck::attention_forward(a.f32(0, "q", T * H * d, "tokens*nHeads*headDim"),
                        a.f32(1, "k", T * Hkv * d, "tokens*nKvHeads*headDim"),
                        a.f32(2, "v", T * Hkv * d, "tokens*nKvHeads*headDim"),
                        a.f32(3, "out", T * H * d, "tokens*nHeads*headDim"),
                        a.f32_or_null(4, "probs", H * s.probs_size, "nHeads*sum(len^2)"), s.starts, s.num_seqs, H,
                        Hkv, d, scale, a.optional_size(10, "window", 0));
  return info.Env().Undefined();
}

Napi::Value AttentionBackward(const Napi::CallbackInfo& info) {
  Args a(info, "attentionBackward", 13);
  const ptrdiff_t H = a.size(9, "nHeads"), Hkv = a.size(10, "nKvHeads"), d = a.size(11, "headDim");
  check_heads(a, H, Hkv);
  const float scale = static_cast<float>(a.number(12, "scale"));
  const SeqInfo s = check_seqs(a, 8);
  const ptrdiff_t T = s.total;
  ck::attention_backward(a.f32(0, "dout", T * H * d, "tokens*nHeads*headDim"),
                         a.f32(1, "q", T * H * d, "tokens*nHeads*headDim"),
                         a.f32(2, "k", T * Hkv * d, "tokens*nKvHeads*headDim"),
                         a.f32(3, "v", T * Hkv * d, "tokens*nKvHeads*headDim"),
                         a.f32(4, "probs", H * s.probs_size, "nHeads*sum(len^2)"),
                         a.f32(5, "dq", T * H * d, "tokens*nHeads*headDim"),
                         a.f32(6, "dk", T * Hkv * d, "tokens*nKvHeads*headDim"),
                         a.f32(7, "dv", T * Hkv * d, "tokens*nKvHeads*headDim"), s.starts, s.num_seqs, H, Hkv, d,
                         scale);
  return info.Env().Undefined();
}

void check_lens(Args& a, const int32_t* lens, ptrdiff_t n, ptrdiff_t max_len) {
  for (ptrdiff_t b = 0; b < n; b++)
    if (lens[b] < 1 || lens[b] > max_len)
      a.fail_range("cacheLens[" + std::to_string(b) + "] = " + std::to_string(lens[b]) + " must be in 1..maxLen (" +
                   std::to_string(max_len) + ")");
}

Napi::Value AttentionDecode(const Napi::CallbackInfo& info) {
  Args a(info, "attentionDecode", 11);
  const ptrdiff_t n = a.size(5, "n"), H = a.size(6, "nHeads"), Hkv = a.size(7, "nKvHeads"), d = a.size(8, "headDim");
  const ptrdiff_t max_len = a.size(9, "maxLen");
  check_heads(a, H, Hkv);
  const float scale = static_cast<float>(a.number(10, "scale"));
  const int32_t* lens = a.i32(4, "cacheLens", n, "n");
  check_lens(a, lens, n, max_len);
  ck::attention_decode(a.f32(0, "q", n * H * d, "n*nHeads*headDim"),
                       a.f32(1, "kCache", n * Hkv * max_len * d, "n*nKvHeads*maxLen*headDim"),
                       a.f32(2, "vCache", n * Hkv * max_len * d, "n*nKvHeads*maxLen*headDim"),
                       a.f32(3, "out", n * H * d, "n*nHeads*headDim"), nullptr, lens, n, H, Hkv, d, max_len, scale,
                       a.optional_size(11, "window", 0));
  return info.Env().Undefined();
}

// attentionDecodeSlots(q, kCache, vCache, out, cacheSlots, cacheLens, n, nHeads, nKvHeads, headDim,
// maxLen, scale, window?, sinks?, prefixSlots?, prefixLens?) with Float32Array caches, or (F16)
// Uint16Array caches of IEEE half bits. Sinks are not read here (the caller routes them to the
// reference kernel); prefixSlots/prefixLens (both or neither, null = none) share a prompt's slot.
template <bool F16>
Napi::Value AttentionDecodeSlotsT(const Napi::CallbackInfo& info) {
  Args a(info, F16 ? "attentionDecodeSlotsF16" : "attentionDecodeSlots", 12);
  const ptrdiff_t n = a.size(6, "n"), H = a.size(7, "nHeads"), Hkv = a.size(8, "nKvHeads"), d = a.size(9, "headDim");
  const ptrdiff_t max_len = a.size(10, "maxLen");
  check_heads(a, H, Hkv);
  const float scale = static_cast<float>(a.number(11, "scale"));
  const int32_t* lens = a.i32(5, "cacheLens", n, "n");
  check_lens(a, lens, n, max_len);
  const ptrdiff_t slot_size = Hkv * max_len * d;
  const ptrdiff_t cache_len = F16 ? std::min(a.u16_length(1, "kCache"), a.u16_length(2, "vCache"))
                                  : std::min(a.f32_length(1, "kCache"), a.f32_length(2, "vCache"));
  const ptrdiff_t num_slots = slot_size > 0 ? cache_len / slot_size : 0;
  const int32_t* slots = a.i32(4, "cacheSlots", n, "n");
  for (ptrdiff_t b = 0; b < n; b++)
    if (slots[b] < 0 || slots[b] >= num_slots)
      a.fail_range("cacheSlots[" + std::to_string(b) + "] = " + std::to_string(slots[b]) + " is outside 0.." +
                   std::to_string(num_slots - 1));
  const float* q = a.f32(0, "q", n * H * d, "n*nHeads*headDim");
  float* out = a.f32(3, "out", n * H * d, "n*nHeads*headDim");
  const ptrdiff_t window = a.optional_size(12, "window", 0);
  const int32_t* prefix_slots = nullptr;
  const int32_t* prefix_lens = nullptr;
  if (info.Length() > 15 && !info[14].IsNull() && !info[14].IsUndefined()) {
    prefix_slots = a.i32(14, "prefixSlots", n, "n");
    prefix_lens = a.i32(15, "prefixLens", n, "n");
    for (ptrdiff_t b = 0; b < n; b++) {
      if (prefix_slots[b] < 0 || prefix_slots[b] >= num_slots)
        a.fail_range("prefixSlots[" + std::to_string(b) + "] = " + std::to_string(prefix_slots[b]) + " is outside 0.." +
                     std::to_string(num_slots - 1));
      if (prefix_lens[b] < 0 || prefix_lens[b] > lens[b])
        a.fail_range("prefixLens[" + std::to_string(b) + "] = " + std::to_string(prefix_lens[b]) + " must be in 0..cacheLens[" +
                     std::to_string(b) + "] (" + std::to_string(lens[b]) + ")");
    }
  }
  if constexpr (F16) {
    ck::attention_decode_f16(q, a.u16(1, "kCache", 0, ""), a.u16(2, "vCache", 0, ""), out, slots, lens, n, H, Hkv, d,
                             max_len, scale, window, prefix_slots, prefix_lens);
  } else {
    ck::attention_decode(q, a.f32(1, "kCache", 0, ""), a.f32(2, "vCache", 0, ""), out, slots, lens, n, H, Hkv, d,
                         max_len, scale, window, prefix_slots, prefix_lens);
  }
  return info.Env().Undefined();
}

Napi::Value SwigluForward(const Napi::CallbackInfo& info) {
  Args a(info, "swigluForward", 4);
  const ptrdiff_t n = a.size(3, "n");
  ck::swiglu_forward(a.f32(0, "gate", n, "n"), a.f32(1, "up", n, "n"), a.f32(2, "out", n, "n"), n);
  return info.Env().Undefined();
}

Napi::Value SwigluBackward(const Napi::CallbackInfo& info) {
  Args a(info, "swigluBackward", 6);
  const ptrdiff_t n = a.size(5, "n");
  ck::swiglu_backward(a.f32(0, "dout", n, "n"), a.f32(1, "gate", n, "n"), a.f32(2, "up", n, "n"),
                      a.f32(3, "dgate", n, "n"), a.f32(4, "dup", n, "n"), n);
  return info.Env().Undefined();
}

Napi::Value GegluForward(const Napi::CallbackInfo& info) {
  Args a(info, "gegluForward", 4);
  const ptrdiff_t n = a.size(3, "n");
  ck::geglu_forward(a.f32(0, "gate", n, "n"), a.f32(1, "up", n, "n"), a.f32(2, "out", n, "n"), n);
  return info.Env().Undefined();
}

Napi::Value GegluBackward(const Napi::CallbackInfo& info) {
  Args a(info, "gegluBackward", 6);
  const ptrdiff_t n = a.size(5, "n");
  ck::geglu_backward(a.f32(0, "dout", n, "n"), a.f32(1, "gate", n, "n"), a.f32(2, "up", n, "n"),
                     a.f32(3, "dgate", n, "n"), a.f32(4, "dup", n, "n"), n);
  return info.Env().Undefined();
}

const int32_t* checked_targets(Args& a, size_t i, ptrdiff_t rows, ptrdiff_t vocab) {
  const int32_t* t = a.i32(i, "targets", rows, "rows");
  for (ptrdiff_t r = 0; r < rows; r++)
    if (t[r] >= vocab)
      a.fail_range("targets[" + std::to_string(r) + "] = " + std::to_string(t[r]) +
                   " is outside the vocabulary (size " + std::to_string(vocab) + ")");
  return t;
}

Napi::Value LogprobsForward(const Napi::CallbackInfo& info) {
  Args a(info, "logprobsForward", 6);
  const ptrdiff_t rows = a.size(4, "rows"), vocab = a.size(5, "vocab");
  ck::logprobs_forward(a.f32(0, "logits", rows * vocab, "rows*vocab"), checked_targets(a, 1, rows, vocab),
                       a.f32(2, "logprobs", rows, "rows"), a.f32(3, "logsumexp", rows, "rows"), rows, vocab);
  return info.Env().Undefined();
}

Napi::Value LogprobsBackward(const Napi::CallbackInfo& info) {
  Args a(info, "logprobsBackward", 7);
  const ptrdiff_t rows = a.size(5, "rows"), vocab = a.size(6, "vocab");
  ck::logprobs_backward(a.f32(0, "dlogprobs", rows, "rows"), a.f32(1, "logits", rows * vocab, "rows*vocab"),
                        checked_targets(a, 2, rows, vocab), a.f32(3, "logsumexp", rows, "rows"),
                        a.f32(4, "dlogits", rows * vocab, "rows*vocab"), rows, vocab);
  return info.Env().Undefined();
}

Napi::Value Adamw(const Napi::CallbackInfo& info) {
  Args a(info, "adamw", 12);
  const ptrdiff_t n = a.size(4, "n");
  ck::adamw(a.f32(0, "param", n, "n"), a.f32(1, "grad", n, "n"), a.f32(2, "m", n, "n"), a.f32(3, "v", n, "n"), n,
            a.number(5, "lr"), a.number(6, "beta1"), a.number(7, "beta2"), a.number(8, "eps"),
            a.number(9, "weightDecay"), a.number(10, "step"), a.number(11, "gradScale"));
  return info.Env().Undefined();
}

Napi::Value Axpy(const Napi::CallbackInfo& info) {
  Args a(info, "axpy", 4);
  const ptrdiff_t n = a.size(0, "n");
  ck::axpy(n, static_cast<float>(a.number(1, "alpha")), a.f32(2, "x", n, "n"), a.f32(3, "y", n, "n"));
  return info.Env().Undefined();
}

Napi::Value SumSquares(const Napi::CallbackInfo& info) {
  Args a(info, "sumSquares", 2);
  const ptrdiff_t n = a.size(1, "n");
  return Napi::Number::New(info.Env(), ck::sum_squares(a.f32(0, "x", n, "n"), n));
}

Napi::Value Add(const Napi::CallbackInfo& info) {
  Args a(info, "add", 4);
  const ptrdiff_t n = a.size(3, "n");
  ck::add(a.f32(0, "a", n, "n"), a.f32(1, "b", n, "n"), a.f32(2, "out", n, "n"), n);
  return info.Env().Undefined();
}

// gemmHalf(transA, transB, M, N, K, alpha, A, B: Uint16Array, type, beta, C): B in bf16 (1) or f16 (2).
Napi::Value GemmHalf(const Napi::CallbackInfo& info) {
  Args a(info, "gemmHalf", 11);
  const bool tA = a.boolean(0, "transA"), tB = a.boolean(1, "transB");
  const ptrdiff_t M = a.size(2, "M"), N = a.size(3, "N"), K = a.size(4, "K");
  const float alpha = static_cast<float>(a.number(5, "alpha"));
  const float* A = a.f32(6, "A", M * K, "M*K");
  const uint16_t* B = a.u16(7, "B", K * N, "K*N");
  const auto type = static_cast<ck::HalfType>(a.half_code(8, "type"));
  const float beta = static_cast<float>(a.number(9, "beta"));
  float* C = a.f32(10, "C", M * N, "M*N");
  ck::gemm_half(tA, tB, M, N, K, alpha, A, B, type, beta, C);
  return info.Env().Undefined();
}

// bf16 is the top half of a float32: widening is a 16-bit shift, exact, and memory-bound.
Napi::Value Bf16ToFloat32(const Napi::CallbackInfo& info) {
  Args a(info, "bf16ToFloat32", 3);
  const ptrdiff_t n = a.size(2, "n");
  const uint16_t* src = a.array<uint16_t, napi_uint16_array>(0, "src", n, "n");
  float* dst = a.f32(1, "dst", n, "n");
  for (ptrdiff_t i = 0; i < n; i++) {
    const uint32_t bits = static_cast<uint32_t>(src[i]) << 16;
    std::memcpy(dst + i, &bits, sizeof bits);
  }
  return info.Env().Undefined();
}

// MXFP4 (GPT-OSS's experts, kernels/mxfp4.ts) to bf16 bits: per 32-value group one power-of-two
// scale and 16 bytes of two e2m1 codes each (low nibble first). Every value is exact in bf16, so its
// bits are the top half of the float32 product.
Napi::Value Mxfp4ToBf16(const Napi::CallbackInfo& info) {
  Args a(info, "mxfp4ToBf16", 4);
  const ptrdiff_t groups = a.size(2, "groups");
  const uint8_t* blocks = a.array<uint8_t, napi_uint8_array>(0, "blocks", groups * 16, "groups*16");
  const uint8_t* scales = a.array<uint8_t, napi_uint8_array>(1, "scales", groups, "groups");
  uint16_t* out = a.array<uint16_t, napi_uint16_array>(3, "out", groups * 32, "groups*32");
  static const float kFp4[16] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f, -0.f, -0.5f, -1.f, -1.5f, -2.f, -3.f, -4.f, -6.f};
  for (ptrdiff_t g = 0; g < groups; g++) {
    const float scale = std::ldexp(1.0f, static_cast<int>(scales[g]) - 127);
    uint16_t lut[16];
    for (int c = 0; c < 16; c++) {
      const float v = kFp4[c] * scale;
      uint32_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      lut[c] = static_cast<uint16_t>(bits >> 16);
    }
    const uint8_t* src = blocks + g * 16;
    uint16_t* dst = out + g * 32;
    for (int b = 0; b < 16; b++) {
      dst[2 * b] = lut[src[b] & 15];
      dst[2 * b + 1] = lut[src[b] >> 4];
    }
  }
  return info.Env().Undefined();
}

const int32_t* checked_ids(Args& a, size_t ids_i, ptrdiff_t n, ptrdiff_t table_rows) {
  const int32_t* ids = a.i32(ids_i, "ids", n, "n");
  for (ptrdiff_t i = 0; i < n; i++)
    if (ids[i] < 0 || ids[i] >= table_rows)
      a.fail_range("ids[" + std::to_string(i) + "] = " + std::to_string(ids[i]) + " is outside the table (" +
                   std::to_string(table_rows) + " rows)");
  return ids;
}

Napi::Value EmbeddingForward(const Napi::CallbackInfo& info) {
  Args a(info, "embeddingForward", 5);
  const ptrdiff_t n = a.size(3, "n"), dim = a.size(4, "dim");
  const ptrdiff_t rows = dim > 0 ? a.f32_length(0, "table") / dim : 0;
  const float* table = a.f32(0, "table", 0, "");
  ck::embedding_forward(table, checked_ids(a, 1, n, rows), a.f32(2, "out", n * dim, "n*dim"), n, dim);
  return info.Env().Undefined();
}

// embeddingForwardHalf(table: Uint16Array, type, ids, out, n, dim)
Napi::Value EmbeddingForwardHalf(const Napi::CallbackInfo& info) {
  Args a(info, "embeddingForwardHalf", 6);
  const ptrdiff_t n = a.size(4, "n"), dim = a.size(5, "dim");
  const ptrdiff_t rows = dim > 0 ? a.u16_length(0, "table") / dim : 0;
  const uint16_t* table = a.u16(0, "table", 0, "");
  const auto type = static_cast<ck::HalfType>(a.half_code(1, "type"));
  ck::embedding_forward_half(table, type, checked_ids(a, 2, n, rows), a.f32(3, "out", n * dim, "n*dim"), n, dim);
  return info.Env().Undefined();
}

Napi::Value EmbeddingBackward(const Napi::CallbackInfo& info) {
  Args a(info, "embeddingBackward", 5);
  const ptrdiff_t n = a.size(3, "n"), dim = a.size(4, "dim");
  const ptrdiff_t rows = dim > 0 ? a.f32_length(2, "dtable") / dim : 0;
  ck::embedding_backward(a.f32(0, "dout", n * dim, "n*dim"), checked_ids(a, 1, n, rows), a.f32(2, "dtable", 0, ""),
                         n, dim);
  return info.Env().Undefined();
}

const char* backend_name(ck::GemmBackend b) { return b == ck::GemmBackend::OpenBLAS ? "openblas" : "packed"; }

Napi::Value GemmBackend(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), backend_name(ck::gemm_backend()));
}

Napi::Value GemmBackends(const Napi::CallbackInfo& info) {
  Napi::Array out = Napi::Array::New(info.Env());
  uint32_t i = 0;
  if (ck::have_openblas()) out.Set(i++, Napi::String::New(info.Env(), "openblas"));
  out.Set(i++, Napi::String::New(info.Env(), "packed"));
  return out;
}

Napi::Value SetGemmBackend(const Napi::CallbackInfo& info) {
  const std::string name = info.Length() > 0 && info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
  if (name == "packed") {
    ck::set_gemm_backend(ck::GemmBackend::Packed);
  } else if (name == "openblas") {
    if (!ck::have_openblas())
      throw Napi::Error::New(info.Env(), "setGemmBackend: this build has no OpenBLAS (libopenblas-dev was not found when the addon was built)");
    ck::set_gemm_backend(ck::GemmBackend::OpenBLAS);
  } else {
    throw Napi::TypeError::New(info.Env(), "setGemmBackend: expected \"openblas\" or \"packed\", got \"" + name + "\"");
  }
  return info.Env().Undefined();
}

Napi::Value GemmBlocks(const Napi::CallbackInfo& info) {
  const ck::GemmBlocks b = ck::gemm_blocks();
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("kc", b.kc);
  out.Set("nc", b.nc);
  out.Set("mr", b.mr);
  out.Set("nr", b.nr);
  out.Set("defaultKc", b.default_kc);
  out.Set("defaultNc", b.default_nc);
  out.Set("packA", b.pack_a);
  return out;
}

Napi::Value SetGemmBlocks(const Napi::CallbackInfo& info) {
  Args a(info, "setGemmBlocks", 2);
  const ptrdiff_t kc = a.size(0, "kc"), nc = a.size(1, "nc");
  const bool pack_a = info.Length() > 2 && info[2].IsBoolean() && info[2].As<Napi::Boolean>().Value();
  if (!ck::set_gemm_blocks(static_cast<int>(kc), static_cast<int>(nc), pack_a))
    a.fail_range("kc must be a multiple of 8 in 8..2048 and nc a multiple of " + std::to_string(ck::gemm_blocks().nr) +
                 " up to 4096, got kc " + std::to_string(kc) + ", nc " + std::to_string(nc));
  return info.Env().Undefined();
}

Napi::Value NumThreads(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), ck::threads()); }

Napi::Value SetNumThreads(const Napi::CallbackInfo& info) {
  Args a(info, "setNumThreads", 1);
  const ptrdiff_t n = a.size(0, "n");
  if (n < 1 || n > 1024) a.fail_range("n must be in 1..1024, got " + std::to_string(n));
  ck::set_threads(static_cast<int>(n));
  return info.Env().Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  // COOKBOOK_GEMM=packed | openblas picks the GEMM path over the build's default (read once at load).
  const char* force = std::getenv("COOKBOOK_GEMM");
  if (force != nullptr && std::string(force) == "packed") ck::set_gemm_backend(ck::GemmBackend::Packed);
  if (force != nullptr && std::string(force) == "openblas" && ck::have_openblas())
    ck::set_gemm_backend(ck::GemmBackend::OpenBLAS);
  ck::threads();
  exports.Set("gemm", Napi::Function::New(env, Gemm, "gemm"));
  exports.Set("gemmHalf", Napi::Function::New(env, GemmHalf, "gemmHalf"));
  exports.Set("bf16ToFloat32", Napi::Function::New(env, Bf16ToFloat32, "bf16ToFloat32"));
  exports.Set("mxfp4ToBf16", Napi::Function::New(env, Mxfp4ToBf16, "mxfp4ToBf16"));
  exports.Set("rmsnormForward", Napi::Function::New(env, RmsnormForward, "rmsnormForward"));
  exports.Set("rmsnormBackward", Napi::Function::New(env, RmsnormBackward, "rmsnormBackward"));
  exports.Set("rope", Napi::Function::New(env, Rope, "rope"));
  exports.Set("attentionForward", Napi::Function::New(env, AttentionForward, "attentionForward"));
  exports.Set("attentionBackward", Napi::Function::New(env, AttentionBackward, "attentionBackward"));
  exports.Set("attentionDecode", Napi::Function::New(env, AttentionDecode, "attentionDecode"));
  exports.Set("attentionDecodeSlots", Napi::Function::New(env, AttentionDecodeSlotsT<false>, "attentionDecodeSlots"));
  exports.Set("attentionDecodeSlotsF16", Napi::Function::New(env, AttentionDecodeSlotsT<true>, "attentionDecodeSlotsF16"));
  exports.Set("swigluForward", Napi::Function::New(env, SwigluForward, "swigluForward"));
  exports.Set("swigluBackward", Napi::Function::New(env, SwigluBackward, "swigluBackward"));
  exports.Set("gegluForward", Napi::Function::New(env, GegluForward, "gegluForward"));
  exports.Set("gegluBackward", Napi::Function::New(env, GegluBackward, "gegluBackward"));
  exports.Set("logprobsForward", Napi::Function::New(env, LogprobsForward, "logprobsForward"));
  exports.Set("logprobsBackward", Napi::Function::New(env, LogprobsBackward, "logprobsBackward"));
  exports.Set("adamw", Napi::Function::New(env, Adamw, "adamw"));
  exports.Set("axpy", Napi::Function::New(env, Axpy, "axpy"));
  exports.Set("sumSquares", Napi::Function::New(env, SumSquares, "sumSquares"));
  exports.Set("add", Napi::Function::New(env, Add, "add"));
  exports.Set("embeddingForward", Napi::Function::New(env, EmbeddingForward, "embeddingForward"));
  exports.Set("embeddingForwardHalf", Napi::Function::New(env, EmbeddingForwardHalf, "embeddingForwardHalf"));
  exports.Set("embeddingBackward", Napi::Function::New(env, EmbeddingBackward, "embeddingBackward"));
  exports.Set("gemmBackend", Napi::Function::New(env, GemmBackend, "gemmBackend"));
  exports.Set("gemmBackends", Napi::Function::New(env, GemmBackends, "gemmBackends"));
  exports.Set("setGemmBackend", Napi::Function::New(env, SetGemmBackend, "setGemmBackend"));
  exports.Set("gemmBlocks", Napi::Function::New(env, GemmBlocks, "gemmBlocks"));
  exports.Set("setGemmBlocks", Napi::Function::New(env, SetGemmBlocks, "setGemmBlocks"));
  exports.Set("numThreads", Napi::Function::New(env, NumThreads, "numThreads"));
  exports.Set("setNumThreads", Napi::Function::New(env, SetNumThreads, "setNumThreads"));
  ck_napi::register_decode_kernels(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(cookbook_kernels, Init)
