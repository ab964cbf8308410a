// hipattn/dispatch/output_args.hpp: the output arguments of a launch (kernels/common/output_store.hpp)
// from a problem's output, dtype and format (problem/fp8_io.hpp). Every family's epilogue and reduce
// take the same OutputArgs; a family without an fp8 output passes a default OutputFormat.
#pragma once
#include <bit>
#include <cstdint>

#include "hipattn/kernels/common/output_store.hpp"
#include "hipattn/problem/fp8_io.hpp"

namespace hipattn {

constexpr OutKind out_kind_of(DType d) {
  return d == DType::bf16           ? OutKind::bf16
         : d == DType::fp8_e4m3fn   ? OutKind::e4m3fn
         : d == DType::fp8_e4m3fnuz ? OutKind::e4m3fnuz
                                    : OutKind::f16;
}

// The output [tokens, heads, head_size] at `out` by the strides (validated < 2^31), written as
// output_dtype(q_dtype, f) in f's format.
inline OutputArgs make_output_args(void* out, int64_t stride_token, int64_t stride_head, DType q_dtype,
                                   const OutputFormat& f, int32_t head_size) {
  OutputArgs o;
  const DType od = output_dtype(q_dtype, f);
  o.ptr = out;
  o.stride_token = static_cast<int32_t>(stride_token);
  o.stride_head = static_cast<int32_t>(stride_head);
  o.kind = out_kind_of(od);
  if (!is_fp8(od)) return o;
  if (f.group_size > 0) {
    o.group_shift = std::countr_zero(static_cast<uint32_t>(f.group_size));
    o.groups_per_head = head_size / f.group_size;
    o.group_ue8m0 = f.group_ue8m0;
    o.group_fp8_max = group_fp8_max(od, f);
    o.group_scale = f.group_scale;
    o.group_scale_stride_token = f.group_scale_stride_token;
    o.group_scale_stride_group = f.group_scale_stride_group;
  } else {
    o.scale_tensor = f.scale.device;
    o.scale_value = f.scale.host_or_one();
  }
  return o;
}

}  // namespace hipattn
