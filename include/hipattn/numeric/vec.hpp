// hipattn/numeric/vec.hpp: Vec<T, N>, a packed, naturally aligned short vector, and bit-casts to raw storage.
//
// Vec<T, N> is N elements of T back to back, aligned to its full size (sizeof(T) * N must be a power
// of two), so a Vec of 4, 8 or 16 bytes can be loaded and stored as one 32/64/128-bit access.
// vec_bit_cast<To>(v) / vec_from_bits<V>(raw) reinterpret a Vec as any trivially copyable type of the
// same size: uint32_t, the backends' uint2/uint4, or hipattn::u32x2 / u32x4 (defined here so host
// code has them too). vec_storage_t<T, N> names the raw type of a Vec's size.
#pragma once
#include <cstdint>
#include <type_traits>

#include "hipattn/platform/config.hpp"

namespace hipattn {

// Eight raw bytes as two 32-bit words (host-side stand-in for uint2; same size and alignment).
struct alignas(8) u32x2 {
  uint32_t x, y;
};
// Sixteen raw bytes as four 32-bit words (host-side stand-in for uint4; same size and alignment).
struct alignas(16) u32x4 {
  uint32_t x, y, z, w;
};

namespace detail {
constexpr bool is_pow2(unsigned long long v) { return v != 0 && (v & (v - 1)) == 0; }

template <int Bytes>
struct raw_storage;
template <>
struct raw_storage<1> { using type = uint8_t; };
template <>
struct raw_storage<2> { using type = uint16_t; };
template <>
struct raw_storage<4> { using type = uint32_t; };
template <>
struct raw_storage<8> { using type = u32x2; };
template <>
struct raw_storage<16> { using type = u32x4; };
}  // namespace detail

// N packed elements of T, aligned to sizeof(T) * N bytes.
template <class T, int N>
struct alignas(sizeof(T) * N) Vec {
  static_assert(N > 0, "Vec needs at least one element");
  static_assert(detail::is_pow2(sizeof(T) * N), "sizeof(T) * N must be a power of two");

  using value_type = T;
  static constexpr int size = N;

  T v[N];

  HIPATTN_HOST_DEVICE constexpr T& operator[](int i) { return v[i]; }
  HIPATTN_HOST_DEVICE constexpr const T& operator[](int i) const { return v[i]; }

  // A Vec with every element equal to x.
  HIPATTN_HOST_DEVICE static constexpr Vec filled(T x) {
    Vec r{};
    for (int i = 0; i < N; ++i) r.v[i] = x;
    return r;
  }
};

// The raw unsigned storage type of a Vec<T, N> (1, 2, 4, 8 or 16 bytes).
template <class T, int N>
using vec_storage_t = typename detail::raw_storage<static_cast<int>(sizeof(T) * N)>::type;

// Reinterpret the bits of a Vec as To (same size; To trivially copyable, e.g. uint32_t, uint2, uint4).
template <class To, class T, int N>
HIPATTN_HOST_DEVICE constexpr To vec_bit_cast(const Vec<T, N>& v) {
  static_assert(sizeof(To) == sizeof(Vec<T, N>), "vec_bit_cast: sizes differ");
  static_assert(std::is_trivially_copyable_v<To> && std::is_trivially_copyable_v<T>,
                "vec_bit_cast: types must be trivially copyable");
  return __builtin_bit_cast(To, v);
}

// Reinterpret raw bits (same size as V) as a Vec type V.
template <class V, class From>
HIPATTN_HOST_DEVICE constexpr V vec_from_bits(const From& raw) {
  static_assert(sizeof(From) == sizeof(V), "vec_from_bits: sizes differ");
  static_assert(std::is_trivially_copyable_v<From> && std::is_trivially_copyable_v<V>,
                "vec_from_bits: types must be trivially copyable");
  return __builtin_bit_cast(V, raw);
}

// A Vec as its raw storage type (vec_storage_t<T, N>).
template <class T, int N>
HIPATTN_HOST_DEVICE constexpr vec_storage_t<T, N> to_storage(const Vec<T, N>& v) {
  return vec_bit_cast<vec_storage_t<T, N>>(v);
}

}  // namespace hipattn
