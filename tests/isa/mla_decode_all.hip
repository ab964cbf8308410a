// tests/isa/mla_decode_all.hip: every CDNA MLA decode instance the dispatcher launches (issue 12):
// mla_decode<> instantiates, for f16 / bf16 queries over a 16-bit, e4m3fn or e4m3fnuz latent cache,
// mla_decode_cdna_kernel<MlaDecodeCdnaConfig<target, ...>> for gfx942 and gfx950 (each target's
// kernels are empty in the other target's object), the device planner and paged decode's reduce at
// d = 512; so that the resource table (no VGPR spill, no scratch), the instruction checks
// (check_isa.py: the target's 16-bit MFMA and V read) and the emulated tests
// (tests/emu/test_emu_mla_decode.cpp) read them.
#include "hipattn/dispatch/mla_decode.hpp"

template void hipattn::mla_decode<>(const hipattn::MlaDecodeParams&, void*, size_t, hipattn::rt::stream_t,
                                    const hipattn::MlaDecodeOptions&);
