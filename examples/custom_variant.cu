// A user-defined logit variant: per-head temperature on top of the standard features, in one struct.
// It shows the variant hook the unified kernels call (tile/variants.hpp) and instantiates a 2D
// kernel with it; a launcher of your own builds UnifiedKernelArgs the way
// dispatch/unified_attention.hpp does and launches unified_2d_kernel<Cfg>.
#include <cstdio>

#include "hipattn/kernels/unified_2d.hpp"

namespace {

// Divide every logit by a temperature that grows with the key's distance from the query, then apply
// the standard softcap (gated by LogitArgs::softcap at run time).
struct DistanceTemperatureVariant {
  static constexpr bool kTransformsLogits = true;
  static constexpr bool kUsesSlope = false;
  template <class TanhFn>
  HIPATTN_HOST_DEVICE static float transform(const hipattn::LogitArgs& a, float s, const hipattn::RowInfo& r,
                                             int32_t j, TanhFn tanh_fn) {
    const float distance = static_cast<float>(r.pos - j);
    s = s / (1.f + 0.001f * distance);
    return hipattn::StandardVariant<true, false, false>::transform(a, s, r, j, tanh_fn);
  }
};

using Cfg = hipattn::UnifiedConfig<false, hipattn::KvKind::same16, 128, 1, 4, 1, 16, 3, DistanceTemperatureVariant>;

}  // namespace

// The instance exists (compiled for the target); a launcher sets its dynamic LDS to Cfg::kSmemBytes.
template __global__ void hipattn::unified_2d_kernel<Cfg>(const hipattn::UnifiedKernelArgs<int64_t, 0>);

int main() {
  // Host check of the hook itself (the kernel calls exactly this per score).
  hipattn::LogitArgs a;
  a.softcap = 30.f;
  const hipattn::RowInfo row{3, 10, 7, 0, 0.f};
  const float s = DistanceTemperatureVariant::transform(a, 2.f, row, 4, [](float x) { return tanhf(x); });
  std::printf("custom variant: logit 2 at distance 6 -> %.6f (expected %.6f); kernel LDS %d bytes\n", s,
              30.f * tanhf(2.f / 1.006f / 30.f), Cfg::kSmemBytes);
  return 0;
}
