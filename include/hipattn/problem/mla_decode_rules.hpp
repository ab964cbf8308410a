// hipattn/problem/mla_decode_rules.hpp: the validation rules of MlaDecodeParams and MlaDecodeTraits
// (problem/mla_decode_params.hpp), and of host copies of its device arrays, written with
// problem/validate_toolkit.hpp like the unified, paged-decode and dense-prefill rules.
//
// What the host checks, and what it cannot: seq_lens_k and the block table live on the device, so
// validate(p) checks what the host holds by value (counts, dtypes, cache and sequence bounds, the
// logit and fp8 scales, pointers, strides); validate(p, host_seq_lens_k, host_block_table) also checks
// host copies of the two arrays. The kernels clamp nothing: a seq_lens_k entry above max_seqlen_k or a
// page id outside [0, num_pages) is undefined behaviour.
//
// Every rule runs (the report lists every violation, in the order below); a rule that needs another
// one to hold is skipped while that one fails (the stride alignment needs a known dtype, the pages
// bound needs page_size and max_pages_per_seq >= 1, the host arrays a valid problem), so that one
// mistake gives one issue. Each Issue names the field as MlaDecodeParams spells it, with the bad
// value in its message. Decisions fixed here (tests/host/test_mla_decode_rules pins them):
//   * batch == 0 is a valid no-op call: the device pointers may then be null, but the host-only
//     rules (num_heads, q_len, scale, dtypes, the cache's own shape) still apply (configuration
//     errors do not hide behind an empty step). num_pages and max_pages_per_seq must be >= 1 only
//     when batch > 0.
//   * q_len in [1, kMlaMaxQLen] (unsupported otherwise, as paged decode); the query rows of a
//     sequence (num_heads * q_len) and the tokens of the call (batch * q_len) fit 32-bit ints.
//   * q_dtype f16, bf16, fp8_e4m3fn or fp8_e4m3fnuz; kv_dtype equals a 16-bit q_dtype or is
//     fp8_e4m3fn / fp8_e4m3fnuz, and fp8 queries need an fp8 cache (unsupported otherwise). While
//     q_dtype is itself unsupported, kv_dtype only has to be one of those four. fp8 queries take
//     q_scale (device scalar, or a host value finite and > 0, or 0: unset, the scale 1); 16-bit ones
//     leave it unset (host 0 or 1).
//   * out_format: the rules unified attention runs (problem/fp8_io_rules.hpp, io_out_dtype and
//     io_scales with head size 512): the output dtype unset (q_dtype), q_dtype, or fp8; an fp8 output
//     takes a per-tensor scale (device scalar, or a host value finite and > 0, or 0: the scale 1) or a
//     group size in {16, 32, 64, 128} with a non-null, 4-byte-aligned group_scale whose [batch * q_len,
//     num_heads * 512 / group_size] strides do not overlap (required when batch > 0), group_fp8_max 0
//     or in (0, the format's max]; a 16-bit output takes none of these. Reported after the logit and
//     cache scales.
//   * A context shorter than q_len (0 included) is valid (those rows output zeros): no bound ties
//     max_seqlen_k to q_len. max_seqlen_k <= max_pages_per_seq * page_size (64-bit product), reported
//     on max_pages_per_seq as unified reports max_blocks_per_seq; block_table_stride >=
//     max_pages_per_seq and < 2^31.
//   * scale finite and > 0. An fp8 cache with kv_scale null takes kv_scale_value, which must be
//     0 (unset: the scale 1, kv_scale_value_or_one) or finite and > 0; a 16-bit cache ignores both
//     kv_scale fields.
//   * Required when batch > 0: q, kv_cache, block_table, seq_lens_k, out. q_rope (split query) and
//     lse are optional; their strides are read only when they are set.
//   * Strided tensors, innermost dimension first (toolkit rules: strides >= 0 and < 2^31 elements, no
//     overlap, stride alignment): q [batch * q_len, num_heads, 576 joined / 512 split], q_rope
//     [batch * q_len, num_heads, 64], kv_cache [num_pages, page_size, 576], out [batch * q_len,
//     num_heads, 512] (elements of the output dtype: an fp8 output's strides count bytes), lse
//     [batch * q_len, num_heads] (floats, neither stride is unit: any non-overlapping pair, e.g.
//     [tokens, heads] or [heads, tokens]). Every non-unit stride of q, q_rope, kv_cache and out (of a
//     dimension with extent > 1) is a multiple of 16 bytes, and the pointers q, q_rope, kv_cache and
//     out are 16-byte aligned: the kernels copy 16-byte chunks.
//   * Overlap BETWEEN tensors (out against q / q_rope / kv_cache; q against q_rope) is not checked:
//     a split query may well view a joined buffer.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "hipattn/numeric/dtype.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/problem/fp8_io_rules.hpp"
#include "hipattn/problem/mla_decode_params.hpp"
#include "hipattn/problem/validate_toolkit.hpp"

namespace hipattn {

namespace mla_decode_rules {

using validation::Dim;

// Alignment, bytes, of the base pointers q, q_rope, kv_cache, out and of every non-unit stride of
// those tensors (16-byte copies).
inline constexpr int64_t kVectorAlignBytes = 16;

// The query tokens of the call as the tensor rules read them: batch * q_len in 64 bits, 0 when batch
// <= 0; an out-of-range q_len (reported by counts) reads as 1 so that the stride rules stay meaningful.
inline int64_t tokens(const MlaDecodeParams& p) {
  const int64_t q_len = (p.q_len >= 1 && p.q_len <= kMlaMaxQLen) ? p.q_len : 1;
  return p.batch > 0 ? int64_t(p.batch) * q_len : 0;
}

// The strided tensors of the problem, innermost dimension first.
inline std::array<Dim, 3> q_dims(const MlaDecodeParams& p) {
  const bool split = p.q_rope != nullptr;
  return {{{split ? kMlaLatentDim : kMlaQkDim, 1, split ? "kMlaLatentDim (q_rope set)" : "kMlaQkDim", "1"},
           {p.num_heads, p.q_stride_head, "num_heads", "q_stride_head"},
           {tokens(p), p.q_stride_token, "batch * q_len", "q_stride_token"}}};
}
inline std::array<Dim, 3> q_rope_dims(const MlaDecodeParams& p) {
  return {{{kMlaRopeDim, 1, "kMlaRopeDim", "1"},
           {p.num_heads, p.q_rope_stride_head, "num_heads", "q_rope_stride_head"},
           {tokens(p), p.q_rope_stride_token, "batch * q_len", "q_rope_stride_token"}}};
}
inline std::array<Dim, 3> kv_dims(const MlaDecodeParams& p) {
  return {{{kMlaQkDim, 1, "kMlaQkDim", "1"},
           {p.page_size, p.kv_stride_slot, "page_size", "kv_stride_slot"},
           {p.num_pages, p.kv_stride_page, "num_pages", "kv_stride_page"}}};
}
inline std::array<Dim, 3> out_dims(const MlaDecodeParams& p) {
  return {{{kMlaLatentDim, 1, "kMlaLatentDim", "1"},
           {p.num_heads, p.o_stride_head, "num_heads", "o_stride_head"},
           {tokens(p), p.o_stride_token, "batch * q_len", "o_stride_token"}}};
}
inline std::array<Dim, 2> lse_dims(const MlaDecodeParams& p) {
  return {{{p.num_heads, p.lse_stride_head, "num_heads", "lse_stride_head"},
           {tokens(p), p.lse_stride_token, "batch * q_len", "lse_stride_token"}}};
}

// ---- the rule groups, in the order validate(p) runs them ----

// batch, q_len, num_heads, and the 32-bit row and token counts.
inline void counts(ValidationReport& r, const MlaDecodeParams& p) {
  using namespace validation;
  const bool batch_ok = at_least(r, "batch", p.batch, 0);
  const bool q_len_ok = p.q_len >= 1 && p.q_len <= kMlaMaxQLen;
  if (!q_len_ok) r.unsupported("q_len", "q_len (" + num(p.q_len) + ") must be in [1, " + num(kMlaMaxQLen) + "]");
  const bool heads_ok = at_least(r, "num_heads", p.num_heads, 1);
  if (heads_ok && q_len_ok) {
    const int64_t rows = sat_mul(p.num_heads, p.q_len);
    if (rows > INT32_MAX)
      r.invalid("num_heads", "num_heads (" + num(p.num_heads) + ") * q_len (" + num(p.q_len) + ") = " + num(rows) +
                                 " query rows a sequence exceed 2^31 - 1");
  }
  if (batch_ok && q_len_ok) {
    const int64_t toks = sat_mul(p.batch, p.q_len);
    if (toks > INT32_MAX)
      r.invalid("batch", "batch (" + num(p.batch) + ") * q_len (" + num(p.q_len) + ") = " + num(toks) +
                             " query tokens exceed 2^31 - 1");
  }
}

// The dtype rules' verdicts, for the rules that need a known element size or dtype.
struct DtypesOk {
  bool q = false, kv = false, out = false;
};

// q_dtype, kv_dtype and the output dtype (out_format.dtype: problem/fp8_io_rules.hpp's io_out_dtype).
inline DtypesOk dtypes(ValidationReport& r, const MlaDecodeParams& p) {
  using namespace validation;
  const bool q_ok = dtype_in(r, ErrorCode::unsupported, "q_dtype", p.q_dtype,
                             {DType::f16, DType::bf16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz});
  // While q_dtype is unsupported, kv_dtype is not compared with it (one mistake, one issue).
  const bool served = p.kv_dtype == DType::f16 || p.kv_dtype == DType::bf16 || is_fp8(p.kv_dtype);
  const bool kv_ok = is_fp8(p.kv_dtype) || (q_ok ? p.kv_dtype == p.q_dtype : served);
  if (!kv_ok) {
    if (q_ok && is_fp8(p.q_dtype))
      r.unsupported("kv_dtype", "kv_dtype (" + dtype_str(p.kv_dtype) + ") with fp8 queries (q_dtype " +
                                    dtype_str(p.q_dtype) + ") must be fp8_e4m3fn / fp8_e4m3fnuz");
    else
      r.unsupported("kv_dtype", "kv_dtype (" + dtype_str(p.kv_dtype) + ") must equal q_dtype (" + dtype_str(p.q_dtype) +
                                    ") or be fp8_e4m3fn / fp8_e4m3fnuz");
  }
  return {q_ok, kv_ok, io_out_dtype(r, p.q_dtype, q_ok, p.kv_dtype, kv_ok, p.out_format)};
}

// The paged cache, the block table's shape and the sequence bound.
inline void bounds(ValidationReport& r, const MlaDecodeParams& p) {
  using namespace validation;
  const bool rows = p.batch > 0;
  const auto count = [&](const char* field, int32_t value) {
    const int64_t min = rows ? 1 : 0;
    if (value >= min) return true;
    r.invalid(field, std::string(field) + " (" + num(value) + ") must be >= " + num(min) + (rows ? " when batch > 0" : ""));
    return false;
  };
  const bool ps_ok = at_least(r, "page_size", p.page_size, 1);
  count("num_pages", p.num_pages);
  const bool mpps_ok = count("max_pages_per_seq", p.max_pages_per_seq);
  const bool bt_ok = stride_below_2_31(r, "block_table_stride", p.block_table_stride);
  if (bt_ok && p.block_table_stride < 0)
    r.invalid("block_table_stride", "block_table_stride (" + num(p.block_table_stride) + ") must be >= 0");
  else if (bt_ok && p.block_table_stride < p.max_pages_per_seq)
    r.invalid("block_table_stride", "block_table_stride (" + num(p.block_table_stride) + ") < max_pages_per_seq (" +
                                        num(p.max_pages_per_seq) + ")");
  const bool len_ok = at_least(r, "max_seqlen_k", p.max_seqlen_k, 0);
  if (ps_ok && mpps_ok && len_ok) {
    const int64_t capacity = int64_t(p.max_pages_per_seq) * p.page_size;
    if (capacity < p.max_seqlen_k)
      r.invalid("max_pages_per_seq", "max_pages_per_seq (" + num(p.max_pages_per_seq) + ") * page_size (" +
                                         num(p.page_size) + ") = " + num(capacity) + " < max_seqlen_k (" +
                                         num(p.max_seqlen_k) + ")");
  }
}

// scale, the host fp8 scale an fp8 cache without a device scale uses, and (output dtype known)
// q_scale and the output format's scales and group fields (io_scales).
inline void scales(ValidationReport& r, const MlaDecodeParams& p, DtypesOk dtypes_ok) {
  using namespace validation;
  if (!std::isfinite(p.scale) || !(p.scale > 0.f)) r.invalid("scale", "scale (" + flt(p.scale) + ") must be finite and > 0");
  if (is_fp8(p.kv_dtype) && p.kv_scale == nullptr && p.kv_scale_value != 0.f &&
      (!std::isfinite(p.kv_scale_value) || !(p.kv_scale_value > 0.f)))
    r.invalid("kv_scale_value", "kv_scale_value (" + flt(p.kv_scale_value) +
                                    ") must be finite and > 0, or 0 for the scale 1 (the fp8 cache's scale while "
                                    "kv_scale is null)");
  if (dtypes_ok.q && dtypes_ok.out)
    io_scales(r, p.q_dtype, p.q_scale, p.out_format, output_dtype(p.q_dtype, p.out_format), tokens(p), p.num_heads,
              kMlaLatentDim);
}

// Pointers: the device arrays non-null when batch > 0, the 16-byte-copied tensors 16-byte aligned,
// the others naturally aligned.
inline void pointers(ValidationReport& r, const MlaDecodeParams& p) {
  const int64_t va = kVectorAlignBytes;
  const bool rows = p.batch > 0;
  const std::array<validation::PtrRule, 8> ptrs{{
      {p.q, "q", rows, va, "batch > 0"},
      {p.q_rope, "q_rope", false, va, ""},
      {p.kv_cache, "kv_cache", rows, va, "batch > 0"},
      {p.kv_scale, "kv_scale", false, alignof(float), ""},
      {p.block_table, "block_table", rows, alignof(int32_t), "batch > 0"},
      {p.seq_lens_k, "seq_lens_k", rows, alignof(int32_t), "batch > 0"},
      {p.out, "out", rows, va, "batch > 0"},
      {p.lse, "lse", false, alignof(float), ""},
  }};
  validation::pointers(r, ptrs);
}

// The strides of q, q_rope (when set), kv_cache, out and lse (when set): per tensor, in range, then no
// overlap, then (known dtype; not lse) 16-byte multiples, out's in elements of the output dtype.
inline void tensor_strides(ValidationReport& r, const MlaDecodeParams& p, DtypesOk dtypes_ok) {
  using namespace validation;
  const auto check = [&](const char* name, const auto& dims, bool aligned, int64_t elem_bytes) {
    if (!strides_in_range(r, dims) || !no_overlap(r, name, dims)) return;
    if (aligned) strides_aligned(r, dims, elem_bytes, kVectorAlignBytes);
  };
  const int64_t qb = dtype_size(p.q_dtype), kb = dtype_size(p.kv_dtype);
  const int64_t ob = dtype_size(output_dtype(p.q_dtype, p.out_format));
  check("q", q_dims(p), dtypes_ok.q, qb);
  if (p.q_rope != nullptr) check("q_rope", q_rope_dims(p), dtypes_ok.q, qb);
  check("kv_cache", kv_dims(p), dtypes_ok.kv, kb);
  check("out", out_dims(p), dtypes_ok.out, ob);  // (an unset output dtype is known only with q_dtype)
  if (p.lse != nullptr) check("lse", lse_dims(p), false, int64_t(sizeof(float)));
}

}  // namespace mla_decode_rules

// Host validation of everything the host knows about `p` (never dereferences a pointer): every violated
// rule, in this order: counts (batch, q_len, num_heads), dtypes (query, cache, output), cache and
// sequence bounds, scales (logit, cache, output format), pointers, tensor strides. An empty, ok()
// report when there is none.
inline ValidationReport validate(const MlaDecodeParams& p) {
  ValidationReport r;
  mla_decode_rules::counts(r, p);
  const mla_decode_rules::DtypesOk dtypes_ok = mla_decode_rules::dtypes(r, p);
  mla_decode_rules::bounds(r, p);
  mla_decode_rules::scales(r, p, dtypes_ok);
  mla_decode_rules::pointers(r, p);
  mla_decode_rules::tensor_strides(r, p, dtypes_ok);
  return r;
}

// validate(p), then (only when p is valid: the array checks rely on its fields) host copies of
// seq_lens_k ([batch] entries, field "seq_lens_k"; each in [0, max_seqlen_k], field "seq_lens_k[b]")
// and of the block table ([(batch - 1) * block_table_stride + max_pages_per_seq] entries or more, field
// "block_table"; empty: not checked): the entries a sequence of an in-range length uses (its first
// ceil(seq_lens_k[b] / page_size)) lie in [0, num_pages) (field "block_table[b][j]"). The fields name
// the first bad index (b, j); a rule broken at several places is reported there once, with the count
// of the others.
inline ValidationReport validate(const MlaDecodeParams& p, std::span<const int32_t> host_seq_lens_k,
                                 std::span<const int32_t> host_block_table = {}) {
  using namespace validation;
  ValidationReport r = validate(p);
  if (!r.ok()) return r;
  const size_t n = static_cast<size_t>(p.batch);
  const bool lens_sized = host_seq_lens_k.size() == n;
  if (!lens_sized)
    r.invalid("seq_lens_k", "seq_lens_k has " + num(int64_t(host_seq_lens_k.size())) + " entries; batch (" + num(p.batch) +
                                ") expected");
  else {
    FirstOf out_of_range(r, "sequences");
    for (size_t b = 0; b < n; ++b) {
      const int32_t len = host_seq_lens_k[b];
      if (len < 0 || len > p.max_seqlen_k) {
        const std::string f = "seq_lens_k[" + num(int64_t(b)) + "]";
        out_of_range.invalid(f, f + " (" + num(len) + ") is not in [0, max_seqlen_k (" + num(p.max_seqlen_k) + ")]");
      }
    }
  }
  if (host_block_table.empty() || n == 0) return r;
  const int64_t need = int64_t(n - 1) * p.block_table_stride + p.max_pages_per_seq;
  if (int64_t(host_block_table.size()) < need) {
    r.invalid("block_table", "block_table has " + num(int64_t(host_block_table.size())) +
                                 " entries; (batch - 1) * block_table_stride + max_pages_per_seq = " + num(need) + " needed");
    return r;
  }
  if (!lens_sized) return r;
  {
    FirstOf out_of_range(r, "entries");
    for (size_t b = 0; b < n; ++b) {
      // Only the used entries of the sequences whose length is in range (the others are reported above).
      const int64_t len = host_seq_lens_k[b];
      if (len < 0 || len > p.max_seqlen_k) continue;
      const int64_t used = std::min<int64_t>((len + p.page_size - 1) / p.page_size, p.max_pages_per_seq);
      for (int64_t j = 0; j < used; ++j) {
        const int32_t page = host_block_table[static_cast<size_t>(int64_t(b) * p.block_table_stride + j)];
        if (page < 0 || page >= p.num_pages) {
          const std::string f = "block_table[" + num(int64_t(b)) + "][" + num(j) + "]";
          out_of_range.invalid(f, f + " (" + num(page) + ") is not in [0, num_pages (" + num(p.num_pages) + "))");
        }
      }
    }
  }  // out_of_range appends its count here
  return r;
}

// The traits a workspace is sized from: max_batch >= 0, max_q_len in [1, kMlaMaxQLen] (unsupported
// otherwise), num_heads >= 1, max_seqlen_k >= 0.
inline ValidationReport validate(const MlaDecodeTraits& t) {
  using namespace validation;
  ValidationReport r;
  at_least(r, "max_batch", t.max_batch, 0);
  if (t.max_q_len < 1 || t.max_q_len > kMlaMaxQLen)
    r.unsupported("max_q_len", "max_q_len (" + num(t.max_q_len) + ") must be in [1, " + num(kMlaMaxQLen) + "]");
  at_least(r, "num_heads", t.num_heads, 1);
  at_least(r, "max_seqlen_k", t.max_seqlen_k, 0);
  return r;
}

}  // namespace hipattn
