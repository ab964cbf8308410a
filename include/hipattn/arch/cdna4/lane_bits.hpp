// hipattn/arch/cdna4/lane_bits.hpp: read one 32-bit element of a vector as a float.
//
// elem_as_float<I>(v) is __builtin_bit_cast(float, v[I]) with the element copied into an unsigned
// first. The direct form is wrong: clang ignores the subscript (or .x/.y swizzle) of an
// ext_vector_type element inside __builtin_bit_cast and reads element 0
// (https://github.com/llvm/llvm-project/issues/95673; clang 21 still emits
// `extractelement <2 x float> ..., i64 0` for __builtin_bit_cast(float, h[1])). The pair that
// __builtin_amdgcn_permlane{16,32}_swap returns is such a vector, so the gfx950 row reductions
// (atoms.hpp) read it through this helper. Never bit-cast a vector element directly.
//
// Plain C++ (no device code), so the host regression test tests/isa/bitcast_regression.cpp
// compiles it with the host clang.
#pragma once

#include "hipattn/platform/config.hpp"

namespace hipattn::cdna4 {

template <int I, class V>
HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE float elem_as_float(const V& v) {
  static_assert(I >= 0 && static_cast<unsigned>(I) < sizeof(V) / sizeof(v[0]), "elem_as_float: index out of range");
  static_assert(sizeof(v[0]) == sizeof(float), "elem_as_float: elements must be 32-bit");
  const unsigned bits = v[I];  // the copy is the fix: bit-cast a scalar, not a vector element
  return __builtin_bit_cast(float, bits);
}

}  // namespace hipattn::cdna4
