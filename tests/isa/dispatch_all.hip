// tests/isa/dispatch_all.hip: every unified-attention instance the dispatcher can reach on AMD (the
// whole instance table: q dtype x kv kind x head size x variant, each with both tile kinds x {2D, 3D}
// and the reduces, for gfx942 and gfx950), so that CI proves the dispatch table compiles for both. In
// one target's code object the other target's kernels are empty (check_isa.py checks both).
#include "hipattn/hipattn.hpp"

template void hipattn::unified_attention<hipattn::kAllInstances>(const hipattn::UnifiedAttentionParams&, void*,
                                                                        size_t, hipattn::rt::stream_t,
                                                                        const hipattn::UnifiedOptions&);
