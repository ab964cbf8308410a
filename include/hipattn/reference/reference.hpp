// hipattn/reference/reference.hpp: umbrella header of the float64 host references (unified attention,
// dense prefill, merge, MLA decode).
#pragma once

#include "hipattn/reference/dense_prefill.hpp"
#include "hipattn/reference/merge.hpp"
#include "hipattn/reference/mla_decode.hpp"
#include "hipattn/reference/unified_attention.hpp"
