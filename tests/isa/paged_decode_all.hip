// tests/isa/paged_decode_all.hip: every paged-decode instance the dispatcher can reach on AMD (issue
// 10): paged_decode<kAllInstances> instantiates, for each key of the unified instance table (q
// dtype x KV kind x head size x variant) and each of its configurations (decode and prefill tile, and
// the register-staged fallback of the LDS-DMA ones), paged_decode_kernel<Cfg>, the reduce of each
// (q dtype, head size) and the device planner, for gfx942 and gfx950. In one target's code object the
// other target's kernels are empty. check_isa.py checks that this object holds a paged_decode_kernel
// for every configuration (kernel manifest) of dispatch_all's 2D kernels and a reduce for every split-KV reduce.
#include "hipattn/hipattn.hpp"

template void hipattn::paged_decode<hipattn::kAllInstances>(const hipattn::PagedDecodeParams&, void*, size_t,
                                                                   hipattn::rt::stream_t,
                                                                   const hipattn::PagedDecodeOptions&);
