// hipattn/kernels/common/skeleton_mainloop.hpp: SkeletonMainloop, the mainloop slot's value for the
// attention skeleton's own KV walk on every target (kernels/common/attention_config.hpp Mainloop): the
// loader's stages kStages deep and, per KV tile, ALGORITHM.md section 5.1's step on the warp's keys
// (S = Q K^T, the logits with the variant and the mask, the online softmax, O += P V).
//
// Its loop is written in attention_kernel itself, not in a function of this type: the LLVM inliner
// simplifies a callee on its own before inlining it, and a loop that sees the loader through a
// reference there is laid out differently once inlined (other block order, branch senses and
// registers on the CDNA targets) than the same loop beside the loader's construction. Other mainloops
// (kernels/cdna/pingpong_mainloop.hpp) are functions: kernels/common/concepts.hpp AttentionMainloop.
#pragma once
#include <type_traits>

namespace hipattn {

template <class Cfg>
struct SkeletonMainloop {
  // Q fragments stay in registers for 16-row warps up to d = 128; larger heads and 32-row warps
  // re-read Q from LDS at each k step (their S and O fragments already fill the register file).
  static constexpr bool kQInRegs = Cfg::kDqk <= 128 && Cfg::kMT == 1;
};

// Whether configuration Cfg runs the skeleton's own KV walk (else its Mainloop's run).
template <class Cfg>
inline constexpr bool skeleton_mainloop_v = std::is_same_v<typename Cfg::Mainloop, SkeletonMainloop<Cfg>>;

}  // namespace hipattn
