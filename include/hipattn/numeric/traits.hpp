// hipattn/numeric/traits.hpp: DType <-> C++ element type mapping, and float load/store by runtime DType.
#pragma once
#include <cstdint>
#include <type_traits>

#include "hipattn/numeric/bf16.hpp"
#include "hipattn/numeric/dtype.hpp"
#include "hipattn/numeric/fp16.hpp"
#include "hipattn/numeric/fp8.hpp"
#include "hipattn/platform/config.hpp"

namespace hipattn {

// float -> float and float identity overloads, so generic code can treat float like the others.
HIPATTN_HOST_DEVICE constexpr float to_float(float x) { return x; }
template <>
HIPATTN_HOST_DEVICE constexpr float from_float<float>(float f) {
  return f;
}

// The C++ element type of a DType: dtype_type<DType::f16>::type is half_t, and so on.
template <DType D>
struct dtype_type;
template <>
struct dtype_type<DType::f16> { using type = half_t; };
template <>
struct dtype_type<DType::bf16> { using type = bfloat16_t; };
template <>
struct dtype_type<DType::f32> { using type = float; };
template <>
struct dtype_type<DType::fp8_e4m3fn> { using type = fp8_e4m3fn_t; };
template <>
struct dtype_type<DType::fp8_e4m3fnuz> { using type = fp8_e4m3fnuz_t; };

template <DType D>
using dtype_type_t = typename dtype_type<D>::type;

namespace detail {
template <class T>
struct dtype_of_impl {
  static_assert(!std::is_same_v<T, T>, "dtype_of: T is not a hipattn element type");
};
template <>
struct dtype_of_impl<half_t> { static constexpr DType value = DType::f16; };
template <>
struct dtype_of_impl<bfloat16_t> { static constexpr DType value = DType::bf16; };
template <>
struct dtype_of_impl<float> { static constexpr DType value = DType::f32; };
template <>
struct dtype_of_impl<fp8_e4m3fn_t> { static constexpr DType value = DType::fp8_e4m3fn; };
template <>
struct dtype_of_impl<fp8_e4m3fnuz_t> { static constexpr DType value = DType::fp8_e4m3fnuz; };
}  // namespace detail

// The DType tag of a C++ element type (dtype_of<half_t> == DType::f16, ...).
template <class T>
inline constexpr DType dtype_of = detail::dtype_of_impl<std::remove_cv_t<T>>::value;

// Element `index` of an array of dtype `dt` starting at `base`, converted exactly to float.
HIPATTN_HOST_DEVICE inline float load_as_float(const void* base, DType dt, int64_t index) {
  switch (dt) {
    case DType::f16: return static_cast<const half_t*>(base)[index].to_float();
    case DType::bf16: return static_cast<const bfloat16_t*>(base)[index].to_float();
    case DType::f32: return static_cast<const float*>(base)[index];
    case DType::fp8_e4m3fn: return static_cast<const fp8_e4m3fn_t*>(base)[index].to_float();
    case DType::fp8_e4m3fnuz: return static_cast<const fp8_e4m3fnuz_t*>(base)[index].to_float();
  }
  return 0.0f;
}

// Store v (rounded to nearest even, with each type's overflow rule) as element `index` of an array
// of dtype `dt` starting at `base`.
HIPATTN_HOST_DEVICE inline void store_from_float(void* base, DType dt, int64_t index, float v) {
  switch (dt) {
    case DType::f16: static_cast<half_t*>(base)[index] = half_t::from_float(v); return;
    case DType::bf16: static_cast<bfloat16_t*>(base)[index] = bfloat16_t::from_float(v); return;
    case DType::f32: static_cast<float*>(base)[index] = v; return;
    case DType::fp8_e4m3fn:
      static_cast<fp8_e4m3fn_t*>(base)[index] = fp8_e4m3fn_t::from_float(v);
      return;
    case DType::fp8_e4m3fnuz:
      static_cast<fp8_e4m3fnuz_t*>(base)[index] = fp8_e4m3fnuz_t::from_float(v);
      return;
  }
}

}  // namespace hipattn
