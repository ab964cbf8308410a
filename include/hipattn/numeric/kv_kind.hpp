// hipattn/numeric/kv_kind.hpp: how a KV cache stores its elements: like Q (16-bit), or as fp8
// codes (e4m3fn, e4m3fnuz) that the loader or the warp tile converts to 16-bit; or, with the q8
// kinds, fp8 codes that meet fp8 query codes on the fp8 matrix path (ALGORITHM.md section 12: scores by the fp8
// MMA with nothing converted to 16-bit on the way; ALGORITHM.md section 12):
//   e4m3fn_q8    an e4m3fn cache: sm_90 (mma.sync e4m3, e4m3fn queries) and gfx950 (its fp8 MFMA
//                reads OCP e4m3fn; e4m3fn queries)
//   e4m3fnuz_q8  an e4m3fnuz cache on gfx942 (its fp8 MFMA reads e4m3fnuz): e4m3fnuz queries as they
//                are, e4m3fn queries re-encoded as the e4m3fnuz codes of half their value
//                (fp8_e4m3fn_codes_as_fnuz_half, numeric/fp8.hpp) with 2 folded into the score scale
#pragma once
#include <cstdint>

#include "hipattn/platform/target.hpp"

namespace hipattn {

enum class KvKind : uint8_t { same16, e4m3fn, e4m3fnuz, e4m3fn_q8, e4m3fnuz_q8 };

// The codes' format of a kind (a q8 kind stores the codes of its format).
constexpr KvKind kv_storage(KvKind k) {
  return k == KvKind::e4m3fn_q8 ? KvKind::e4m3fn : k == KvKind::e4m3fnuz_q8 ? KvKind::e4m3fnuz : k;
}
// Whether queries are fp8 codes read by the fp8 MMA (the Q tile holds codes, not 16-bit values).
constexpr bool kv_fp8_matmul(KvKind k) { return k == KvKind::e4m3fn_q8 || k == KvKind::e4m3fnuz_q8; }
// The q8 kind whose codes a target's fp8 MMA reads (TargetTraits::mma_fp8), or same16 where it has
// none.
constexpr KvKind q8_kind_on(Target t) {
  const Fp8Format f = target_traits(t).mma_fp8;
  return f == Fp8Format::e4m3fn ? KvKind::e4m3fn_q8 : f == Fp8Format::e4m3fnuz ? KvKind::e4m3fnuz_q8 : KvKind::same16;
}
// The q8 kinds a target compiles: the one of the format its fp8 MMA reads (sm_90 and gfx950 e4m3fn,
// gfx942 e4m3fnuz).
constexpr bool kv_kind_on_target(KvKind k, Target t) { return !kv_fp8_matmul(k) || k == q8_kind_on(t); }
// The factor the scores of a q8 instance are multiplied by for the way its queries were read: 2 where
// e4m3fn query codes were re-encoded as the e4m3fnuz codes of half their value (gfx942), else 1.
// `q_is_fn`: the queries are e4m3fn.
constexpr float q8_query_factor(KvKind k, bool q_is_fn) { return k == KvKind::e4m3fnuz_q8 && q_is_fn ? 2.f : 1.f; }

// "same16", "e4m3fn", ...: the kind as instance names and messages spell it.
constexpr const char* kv_kind_name(KvKind k) {
  return k == KvKind::e4m3fn        ? "e4m3fn"
         : k == KvKind::e4m3fnuz    ? "e4m3fnuz"
         : k == KvKind::e4m3fn_q8   ? "e4m3fn_q8"
         : k == KvKind::e4m3fnuz_q8 ? "e4m3fnuz_q8"
                                    : "same16";
}

}  // namespace hipattn
