// hipattn/kernels/common/kv_kind.hpp: how a KV cache stores its elements: like Q (16-bit), or as fp8
// codes (e4m3fn, e4m3fnuz) that the loader or the warp tile converts to 16-bit; or, with
// e4m3fn_q8, e4m3fn codes that meet e4m3fn query codes on the fp8 matrix path (issue 13: scores by
// the e4m3 MMA, P V by the e4m3 MMA with P quantized, nothing converted to 16-bit on the way).
#pragma once
#include <cstdint>

namespace hipattn {

enum class KvKind : uint8_t { same16, e4m3fn, e4m3fnuz, e4m3fn_q8 };

// The codes' format of a kind (e4m3fn_q8 stores e4m3fn codes).
constexpr KvKind kv_storage(KvKind k) { return k == KvKind::e4m3fn_q8 ? KvKind::e4m3fn : k; }
// Whether queries are fp8 codes read by the fp8 MMA (the Q tile holds codes, not 16-bit values).
constexpr bool kv_fp8_matmul(KvKind k) { return k == KvKind::e4m3fn_q8; }

}  // namespace hipattn
