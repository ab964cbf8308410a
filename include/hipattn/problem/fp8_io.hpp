// hipattn/problem/fp8_io.hpp: fp8 queries and fp8 outputs, the part of vLLM's fp8 attention contract
// that unified attention and paged decode share (ALGORITHM.md section 12).
//
//   TensorScale    a per-tensor scale: a device scalar (read by the kernel: a call never synchronizes
//                  with the host), or, when that pointer is null, a host float that travels in the
//                  kernel arguments
//   OutputFormat   what the epilogue writes: the output dtype, and for an fp8 output either one
//                  per-tensor scale (vLLM's output_scale: out = saturate(O / scale)) or a scale per
//                  group of group_size columns of a row, computed by the kernel and written beside
//                  the output (vLLM's output_group_scale: scale = max(max |O_group|, 1e-10) /
//                  fp8_max, optionally rounded up to a power of two, UE8M0; out = saturate(O / scale))
//
// fp8 queries (q_dtype e4m3fn / e4m3fnuz) carry q_scale: real Q = code * q_scale. The kernels fold
// q_scale with the K scale into the score scale and read the codes exactly (an e4m3 value is exact in
// fp16 and bf16); compute_dtype() says which 16-bit type their products use. A 16-bit output is
// always of that type (one packing compiled per instance).
//
// A zero-filled struct (a C / FFI caller's memset, then the fields it knows) means the defaults here:
//   TensorScale    device null, host 0: unset. Where the scale is used (fp8 queries' q_scale, a
//                  per-tensor fp8 output's scale) host 0 is the identity scale 1 (host_or_one());
//                  where it must be unset, host 0 and host 1 are both accepted.
//   OutputFormat   dtype disengaged (std::optional<DType>: the engaged flag is a byte that zero
//                  leaves false in libstdc++ and libc++): the query dtype; group_size 0: no groups;
//                  group_fp8_max 0: the format's largest finite value.
//   Fp8Math        enumerator 0 is fp8_qk, the default.
// Every field's zero is its default here.
#pragma once
#include <cstdint>
#include <optional>

#include "hipattn/numeric/dtype.hpp"

namespace hipattn {

// A host scale value whose 0 means unset: the identity scale 1 where the scale is used. Any other
// value is returned as is (validation refuses the negative and non-finite ones).
constexpr float host_scale_or_one(float host) { return host == 0.f ? 1.f : host; }

// A per-tensor scale: *device when device != nullptr, else host. host 0 (the default, and what a
// zero-filled struct holds) is unset: the identity 1 where the scale is used; every reader of the
// host value goes through host_or_one(). Host values are validated (0, or finite and > 0; a scale
// that must be unset takes 0 or 1); device values cannot be, without a synchronization.
struct TensorScale {
  const float* device = nullptr;
  float host = 0.f;
  // The host scale the kernels and the references apply when device is null: host, or 1 when unset.
  constexpr float host_or_one() const { return host_scale_or_one(host); }
};

struct OutputFormat {
  // fp16, bf16 (the compute dtype: the query's, a 16-bit cache's), fp8_e4m3fn or fp8_e4m3fnuz.
  // Unset: the query dtype (which must then be 16-bit). Zero-filled, the optional is disengaged
  // (its engaged flag is 0 in libstdc++ and libc++), which is this "unset".
  std::optional<DType> dtype;
  // fp8, per tensor (group_size == 0): out = saturate(O / scale), saturating to the format's largest
  // finite value (448 e4m3fn, 240 e4m3fnuz), NaN kept NaN (numeric/fp8.hpp's rules); host 0 (unset)
  // is the scale 1. 16-bit outputs take no scale (leave it unset: host 0 or 1, device null).
  TensorScale scale;
  // fp8, per group (group_size > 0: 16, 32, 64 or 128, dividing head_size): each row's head_size
  // columns split into groups of group_size; group g of (token t, q head h) gets
  //   s = max(max |O|, 1e-10) / fp8_max   (NaN elements ignored by the max; UE8M0: s rounded up to a
  //                                        power of two)
  // written to group_scale[t * group_scale_stride_token + (h * head_size / group_size + g) *
  // group_scale_stride_group] (vLLM's [num_tokens, num_q_heads * head_size / group_size], row- or
  // column-major), and its columns out = saturate(O / s). `scale` must be left unset then.
  int32_t group_size = 0;
  float* group_scale = nullptr;
  int64_t group_scale_stride_token = 0;
  int64_t group_scale_stride_group = 0;
  bool group_ue8m0 = false;
  float group_fp8_max = 0.f;  // 0: the format's largest finite value; vLLM's ROCm path uses 224 for e4m3fnuz
};

// How fp8 queries meet an fp8 cache (ALGORITHM.md section 12). The fp8 matrix path is taken unless
// `convert`, where the target's fp8 MMA reads the cache's format (dispatch/skeleton_args.hpp
// operand_kv_kind):
//   sm_90 and gfx950: e4m3fn queries over an e4m3fn cache (mma.sync m16n8k32 e4m3; gfx950's
//     v_mfma_f32_16x16x32_fp8_fp8 reads OCP e4m3fn);
//   gfx942: e4m3fnuz or e4m3fn queries over an e4m3fnuz cache (its fp8 MFMA reads e4m3fnuz; e4m3fn
//     queries are re-encoded exactly as the e4m3fnuz codes of half their values, 2 into the score
//     scale).
// Every other combination converts the queries exactly to the compute dtype as they load, whatever
// this field says. sm_90 runs mma.sync's e4m3 shape by converting its operands to f16 for the f16
// tensor cores (NVIDIA/cutlass#1986; Hopper's native fp8 rate is wgmma's), so there the path saves
// the cache's conversion, not matrix time (bench/NOTES.md run v15). The CDNA MFMAs run fp8 at twice
// their 16-bit rate. The enumerators' values are the order below: fp8_qk (the default) is 0, so a
// zero-filled struct takes it.
enum class Fp8Math : uint8_t {
  // Scores by the e4m3 MMA; P V with P in f16 (11 significant bits) and V's codes converted exactly.
  // The default.
  fp8_qk,
  // Scores by the e4m3 MMA (exact products, fp32 sums); P V by the e4m3 MMA with P quantized to e4m3
  // (scaled by 2^8: relative error up to 2^-4 a weight) on tiles whose warps take 32 keys or more
  // (prefill tiles), P in f16 with V's codes converted exactly elsewhere (decode tiles) and with
  // per-(token, head) V scales (P then carries the scales). On sm_90 slower than fp8_qk and less
  // exact (P goes to e4m3 and back to f16 in the MMA's conversion). sm_90 only: the CDNA tiles
  // compute P V in 16-bit (V converted by the loader), so on gfx942 / gfx950 this is fp8_qk.
  fp8_pv,
  // Queries converted to the compute dtype as they load; every product in 16-bit.
  convert,
};

inline const char* fp8_math_name(Fp8Math m) {
  return m == Fp8Math::fp8_pv ? "fp8_pv" : m == Fp8Math::fp8_qk ? "fp8_qk" : "convert";
}

// The output dtype a problem writes.
inline DType output_dtype(DType q_dtype, const OutputFormat& f) { return f.dtype.value_or(q_dtype); }

// The 16-bit type of the kernels' matrix products (the instance a problem runs on), which is also the
// type of a 16-bit output: 16-bit queries their own; fp8 queries the type of a 16-bit cache, else of
// a 16-bit output, else fp16 (an e4m3 code and a probability have more precision in fp16 than bf16).
inline DType compute_dtype(DType q_dtype, DType kv_dtype, DType out_dtype) {
  if (!is_fp8(q_dtype)) return q_dtype;
  if (!is_fp8(kv_dtype)) return kv_dtype;
  return is_fp8(out_dtype) ? DType::f16 : out_dtype;
}

// The largest finite value of an fp8 format.
constexpr float fp8_max_finite(DType d) { return d == DType::fp8_e4m3fnuz ? 240.f : 448.f; }

// The fp8_max of a per-group output: group_fp8_max, or the format's largest finite value.
inline float group_fp8_max(DType out_dtype, const OutputFormat& f) {
  return f.group_fp8_max > 0.f ? f.group_fp8_max : fp8_max_finite(out_dtype);
}

}  // namespace hipattn
