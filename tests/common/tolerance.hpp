// tests/common/tolerance.hpp: the per-dtype tolerances every parity check uses (the GPU suites,
// tests/common/compare.hpp, and the emulated CDNA tests, tests/emu/emu_dispatch.hpp).
#pragma once

namespace hipattn::testing {

// |out - ref| <= atol + rtol * |ref|. P is rounded to the Q dtype before PV and the output is rounded
// once more, so bf16 (8 significant bits) gets about 8x fp16's bound.
struct Tolerance {
  double atol, rtol;
};
inline Tolerance out_tolerance(bool bf16) { return bf16 ? Tolerance{1.6e-2, 1.6e-2} : Tolerance{3e-3, 3e-3}; }
// The LSE (natural log) of a row that sees a key.
inline constexpr Tolerance kLseTolerance{2e-3, 1e-3};

}  // namespace hipattn::testing
