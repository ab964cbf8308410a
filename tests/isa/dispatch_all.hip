// tests/isa/dispatch_all.hip: every unified-attention instance the dispatcher can reach on AMD (all
// instance groups: q dtype x kv kind x variant, each with head sizes x tile kinds x {2D, 3D} and the
// reduces), so that CI proves the whole dispatch table compiles for gfx942 and gfx950.
#include "hipattn/hipattn.hpp"

HIPATTN_UNIFIED_INSTANCE_GROUPS(HIPATTN_UNIFIED_INSTANTIATE)
