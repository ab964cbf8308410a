// hipattn/kernels/sm90/warpgroup_config.hpp: the compile-time shape of an instance of the sm_90
// warp-specialised skeleton (kernels/sm90/warpgroup_pipeline.hpp), visible to host-only code (the
// launchers size shared memory and grids with it).
//
// 128 (1 + kConsumers) threads: warpgroup 0 produces, kConsumers warpgroups of 64 query rows each
// consume (kBM = 64 kConsumers rows a q-block), kBN keys a KV tile, kStages deep. Shared memory: Q,
// then the K stages, then the V stages (each a 128-byte-swizzled wgmma operand, 1024-byte aligned),
// then the barriers (q_full, q_empty, the K ring's and the V ring's full / empty barriers).
// Registers: setmaxnreg moves them from the producer (kProducerRegs) to the consumers
// (kConsumerRegs) within the 65536 of an SM.
#pragma once
#include <cstdint>

namespace hipattn {

template <bool kBf16_, int kDqk_, int kDv_, int kBN_, int kStages_, class Variant_, int kProducerRegs_ = 24,
          int kConsumerRegs_ = 240>
struct WarpgroupPipelineConfig {
  static constexpr bool kBf16 = kBf16_;
  static constexpr int kDqk = kDqk_, kDv = kDv_;
  static constexpr int kConsumers = 2, kBM = 64 * kConsumers;
  static constexpr int kBN = kBN_;
  static constexpr int kStages = kStages_;
  static constexpr int kWaveSize = 32;
  static constexpr int kThreads = 128 * (1 + kConsumers);
  static constexpr int kProducerRegs = kProducerRegs_, kConsumerRegs = kConsumerRegs_;
  // The kernel is compiled under __launch_bounds__(kThreads, 1): every thread starts with the per-thread
  // count ptxas allocates (65536 / kThreads rounded down to a multiple of 8: 168 for 384 threads), and
  // setmaxnreg only moves registers within that allocation. A consumer's increase that the producer's
  // decrease does not cover waits forever (48 / 232 hung the unified kernel: 6144 + 59392 > 64512).
  static constexpr int kRegsPerThread = 65536 / kThreads / 8 * 8;
  static_assert(kProducerRegs * 128 + kConsumerRegs * 128 * kConsumers <= kRegsPerThread * kThreads,
                "setmaxnreg moves registers within the block's allocation");
  using Variant = Variant_;

  static constexpr int kQBytes = kBM * kDqk * 2;
  static constexpr int kKBytes = kBN * kDqk * 2;
  static constexpr int kVBytes = kBN * kDv * 2;
  static_assert(kQBytes % 1024 == 0 && kKBytes % 1024 == 0 && kVBytes % 1024 == 0, "1024-byte swizzle atoms");
  static constexpr int kQOffset = 0;
  static constexpr int kKOffset = kQOffset + kQBytes;
  static constexpr int kVOffset = kKOffset + kStages * kKBytes;
  static constexpr int kBarOffset = kVOffset + kStages * kVBytes;
  static constexpr int kBarBytes = 8 * (2 + 4 * kStages);
  static constexpr int kAlignSlack = 1024;  // the dynamic window is aligned to 1024 bytes in the kernel
  static constexpr int kSmemBytes = kBarOffset + kBarBytes + kAlignSlack;
  static_assert(kSmemBytes <= 232448, "sm_90 gives a block at most 227 KiB of shared memory");
};

}  // namespace hipattn
