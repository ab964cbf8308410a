// hipattn/problem/unified_instances.hpp: what the unified family is compiled for, in one table.
//
// Read by validation (problem/unified_rules.hpp: a head size outside the table is `unsupported` on
// every call, the workspace query included), by dispatch (dispatch/unified_launch.hpp's
// visit_unified_head instantiates exactly these head sizes) and so by CI (tests/isa/dispatch_all.hip
// and the instance files compile what the dispatcher can launch). Adding a head size here adds its
// kernels everywhere; a head size the kernels cannot serve fails to compile, not at run time.
#pragma once
#include <array>
#include <cstdint>

namespace hipattn {

struct UnifiedInstanceTable {
  // Head sizes (d_qk == d_v) with compiled unified-attention kernels.
  static constexpr std::array<int32_t, 4> head_sizes{64, 128, 192, 256};

  static constexpr bool has_head_size(int32_t d) {
    for (int32_t h : head_sizes)
      if (h == d) return true;
    return false;
  }
};

}  // namespace hipattn
