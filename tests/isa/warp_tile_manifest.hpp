// tests/isa/warp_tile_manifest.hpp: the kernel manifest of tests/isa/warp_tile.hip's warp_tile_kernel, shared by the kernel and its readers.
#pragma once
#include "hipattn/platform/fixed_string.hpp"

namespace hipattn::isa_test {

// "kernel=warp_tile q=bf16 d=128 mt=1 kn=16": the kernel's HIPATTN_KERNEL_MANIFEST, which
// tests/isa/check_isa.py reads from the code object's manifest and test_emu_atoms.cpp finds the
// kernel by (CodeObject::find_manifest).
constexpr FixedString warp_tile_manifest(bool bf16, int d, int mt, int kn) {
  return FixedString().field("kernel", "warp_tile").field("q", bf16 ? "bf16" : "f16").field("d", d).field("mt", mt).field("kn", kn);
}

}  // namespace hipattn::isa_test
