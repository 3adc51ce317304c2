// The N-API side of every method: reading and checking arguments (numbers, integers in a range, typed
// arrays of one type, strings, options objects) and running a body so that a C++ exception becomes a
// thrown JavaScript error, never a crash. Plain N-API (node_api.h, which Node ships), no node-addon-api.

#pragma once

#include <node_api.h>

#include <cmath>
#include <new>
#include <string>
#include <utility>

#include "errors.h"

namespace arkivector {

#define NAPI_OK(call)                                                  \
  do {                                                                 \
    if ((call) != napi_ok) throw JsError("N-API call failed: " #call); \
  } while (0)

inline napi_valuetype typeOf(napi_env env, napi_value v) {
  napi_valuetype t;
  NAPI_OK(napi_typeof(env, v, &t));
  return t;
}

inline double numberArg(napi_env env, napi_value v, const char* what) {
  if (typeOf(env, v) != napi_number) throw ArgError(std::string(what) + " must be a number");
  double d;
  NAPI_OK(napi_get_value_double(env, v, &d));
  return d;
}

// An integer in [lo, hi].
inline size_t intArg(napi_env env, napi_value v, const char* what, double lo, double hi) {
  const double d = numberArg(env, v, what);
  if (!(d >= lo && d <= hi) || std::floor(d) != d)
    throw ArgError(std::string(what) + " must be an integer in [" + std::to_string((long long)lo) + ", " +
                   std::to_string((long long)hi) + "]");
  return (size_t)d;
}

inline bool isMissing(napi_env env, napi_value v) {
  const napi_valuetype t = typeOf(env, v);
  return t == napi_undefined || t == napi_null;
}

struct Typed {
  void* data = nullptr;
  size_t length = 0;
};

inline Typed typedArg(napi_env env, napi_value v, napi_typedarray_type want, const char* what) {
  bool is = false;
  NAPI_OK(napi_is_typedarray(env, v, &is));
  const char* names[] = {"Int8Array",  "Uint8Array",   "Uint8ClampedArray", "Int16Array",    "Uint16Array",
                         "Int32Array", "Uint32Array",  "Float32Array",      "Float64Array",  "BigInt64Array",
                         "BigUint64Array"};
  if (!is) throw ArgError(std::string(what) + " must be a " + names[want]);
  napi_typedarray_type t;
  Typed out;
  napi_value buf;
  size_t off;
  NAPI_OK(napi_get_typedarray_info(env, v, &t, &out.length, &out.data, &buf, &off));
  if (t != want) throw ArgError(std::string(what) + " must be a " + names[want]);
  return out;
}

// A vector or a query: float32 values or binary16 patterns (`halves` says which), of any length.
struct VectorArg {
  const void* data = nullptr;
  size_t length = 0;
  bool halves = false;
};

inline VectorArg vectorArg(napi_env env, napi_value v, const char* what) {
  bool is = false;
  NAPI_OK(napi_is_typedarray(env, v, &is));
  if (!is) throw ArgError(std::string(what) + " must be a Float32Array or a Uint16Array of binary16 patterns");
  napi_typedarray_type t;
  VectorArg out;
  void* data;
  napi_value buf;
  size_t off;
  NAPI_OK(napi_get_typedarray_info(env, v, &t, &out.length, &data, &buf, &off));
  if (t != napi_float32_array && t != napi_uint16_array)
    throw ArgError(std::string(what) + " must be a Float32Array or a Uint16Array of binary16 patterns");
  out.data = data;
  out.halves = t == napi_uint16_array;
  return out;
}

inline std::string stringArg(napi_env env, napi_value v, const char* what) {
  if (typeOf(env, v) != napi_string) throw ArgError(std::string(what) + " must be a string");
  size_t len = 0;
  NAPI_OK(napi_get_value_string_utf8(env, v, nullptr, 0, &len));
  if (len > 4096) throw ArgError(std::string(what) + " is too long");
  std::string s(len, '\0');
  NAPI_OK(napi_get_value_string_utf8(env, v, &s[0], len + 1, &len));
  if (s.find('\0') != std::string::npos) throw ArgError(std::string(what) + " contains a NUL byte");
  return s;
}

// An options object, or a TypeError naming the call (each option is then checked as it is read).
inline napi_value optionsArg(napi_env env, napi_value v, const char* call) {
  if (typeOf(env, v) != napi_object) throw ArgError(std::string(call) + " takes an options object");
  return v;
}

inline napi_value prop(napi_env env, napi_value obj, const char* name) {
  napi_value v;
  NAPI_OK(napi_get_named_property(env, obj, name, &v));
  return v;
}

inline napi_value num(napi_env env, double d) {
  napi_value v;
  NAPI_OK(napi_create_double(env, d, &v));
  return v;
}

inline napi_value str(napi_env env, const char* s) {
  napi_value v;
  NAPI_OK(napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v));
  return v;
}

// A new object with the given (name, value) properties.
template <size_t N>
napi_value objectOf(napi_env env, const std::pair<const char*, napi_value> (&fields)[N]) {
  napi_value o;
  NAPI_OK(napi_create_object(env, &o));
  for (const auto& [name, value] : fields) NAPI_OK(napi_set_named_property(env, o, name, value));
  return o;
}

// Runs a method body; a C++ exception becomes a thrown JavaScript error (never a crash): a TypeError for
// an argument refused, an Error otherwise, each with the code ERR_ARKIVECTOR_NATIVE.
template <typename F>
napi_value guarded(napi_env env, F body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    napi_throw_error(env, "ERR_ARKIVECTOR_NATIVE", "arkivector native: out of memory");
  } catch (const ArgError& e) {
    napi_throw_type_error(env, "ERR_ARKIVECTOR_NATIVE", (std::string("arkivector native: ") + e.what()).c_str());
  } catch (const std::exception& e) {
    napi_throw_error(env, "ERR_ARKIVECTOR_NATIVE", (std::string("arkivector native: ") + e.what()).c_str());
  }
  return nullptr;
}

}  // namespace arkivector
