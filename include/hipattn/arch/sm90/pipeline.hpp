// hipattn/arch/sm90/pipeline.hpp: the warp-specialised pipeline of sm_90 (ALGORITHM.md section 10): an
// N-stage shared-memory ring of full / empty mbarriers between one producer and the consumer
// warpgroups, the stage / phase walk both sides share, register reallocation between the roles
// (setmaxnreg) and named barriers for ordering consumer warpgroups (ping-pong).
//
// The ring (tma.hpp states the mbarrier rules it relies on):
//   full[s]   expects 1 arrival (the producer's arrive.expect_tx announcing the stage's bytes) plus the
//             announced bytes, landed by bulk copies signalling it; or, for a producer that gathers
//             by cp.async (paged rows), one arrival per producer thread, each made when that thread's
//             copies have landed (cp_async_mbarrier_arrive). Its phase completing publishes the stage
//             to the consumers.
//   empty[s]  expects `consumer_arrivals` arrivals (one elected thread of each consumer warp, or of
//             each consumer warpgroup: the kernel's choice); its phase completing hands the stage back.
// Both sides walk the same RingState: lap L uses stage L % N with phase bit (L / N) & 1. Consumers
// wait on full[stage] for that parity; the producer waits on empty[stage] for the opposite parity, so
// its first lap through the ring passes on fresh barriers.
//
// Roles (FlashAttention-3's layout): warpgroup 0 produces (one thread issues the copies), warpgroups
// 1..C consume. setmaxnreg moves registers from the producer to the consumers: every warp of a
// warpgroup executes the same setmaxnreg (.sync.aligned), the decrease before the increase can be
// served, and the counts are multiples of 8 in [24, 256]; the kernel's launch bounds must leave the
// per-thread budget the sum allows: the block's allocation is the per-thread count ptxas gives the
// kernel (65536 / threads rounded down to a multiple of 8: 168 for 3 warpgroups), so 24 / 240 / 240 fits
// and 48 / 232 / 232 does not (the increase then waits forever).
//
// Named barriers (bar.sync / bar.arrive with an id in [1, 16) and a thread count, a multiple of 32)
// order the consumer warpgroups: in the ping-pong schedule warpgroup A signals B's barrier when its
// matrix products are issued, so that B's softmax overlaps A's products (ordered_turn below).
//
// Device code only on the CUDA backend; the RingState arithmetic is host-callable (tested on the host).
#pragma once
#include <cstdint>

#include "hipattn/arch/sm90/tma.hpp"
#include "hipattn/arch/sm90/wgmma.hpp"
#include "hipattn/platform/config.hpp"

namespace hipattn::sm90 {

// The stage and phase parity of lap L of an N-stage ring, advanced lap by lap.
template <int kStages>
struct RingState {
  static_assert(kStages >= 1, "a ring has at least one stage");
  int stage = 0;
  uint32_t phase = 0;  // (lap / kStages) & 1

  HIPATTN_HOST_DEVICE static constexpr RingState at(int lap) { return {lap % kStages, uint32_t((lap / kStages) & 1)}; }
  HIPATTN_HOST_DEVICE constexpr void advance() {
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1u;
    }
  }
  // The parity the producer waits for on empty[stage] (the phase before this lap's).
  HIPATTN_HOST_DEVICE constexpr uint32_t producer_parity() const { return phase ^ 1u; }
};

#if defined(HIPATTN_BACKEND_CUDA)
// The barriers of an N-stage ring (in shared memory, 8-byte aligned).
template <int kStages>
struct PipelineRing {
  uint64_t full[kStages];
  uint64_t empty[kStages];

  // One thread, before any use; then __syncthreads() (fence_barrier_init orders the initialisation
  // before the copy engine's and the other threads' uses).
  // producer_arrivals: 1 for one thread announcing bulk copies (producer_acquire); the producer's thread
  // count for a gather by cp.async whose every thread arrives (producer_wait, cp_async_mbarrier_arrive).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void init(uint32_t consumer_arrivals, uint32_t producer_arrivals = 1) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&full[s], producer_arrivals);
      mbarrier_init(&empty[s], consumer_arrivals);
    }
    fence_barrier_init();
  }

  // Producer (one thread): wait until the stage of `st` is free, announce `bytes` on its full barrier
  // and return that barrier, which the stage's bulk copies signal.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE uint64_t* producer_acquire(const RingState<kStages>& st, uint32_t bytes) {
    mbarrier_wait(&empty[st.stage], st.producer_parity());
    mbarrier_arrive_expect_tx(&full[st.stage], bytes);
    return &full[st.stage];
  }

  // Producer (every gathering thread): wait until the stage of `st` is free; the thread's copies into it
  // then arrive on full_of(st) (cp_async_mbarrier_arrive).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE uint64_t* producer_wait(const RingState<kStages>& st) {
    mbarrier_wait(&empty[st.stage], st.producer_parity());
    return &full[st.stage];
  }

  // Consumer (every thread that reads the stage): wait until the stage of `st` has landed.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void consumer_wait(const RingState<kStages>& st) {
    mbarrier_wait(&full[st.stage], st.phase);
  }
  // Consumer (one elected thread per arrival the ring expects, after its warp's / warpgroup's last
  // read of the stage): hand the stage back.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void consumer_release(const RingState<kStages>& st) { mbarrier_arrive(&empty[st.stage]); }
};

// Arrive on `bar` when every cp.async this thread issued before has landed (the arrival is counted
// against the barrier's expected count: .noinc). A producer warpgroup that gathers a stage with
// cp.async (paged rows that no tensor map describes) signals a full barrier initialised with one
// arrival per producer thread this way.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void cp_async_mbarrier_arrive(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}

// setmaxnreg is sm_90a's (like wgmma): a device pass for another target compiles it to a trap.
#if defined(HIPATTN_SM90A_WGMMA)
#define HIPATTN_SETMAXNREG_ASM(...) asm volatile(__VA_ARGS__)
#elif defined(__CUDA_ARCH__)
#define HIPATTN_SETMAXNREG_ASM(...) __trap()
#else
#define HIPATTN_SETMAXNREG_ASM(...) (void)0
#endif

// Register reallocation between warpgroup roles (every warp of the warpgroup executes it; sm_90a).
template <int kRegs>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void warpgroup_reg_dealloc() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg: a multiple of 8 in [24, 256]");
  HIPATTN_SETMAXNREG_ASM("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void warpgroup_reg_alloc() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg: a multiple of 8 in [24, 256]");
  HIPATTN_SETMAXNREG_ASM("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// Named barriers: `threads` (a multiple of 32) threads meet at barrier `id` (1..15; 0 is
// __syncthreads'). sync waits; arrive signals without waiting.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void named_barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE void named_barrier_arrive(uint32_t id, uint32_t threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// The ping-pong turn of consumer warpgroup `wg` (0..kGroups-1) of kGroups, each of 128 threads: wait
// for the turn (barrier kBase + wg, met by this warpgroup and the one before it), do the work, then
// hand the turn to the next warpgroup (arrive on its barrier). Warpgroup 0's first turn is opened by
// ordered_turn_open (the others arrive on barrier kBase + 0 once, at the start).
template <int kGroups, int kBase = 1>
struct OrderedTurns {
  static_assert(kGroups >= 2 && kBase >= 1 && kBase + kGroups <= 16, "named barriers 1..15");
  // Before the first turn, every warpgroup but the last: nothing; the last opens warpgroup 0's turn.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void open(int wg) {
    if (wg == kGroups - 1) named_barrier_arrive(kBase + 0, 256);
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void wait(int wg) { named_barrier_sync(kBase + wg, 256); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void pass(int wg) { named_barrier_arrive(kBase + (wg + 1) % kGroups, 256); }
};
#undef HIPATTN_SETMAXNREG_ASM
#endif  // HIPATTN_BACKEND_CUDA

}  // namespace hipattn::sm90
