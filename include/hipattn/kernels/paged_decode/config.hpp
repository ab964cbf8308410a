// hipattn/kernels/paged_decode/config.hpp: what the paged-decode family (kernels/paged_decode/kernels.hpp)
// adds to the skeleton. Its instances are skeleton configurations (AttentionConfig,
// kernels/common/attention_config.hpp: a tile, a KV storage, a loader policy, a target), the unified
// table's; what is the family's own is how work is found (one q length for every sequence, the device
// planner's tasks: kernels/common/decode_args.hpp), the store (DecodeStore) and the reduce's indexing.
#pragma once

#include "hipattn/kernels/common/attention_config.hpp"
#include "hipattn/kernels/common/decode_args.hpp"

namespace hipattn {

// The arguments type of a configuration's paged-decode kernel: the loader's parameters and the variant.
template <class Cfg>
using paged_decode_args_t = PagedDecodeKernelArgs<typename Cfg::Loader::Params, typename Cfg::Variant>;

}  // namespace hipattn
