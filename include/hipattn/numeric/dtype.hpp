// hipattn/numeric/dtype.hpp: the runtime element-type tag used by problem descriptions.
#pragma once
#include <cstdint>
#include <string_view>

namespace hipattn {

// Element type of a tensor, as a runtime value (the dispatcher maps it to a C++ type).
enum class DType : uint8_t { f16, bf16, f32, fp8_e4m3fn, fp8_e4m3fnuz };

constexpr std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::f16: return "fp16";
    case DType::bf16: return "bf16";
    case DType::f32: return "fp32";
    case DType::fp8_e4m3fn: return "fp8_e4m3fn";
    case DType::fp8_e4m3fnuz: return "fp8_e4m3fnuz";
  }
  return "?";
}

// Bytes per element.
constexpr int dtype_size(DType d) {
  switch (d) {
    case DType::f16:
    case DType::bf16: return 2;
    case DType::f32: return 4;
    case DType::fp8_e4m3fn:
    case DType::fp8_e4m3fnuz: return 1;
  }
  return 0;
}

constexpr bool is_fp8(DType d) { return d == DType::fp8_e4m3fn || d == DType::fp8_e4m3fnuz; }

}  // namespace hipattn
