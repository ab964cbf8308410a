// hipattn/hipattn.hpp: the umbrella header. In a host-only build it offers the problem
// description, its builder, validation, the planner and the float64 references; with HIP or nvcc it
// adds the kernels and the host entry points.
#pragma once
#include "hipattn/dispatch/dense_prefill_launch.hpp"
#include "hipattn/dispatch/dense_prefill_plan.hpp"
#include "hipattn/dispatch/merge_attention_states.hpp"
#include "hipattn/dispatch/mla_decode.hpp"
#include "hipattn/dispatch/mla_decode_launch.hpp"
#include "hipattn/dispatch/mla_decode_plan.hpp"
#include "hipattn/dispatch/paged_decode_launch.hpp"
#include "hipattn/dispatch/paged_decode_plan.hpp"
#include "hipattn/dispatch/unified_launch.hpp"
#include "hipattn/dispatch/unified_plan.hpp"
#include "hipattn/numeric/numeric.hpp"
#include "hipattn/platform/config.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/platform/target.hpp"
#include "hipattn/problem/dense_prefill_params.hpp"
#include "hipattn/problem/dense_prefill_rules.hpp"
#include "hipattn/problem/mla_decode_params.hpp"
#include "hipattn/problem/mla_decode_rules.hpp"
#include "hipattn/problem/paged_decode_params.hpp"
#include "hipattn/problem/paged_decode_rules.hpp"
#include "hipattn/problem/unified_builder.hpp"
#include "hipattn/problem/unified_params.hpp"
#include "hipattn/problem/unified_rules.hpp"
#include "hipattn/problem/validate_toolkit.hpp"
#include "hipattn/reference/reference.hpp"
#include "hipattn/tile/online_softmax.hpp"
#include "hipattn/tile/tile_range.hpp"
#include "hipattn/tile/variants.hpp"

#if defined(HIPATTN_HAS_DEVICE)
#include "hipattn/dispatch/dense_prefill.hpp"
#include "hipattn/dispatch/paged_decode.hpp"
#include "hipattn/dispatch/unified_attention.hpp"
#include "hipattn/platform/runtime.hpp"
#endif
