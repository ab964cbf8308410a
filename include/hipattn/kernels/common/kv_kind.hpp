// hipattn/kernels/common/kv_kind.hpp: how a KV cache stores its elements: like Q (16-bit), or as fp8
// codes (e4m3fn, e4m3fnuz) that the loader converts to 16-bit.
#pragma once
#include <cstdint>

namespace hipattn {

enum class KvKind : uint8_t { same16, e4m3fn, e4m3fnuz };

}  // namespace hipattn
