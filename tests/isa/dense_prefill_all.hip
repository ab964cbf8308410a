// tests/isa/dense_prefill_all.hip: every CDNA dense prefill instance the dispatcher launches
// (dispatch/dense_prefill.hpp: dense_prefill_kernel over each target's unified prefill tile and
// DenseKvLayout; head sizes 64 / 128 / 256 and (192, 128), f16 / bf16, with and without softcap; on
// gfx950 also the ping-pong instances, DensePingPongConfig: d 256, and d 128 without softcap), explicitly
// instantiated for both CDNA targets, so that the resource table (no VGPR spill, no scratch), the
// instruction checks (check_isa.py: MFMA, the target's V read, register-staged loads) and the emulated
// tests (tests/emu/test_emu_dense_prefill.cpp) read them.
#include "hipattn/dispatch/dense_prefill.hpp"

#define HIPATTN_ISA_DENSE(T, BF16, D, SOFTCAP)                                                                \
  template __global__ void ::hipattn::dense_prefill_kernel<                                                   \
      ::hipattn::detail::dense_skeleton_config_t<::hipattn::Target::T, BF16, D, ::hipattn::StandardVariant<SOFTCAP, false, false>>>( \
      const ::hipattn::dense_args_t<                                                                          \
          ::hipattn::detail::dense_skeleton_config_t<::hipattn::Target::T, BF16, D, ::hipattn::StandardVariant<SOFTCAP, false, false>>>);
#define HIPATTN_ISA_DENSE_TARGET(T)                                                                           \
  HIPATTN_ISA_DENSE(T, true, 64, false) HIPATTN_ISA_DENSE(T, true, 128, false) HIPATTN_ISA_DENSE(T, true, 256, false) \
  HIPATTN_ISA_DENSE(T, false, 64, false) HIPATTN_ISA_DENSE(T, false, 128, false) HIPATTN_ISA_DENSE(T, false, 256, false) \
  HIPATTN_ISA_DENSE(T, true, 64, true) HIPATTN_ISA_DENSE(T, true, 128, true) HIPATTN_ISA_DENSE(T, true, 256, true) \
  HIPATTN_ISA_DENSE(T, false, 64, true) HIPATTN_ISA_DENSE(T, false, 128, true) HIPATTN_ISA_DENSE(T, false, 256, true)

// (d_qk, d_v) = (192, 128): the d = 192 tile with narrower V rows (AttentionShape d_qk 192, d_v 128)
#define HIPATTN_ISA_DENSE_NARROW(T, BF16, SOFTCAP)                                                            \
  template __global__ void ::hipattn::dense_prefill_kernel<                                                   \
      ::hipattn::detail::dense_skeleton_narrow_v_config_t<::hipattn::Target::T, BF16, ::hipattn::StandardVariant<SOFTCAP, false, false>>>( \
      const ::hipattn::dense_args_t<                                                                          \
          ::hipattn::detail::dense_skeleton_narrow_v_config_t<::hipattn::Target::T, BF16, ::hipattn::StandardVariant<SOFTCAP, false, false>>>);
#define HIPATTN_ISA_DENSE_NARROW_TARGET(T)                                                                    \
  HIPATTN_ISA_DENSE_NARROW(T, true, false) HIPATTN_ISA_DENSE_NARROW(T, false, false)                          \
  HIPATTN_ISA_DENSE_NARROW(T, true, true) HIPATTN_ISA_DENSE_NARROW(T, false, true)

HIPATTN_ISA_DENSE_TARGET(gfx942)
HIPATTN_ISA_DENSE_TARGET(gfx950)
HIPATTN_ISA_DENSE_NARROW_TARGET(gfx942)
HIPATTN_ISA_DENSE_NARROW_TARGET(gfx950)

// gfx950's ping-pong instances (kernels/cdna/pingpong_mainloop.hpp; dispatch/dense_prefill.hpp
// dense_pingpong_instance)
#define HIPATTN_ISA_DENSE_PINGPONG(BF16, D, SOFTCAP)                                                          \
  template __global__ void ::hipattn::dense_prefill_kernel<                                                   \
      ::hipattn::DensePingPongConfig<::hipattn::Target::gfx950, BF16, D, ::hipattn::StandardVariant<SOFTCAP, false, false>>>( \
      const ::hipattn::dense_args_t<                                                                          \
          ::hipattn::DensePingPongConfig<::hipattn::Target::gfx950, BF16, D, ::hipattn::StandardVariant<SOFTCAP, false, false>>>);
HIPATTN_ISA_DENSE_PINGPONG(true, 128, false) HIPATTN_ISA_DENSE_PINGPONG(false, 128, false)
HIPATTN_ISA_DENSE_PINGPONG(true, 256, false) HIPATTN_ISA_DENSE_PINGPONG(false, 256, false)
HIPATTN_ISA_DENSE_PINGPONG(true, 256, true) HIPATTN_ISA_DENSE_PINGPONG(false, 256, true)
