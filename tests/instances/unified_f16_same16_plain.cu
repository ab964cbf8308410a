// One instance group of unified attention (compiled alone so the groups build in parallel).
#include "hipattn/dispatch/unified_attention.hpp"
HIPATTN_UNIFIED_INSTANTIATE(false, same16, PlainVariant)
