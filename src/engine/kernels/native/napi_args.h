// Argument checking for the Node-API wrappers (addon.cc, addon_decode.cc): typed arrays of the
// right element type and length, sizes and numbers, with errors that name the kernel and argument.
#pragma once

#include <napi.h>

#include <cmath>
#include <string>

namespace ck_napi {

inline const char* typed_array_name(napi_typedarray_type t) {
  switch (t) {
    case napi_int8_array: return "Int8Array";
    case napi_uint8_array: return "Uint8Array";
    case napi_uint8_clamped_array: return "Uint8ClampedArray";
    case napi_int16_array: return "Int16Array";
    case napi_uint16_array: return "Uint16Array";
    case napi_int32_array: return "Int32Array";
    case napi_uint32_array: return "Uint32Array";
    case napi_float32_array: return "Float32Array";
    case napi_float64_array: return "Float64Array";
    case napi_bigint64_array: return "BigInt64Array";
    case napi_biguint64_array: return "BigUint64Array";
    default: return "typed array";
  }
}

inline std::string describe(const Napi::Value& v) {
  if (v.IsTypedArray()) return typed_array_name(v.As<Napi::TypedArray>().TypedArrayType());
  if (v.IsNull()) return "null";
  if (v.IsUndefined()) return "undefined";
  if (v.IsNumber()) return "number " + std::to_string(v.As<Napi::Number>().DoubleValue());
  if (v.IsBoolean()) return "boolean";
  if (v.IsString()) return "string";
  if (v.IsArray()) return "Array";
  return "object";
}

class Args {
 public:
  Args(const Napi::CallbackInfo& info, const char* kernel, size_t count) : info_(info), kernel_(kernel) {
    if (info.Length() < count)
      fail_type("expected " + std::to_string(count) + " arguments, got " + std::to_string(info.Length()));
  }

  template <typename T, napi_typedarray_type Type>
  T* array(size_t i, const char* name, ptrdiff_t need, const char* what) {
    const Napi::Value v = info_[i];
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != Type) {
      fail_type(std::string("argument ") + name + " must be a " + typed_array_name(Type) +
                (Type == napi_float32_array ? " (the native kernels are float32-only)" : "") + ", got " +
                describe(v));
    }
    Napi::TypedArrayOf<T> a = v.As<Napi::TypedArrayOf<T>>();
    if (static_cast<ptrdiff_t>(a.ElementLength()) < need) {
      fail_range(std::string("argument ") + name + " has " + std::to_string(a.ElementLength()) +
                 " elements but needs at least " + std::to_string(need) + " (" + what + ")");
    }
    return a.Data();
  }
  float* f32(size_t i, const char* name, ptrdiff_t need, const char* what) {
    return array<float, napi_float32_array>(i, name, need, what);
  }
  float* f32_or_null(size_t i, const char* name, ptrdiff_t need, const char* what) {
    if (info_[i].IsNull()) return nullptr;
    return f32(i, name, need, what);
  }
  // Raw 16-bit weights (bf16 / f16 bits).
  const uint16_t* u16(size_t i, const char* name, ptrdiff_t need, const char* what) {
    return array<uint16_t, napi_uint16_array>(i, name, need, what);
  }
  ptrdiff_t u16_length(size_t i, const char* name) {
    u16(i, name, 0, "");
    return static_cast<ptrdiff_t>(info_[i].As<Napi::TypedArray>().ElementLength());
  }
  // A half type code: 1 bf16, 2 f16 (kernels/halfArray.ts).
  int half_code(size_t i, const char* name) {
    const double d = number(i, name);
    if (d != 1 && d != 2) fail_range(std::string("argument ") + name + " must be 1 (bf16) or 2 (f16), got " + std::to_string(d));
    return static_cast<int>(d);
  }
  int32_t* i32(size_t i, const char* name, ptrdiff_t need, const char* what) {
    return array<int32_t, napi_int32_array>(i, name, need, what);
  }
  ptrdiff_t i32_length(size_t i, const char* name) {
    const Napi::Value v = info_[i];
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array)
      fail_type(std::string("argument ") + name + " must be an Int32Array, got " + describe(v));
    return static_cast<ptrdiff_t>(v.As<Napi::TypedArray>().ElementLength());
  }
  ptrdiff_t f32_length(size_t i, const char* name) {
    f32(i, name, 0, "");
    return static_cast<ptrdiff_t>(info_[i].As<Napi::TypedArray>().ElementLength());
  }

  double number(size_t i, const char* name) {
    const Napi::Value v = info_[i];
    if (!v.IsNumber()) fail_type(std::string("argument ") + name + " must be a number, got " + describe(v));
    return v.As<Napi::Number>().DoubleValue();
  }
  ptrdiff_t size(size_t i, const char* name) {
    const double d = number(i, name);
    if (!(d >= 0 && d <= 9.0e15 && std::floor(d) == d))
      fail_range(std::string("argument ") + name + " must be a non-negative integer, got " + std::to_string(d));
    return static_cast<ptrdiff_t>(d);
  }
  // An optional trailing size: `fallback` when the argument is absent or undefined.
  ptrdiff_t optional_size(size_t i, const char* name, ptrdiff_t fallback) {
    if (info_.Length() <= i || info_[i].IsUndefined()) return fallback;
    return size(i, name);
  }
  bool boolean(size_t i, const char* name) {
    const Napi::Value v = info_[i];
    if (!v.IsBoolean()) fail_type(std::string("argument ") + name + " must be a boolean, got " + describe(v));
    return v.As<Napi::Boolean>().Value();
  }

  [[noreturn]] void fail_type(const std::string& msg) const {
    throw Napi::TypeError::New(info_.Env(), std::string(kernel_) + ": " + msg);
  }
  [[noreturn]] void fail_range(const std::string& msg) const {
    throw Napi::RangeError::New(info_.Env(), std::string(kernel_) + ": " + msg);
  }

 private:
  const Napi::CallbackInfo& info_;
  const char* kernel_;
};

}  // namespace ck_napi

namespace ck_napi {
// Adds the sampler's and the loader's kernels (addon_decode.cc) to the addon's exports.
void register_decode_kernels(Napi::Env env, Napi::Object exports);
}  // namespace ck_napi
