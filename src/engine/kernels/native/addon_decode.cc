// Node-API surface of the sampler's and the loader's kernels (decode.cc, safetensors_map.cc),
// kept apart from addon.cc so the training kernels and these can change independently. Every
// array length and index is checked, as in addon.cc.

#include <napi.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#if !defined(_WIN32)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "decode.h"
#include "napi_args.h"

namespace {

using ck_napi::Args;

// y = x·Wᵀ for the sampler's two row-independent products, one argument list each:
// (M, N, K, alpha, A, W, beta, C) and, with W in 16 bits, (M, N, K, alpha, A, W: Uint16Array, type, beta, C).
// gemmRowsNT is for decode-sized products, gemmPrefillNT for prompt-sized ones.
using GemmNT = void (*)(ptrdiff_t, ptrdiff_t, ptrdiff_t, float, const float*, const float*, float, float*);
using GemmNTHalf = void (*)(ptrdiff_t, ptrdiff_t, ptrdiff_t, float, const float*, const uint16_t*, ck::HalfType, float,
                            float*);

template <GemmNT gemm>
Napi::Value GemmNTBinding(const Napi::CallbackInfo& info, const char* name) {
  Args a(info, name, 8);
  const ptrdiff_t M = a.size(0, "M"), N = a.size(1, "N"), K = a.size(2, "K");
  const float alpha = static_cast<float>(a.number(3, "alpha"));
  const float beta = static_cast<float>(a.number(6, "beta"));
  gemm(M, N, K, alpha, a.f32(4, "A", M * K, "M*K"), a.f32(5, "W", N * K, "N*K"), beta, a.f32(7, "C", M * N, "M*N"));
  return info.Env().Undefined();
}

template <GemmNTHalf gemm>
Napi::Value GemmNTHalfBinding(const Napi::CallbackInfo& info, const char* name) {
  Args a(info, name, 9);
  const ptrdiff_t M = a.size(0, "M"), N = a.size(1, "N"), K = a.size(2, "K");
  const float alpha = static_cast<float>(a.number(3, "alpha"));
  const auto type = static_cast<ck::HalfType>(a.half_code(6, "type"));
  const float beta = static_cast<float>(a.number(7, "beta"));
  gemm(M, N, K, alpha, a.f32(4, "A", M * K, "M*K"), a.u16(5, "W", N * K, "N*K"), type, beta, a.f32(8, "C", M * N, "M*N"));
  return info.Env().Undefined();
}

Napi::Value GemmRowsNT(const Napi::CallbackInfo& info) { return GemmNTBinding<ck::gemm_rows_nt>(info, "gemmRowsNT"); }
Napi::Value GemmRowsNTHalf(const Napi::CallbackInfo& info) {
  return GemmNTHalfBinding<ck::gemm_rows_nt_half>(info, "gemmRowsNTHalf");
}
Napi::Value GemmPrefillNT(const Napi::CallbackInfo& info) {
  return GemmNTBinding<ck::gemm_prefill_nt>(info, "gemmPrefillNT");
}
Napi::Value GemmPrefillNTHalf(const Napi::CallbackInfo& info) {
  return GemmNTHalfBinding<ck::gemm_prefill_nt_half>(info, "gemmPrefillNTHalf");
}

// kvStore(k, v, kCache, vCache, cacheSlots, positions, n, nKvHeads, headDim, maxLen) with
// Float32Array caches, or (F16) Uint16Array caches that receive IEEE half bits (nearest even).
template <bool F16>
Napi::Value KvStoreT(const Napi::CallbackInfo& info) {
  Args a(info, F16 ? "kvStoreF16" : "kvStore", 10);
  const ptrdiff_t n = a.size(6, "n"), hkv = a.size(7, "nKvHeads"), d = a.size(8, "headDim");
  const ptrdiff_t max_len = a.size(9, "maxLen");
  const ptrdiff_t slot_size = hkv * max_len * d;
  const ptrdiff_t cache_len = F16 ? std::min(a.u16_length(2, "kCache"), a.u16_length(3, "vCache"))
                                  : std::min(a.f32_length(2, "kCache"), a.f32_length(3, "vCache"));
  const ptrdiff_t num_slots = slot_size > 0 ? cache_len / slot_size : 0;
  const int32_t* slots = a.i32(4, "cacheSlots", n, "n");
  const int32_t* positions = a.i32(5, "positions", n, "n");
  for (ptrdiff_t i = 0; i < n; i++) {
    if (slots[i] < 0 || slots[i] >= num_slots)
      a.fail_range("cacheSlots[" + std::to_string(i) + "] = " + std::to_string(slots[i]) + " is outside 0.." +
                   std::to_string(num_slots - 1));
    if (positions[i] < 0 || positions[i] >= max_len)
      a.fail_range("positions[" + std::to_string(i) + "] = " + std::to_string(positions[i]) + " is outside 0.." +
                   std::to_string(max_len - 1));
  }
  const float* k = a.f32(0, "k", n * hkv * d, "n*nKvHeads*headDim");
  const float* v = a.f32(1, "v", n * hkv * d, "n*nKvHeads*headDim");
  if constexpr (F16) {
    // The caches are the caller's writable Uint16Arrays; Args hands out 16-bit arrays as const.
    ck::kv_store_f16(k, v, const_cast<uint16_t*>(a.u16(2, "kCache", 0, "")), const_cast<uint16_t*>(a.u16(3, "vCache", 0, "")),
                     slots, positions, n, hkv, d, max_len);
  } else {
    ck::kv_store(k, v, a.f32(2, "kCache", 0, ""), a.f32(3, "vCache", 0, ""), slots, positions, n, hkv, d, max_len);
  }
  return info.Env().Undefined();
}

Napi::Value SampleRows(const Napi::CallbackInfo& info) {
  Args a(info, "sampleRows", 7);
  const ptrdiff_t rows = a.size(1, "rows"), vocab = a.size(2, "vocab");
  if (vocab < 1) a.fail_range("vocab must be at least 1");
  const float* temps = a.f32(3, "temperatures", rows, "rows");
  for (ptrdiff_t r = 0; r < rows; r++)
    if (!(temps[r] >= 0.0f)) a.fail_range("temperatures[" + std::to_string(r) + "] must be >= 0");
  ck::sample_rows(a.f32(0, "logits", rows * vocab, "rows*vocab"), rows, vocab, temps,
                  a.array<double, napi_float64_array>(4, "uniforms", rows, "rows"), a.i32(5, "tokens", rows, "rows"),
                  a.array<double, napi_float64_array>(6, "logprobs", rows, "rows"));
  return info.Env().Undefined();
}

Napi::Value ReadBandwidthProbe(const Napi::CallbackInfo& info) {
  Args a(info, "readBandwidthProbe", 2);
  const ptrdiff_t n = a.size(1, "n");
  return Napi::Number::New(info.Env(), ck::read_bandwidth_probe(a.f32(0, "x", n, "n"), n));
}

// widenFromFile(file, offsets: Float64Array, dtypes: Int32Array, dsts: Float32Array[])
Napi::Value WidenFromFile(const Napi::CallbackInfo& info) {
  Args a(info, "widenFromFile", 4);
  if (!info[0].IsString()) a.fail_type("argument file must be a string");
  const std::string file = info[0].As<Napi::String>().Utf8Value();
  if (!info[3].IsArray()) a.fail_type("argument dsts must be an Array of Float32Array");
  const Napi::Array dsts = info[3].As<Napi::Array>();
  const ptrdiff_t n = static_cast<ptrdiff_t>(dsts.Length());
  const double* offsets = a.array<double, napi_float64_array>(1, "offsets", n, "dsts.length");
  const int32_t* types = a.i32(2, "dtypes", n, "dsts.length");
  std::vector<ck::WidenJob> jobs;
  jobs.reserve(static_cast<size_t>(n));
  for (ptrdiff_t i = 0; i < n; i++) {
    const Napi::Value v = dsts[static_cast<uint32_t>(i)];
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
      a.fail_type("dsts[" + std::to_string(i) + "] must be a Float32Array, got " + ck_napi::describe(v));
    if (types[i] < 0 || types[i] > 3)
      a.fail_range("dtypes[" + std::to_string(i) + "] = " + std::to_string(types[i]) + " is not 0..3 (F32, BF16, F16, F64)");
    if (!(offsets[i] >= 0 && offsets[i] <= 9.0e15))
      a.fail_range("offsets[" + std::to_string(i) + "] must be a non-negative byte offset");
    Napi::Float32Array d = v.As<Napi::Float32Array>();
    jobs.push_back({static_cast<size_t>(offsets[i]), static_cast<ck::StoredType>(types[i]), d.Data(), d.ElementLength()});
  }
  const std::string err = ck::widen_from_file(file, jobs);
  if (!err.empty()) throw Napi::Error::New(info.Env(), file + ": " + err);
  return info.Env().Undefined();
}

// mapFile(file): an ArrayBuffer over a read-only private mapping of the whole file. The mapping is
// released (munmap) when the ArrayBuffer is garbage-collected, i.e. once no view of it is left.
// mapFile(file, offset, length): bytes [offset, offset + length) only (offset page-aligned), for
// files whose whole mapping would pass the 4 GiB an ArrayBuffer can wrap here.
Napi::Value MapFile(const Napi::CallbackInfo& info) {
  Args a(info, "mapFile", 1);
  if (!info[0].IsString()) a.fail_type("argument file must be a string");
  const std::string file = info[0].As<Napi::String>().Utf8Value();
  const ptrdiff_t offset = a.optional_size(1, "offset", -1);
  const ptrdiff_t length = a.optional_size(2, "length", 0);
  if (offset >= 0 && (length <= 0 || static_cast<double>(length) > 4294967296.0))
    a.fail_range("argument length must be 1 to 4294967296 bytes when an offset is given");
  void* data = nullptr;
  size_t size = 0;
  const std::string err = offset < 0 ? ck::map_file(file, &data, &size)
                                     : ck::map_file_range(file, static_cast<size_t>(offset), static_cast<size_t>(length), &data, &size);
  if (!err.empty()) throw Napi::Error::New(info.Env(), file + ": " + err);
  if (data == nullptr) return Napi::ArrayBuffer::New(info.Env(), 0);
  return Napi::ArrayBuffer::New(
      info.Env(), data, size, [](Napi::Env, void* d, size_t* n) {
        ck::unmap_file(d, *n);
        delete n;
      },
      new size_t(size));
}

// allocPages(bytes): a zeroed ArrayBuffer on pages of its own (an anonymous private mapping,
// page-aligned), unmapped when the ArrayBuffer is garbage-collected. KV caches live in these so
// that positions never written cost no memory (a sample's own slot below its shared prompt) and
// releasePages can give a finished cache's memory back at once.
Napi::Value AllocPages(const Napi::CallbackInfo& info) {
  Args a(info, "allocPages", 1);
  const ptrdiff_t bytes = a.size(0, "bytes");
#if defined(_WIN32)
  return Napi::ArrayBuffer::New(info.Env(), static_cast<size_t>(bytes));
#else
  if (bytes == 0) return Napi::ArrayBuffer::New(info.Env(), 0);
  void* data = mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED)
    throw Napi::Error::New(info.Env(), "allocPages: cannot map " + std::to_string(bytes) + " bytes: " + std::strerror(errno));
  return Napi::ArrayBuffer::New(
      info.Env(), data, static_cast<size_t>(bytes),
      [](Napi::Env, void* d, size_t* n) {
        munmap(d, *n);
        delete n;
      },
      new size_t(static_cast<size_t>(bytes)));
#endif
}

// releasePages(view): the whole pages inside the view's bytes go back to the OS (MADV_DONTNEED);
// they read as zeros afterwards and cost memory again only when written. Returns the bytes given back.
Napi::Value ReleasePages(const Napi::CallbackInfo& info) {
  Args a(info, "releasePages", 1);
  if (!info[0].IsTypedArray()) a.fail_type("argument view must be a typed array, got " + ck_napi::describe(info[0]));
  const Napi::TypedArray view = info[0].As<Napi::TypedArray>();
  size_t released = 0;
#if !defined(_WIN32)
  const uintptr_t start = reinterpret_cast<uintptr_t>(static_cast<char*>(view.ArrayBuffer().Data()) + view.ByteOffset());
  const uintptr_t end = start + view.ByteLength();
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t lo = (start + page - 1) / page * page, hi = end / page * page;
  if (hi > lo && madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED) == 0) released = hi - lo;
#endif
  return Napi::Number::New(info.Env(), static_cast<double>(released));
}

}  // namespace

namespace ck_napi {

void register_decode_kernels(Napi::Env env, Napi::Object exports) {
  exports.Set("gemmRowsNT", Napi::Function::New(env, GemmRowsNT, "gemmRowsNT"));
  exports.Set("gemmPrefillNT", Napi::Function::New(env, GemmPrefillNT, "gemmPrefillNT"));
  exports.Set("gemmPrefillNTHalf", Napi::Function::New(env, GemmPrefillNTHalf, "gemmPrefillNTHalf"));
  exports.Set("gemmRowsNTHalf", Napi::Function::New(env, GemmRowsNTHalf, "gemmRowsNTHalf"));
  exports.Set("mapFile", Napi::Function::New(env, MapFile, "mapFile"));
  exports.Set("allocPages", Napi::Function::New(env, AllocPages, "allocPages"));
  exports.Set("releasePages", Napi::Function::New(env, ReleasePages, "releasePages"));
  exports.Set("kvStore", Napi::Function::New(env, KvStoreT<false>, "kvStore"));
  exports.Set("kvStoreF16", Napi::Function::New(env, KvStoreT<true>, "kvStoreF16"));
  exports.Set("sampleRows", Napi::Function::New(env, SampleRows, "sampleRows"));
  exports.Set("readBandwidthProbe", Napi::Function::New(env, ReadBandwidthProbe, "readBandwidthProbe"));
  exports.Set("widenFromFile", Napi::Function::New(env, WidenFromFile, "widenFromFile"));
}

}  // namespace ck_napi
