// Contract tests of the warp-specialised pipeline of sm_90 (arch/sm90/pipeline.hpp): the ring's stage
// and phase walk (host), then on the GPU a producer warpgroup and two consumer warpgroups with
// register reallocation (setmaxnreg) streaming a seeded buffer through a 4-stage ring of bulk copies
// over many laps (every consumer checksums its half of every stage: a lost or early phase shows as a
// wrong checksum or a trap), and the consumers' ordered turns (named barriers) alternating strictly.
// The GPU tests skip themselves, saying why, without an sm_90 GPU or sm_90 (sm_90a: setmaxnreg) device code; outputs are
// poisoned before every launch and every launch is checked; waits trap after about ten seconds.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../common/device_check.hpp"
#include "../common/sm90_check.hpp"
#include "hipattn/arch/sm90/pipeline.hpp"
#include "hipattn/platform/runtime.hpp"

namespace hipattn::testing {
namespace {

// ---- host: the walk ----
TEST(Sm90PipelineHost, RingStateWalksStagesAndPhases) {
  sm90::RingState<3> st;
  for (int lap = 0; lap < 50; ++lap) {
    const auto at = sm90::RingState<3>::at(lap);
    EXPECT_EQ(st.stage, lap % 3) << lap;
    EXPECT_EQ(st.phase, uint32_t((lap / 3) % 2)) << lap;
    EXPECT_EQ(at.stage, st.stage) << lap;
    EXPECT_EQ(at.phase, st.phase) << lap;
    // the producer's first lap through the ring waits for parity 1, which a fresh barrier has passed
    if (lap < 3) EXPECT_EQ(st.producer_parity(), 1u) << lap;
    st.advance();
  }
  sm90::RingState<1> one;  // one stage: the phase flips every lap
  one.advance();
  EXPECT_EQ(one.stage, 0);
  EXPECT_EQ(one.phase, 1u);
}

#if defined(HIPATTN_BACKEND_CUDA)
using namespace sm90_check;

constexpr int kStages = 4, kStageBytes = 8192, kConsumerGroups = 2;

// Warpgroup 0 produces: it gives registers back (setmaxnreg.dec 24), one thread walks the laps,
// acquiring each stage (waits on its empty barrier) and filling it with one bulk copy of lap L's
// 8 KiB. Warpgroups 1 and 2 take registers (setmaxnreg.inc 240), wait on the full barrier, checksum
// their half of the stage (every 4-byte word times its position), and release it (one arrival per
// consumer warp: empty barriers expect 8). Sleeps on some laps make both sides wait for the other.
__global__ void __launch_bounds__(128 * (1 + kConsumerGroups), 1) pipeline_ring_kernel(const uint8_t* src, int laps,
                                                                                        uint32_t* out) {
  extern __shared__ uint4 smem_u4[];
  __shared__ sm90::PipelineRing<kStages> ring;
  uint8_t* stages = align_up(smem_u4, 128);
  const int t = threadIdx.x, wg = t / 128, warp = t / 32, lane = t % 32;
  if (t == 0) ring.init(4 * kConsumerGroups);
  __syncthreads();
  if (wg == 0) {
    sm90::warpgroup_reg_dealloc<24>();
    if (t == 0) {
      sm90::RingState<kStages> st;
      for (int lap = 0; lap < laps; ++lap, st.advance()) {
        uint64_t* full = ring.producer_acquire(st, kStageBytes);
        if (lap % 5 == 2) __nanosleep(3000);
        sm90::bulk_copy_g2s(stages + st.stage * kStageBytes, src + size_t(lap) * kStageBytes, kStageBytes, full);
      }
    }
    return;
  }
  sm90::warpgroup_reg_alloc<240>();
  const int c = wg - 1;  // consumer group: words [c * 1024, c * 1024 + 1024) of a stage
  sm90::RingState<kStages> st;
  for (int lap = 0; lap < laps; ++lap, st.advance()) {
    wait_or_trap(&ring.full[st.stage], st.phase);
    const uint32_t* w = reinterpret_cast<const uint32_t*>(stages + st.stage * kStageBytes);
    uint32_t sum = 0;
    for (int i = t % 128; i < 1024; i += 128) sum += w[c * 1024 + i] * uint32_t(1 + c * 1024 + i);
    for (int m = 16; m >= 1; m /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, m);
    if (lap % 7 == 3) __nanosleep(5000);
    __syncwarp();
    if (lane == 0) {
      ring.consumer_release(st);
      atomicAdd(&out[lap * kConsumerGroups + c], sum);  // the group's 4 warps add up
    }
  }
  (void)warp;
}

TEST(Sm90Pipeline, RingWithRegisterReallocationOver96Laps) {
  REQUIRE_TMA_WGMMA();  // setmaxnreg is sm_90a's
  constexpr int kLaps = 96;
  std::vector<uint32_t> words(size_t(kLaps) * kStageBytes / 4);
  std::mt19937 rng(77);
  for (uint32_t& w : words) w = rng();
  std::vector<uint32_t> want(kLaps * kConsumerGroups, 0);
  for (int lap = 0; lap < kLaps; ++lap)
    for (int i = 0; i < 2048; ++i) want[lap * kConsumerGroups + i / 1024] += words[size_t(lap) * 2048 + i] * uint32_t(1 + i);
  DeviceBuffer src = DeviceBuffer::from(words);
  for (int rep = 0; rep < 3; ++rep) {  // timing-dependent interleavings
    SCOPED_TRACE("repetition " + std::to_string(rep));
    DeviceBuffer dout(want.size() * sizeof(uint32_t));
    HIPATTN_CHECK(rt::memset_async(dout.ptr, 0, dout.bytes, nullptr));  // accumulated by atomics: starts at 0
    const int smem = kStages * kStageBytes + 128;
    HIPATTN_CHECK(rt::set_max_dynamic_shared(pipeline_ring_kernel, smem));
    LAUNCH_CHECKED(pipeline_ring_kernel<<<1, 128 * (1 + kConsumerGroups), smem>>>(src.as<uint8_t>(), kLaps,
                                                                                   dout.as<uint32_t>()));
    const std::vector<uint32_t> got = download<uint32_t>(dout);
    int bad = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i] && bad++ < 8)
        ADD_FAILURE() << "lap " << i / kConsumerGroups << " consumer group " << i % kConsumerGroups << ": checksum "
                      << got[i] << ", want " << want[i];
    EXPECT_EQ(bad, 0) << "checksums wrong of " << got.size();
  }
}

// Two consumer warpgroups take ordered turns (OrderedTurns<2>): in each turn every thread of the group
// reads the shared turn counter, the group's first thread appends its group id to the log at that
// index and increments the counter after a group-wide barrier, then the turn passes. The log must
// alternate 0, 1, 0, 1, ... with every thread of a turn having seen the same counter.
__global__ void __launch_bounds__(256) ordered_turns_kernel(int turns, int* log, int* seen_bad) {
  __shared__ int counter;
  const int t = threadIdx.x, wg = t / 128;
  if (t == 0) counter = 0;
  __syncthreads();
  using Turns = sm90::OrderedTurns<2>;
  Turns::open(wg);
  for (int i = 0; i < turns; ++i) {
    Turns::wait(wg);
    const int at = counter;
    if (at != 2 * i + wg) atomicAdd(seen_bad, 1);
    sm90::named_barrier_sync(3 + wg, 128);  // the group has read the counter
    if (t % 128 == 0) {
      log[at] = wg;
      counter = at + 1;
      __threadfence_block();
    }
    sm90::named_barrier_sync(3 + wg, 128);
    if (i + 1 < turns || wg == 0) Turns::pass(wg);  // the last turn of the last group opens nothing
  }
}

TEST(Sm90Pipeline, OrderedTurnsAlternate) {
  REQUIRE_TMA();
  constexpr int kTurns = 200;
  DeviceBuffer dlog = poisoned(2 * kTurns * sizeof(int));
  DeviceBuffer dbad(sizeof(int));
  HIPATTN_CHECK(rt::memset_async(dbad.ptr, 0, sizeof(int), nullptr));
  LAUNCH_CHECKED(ordered_turns_kernel<<<1, 256>>>(kTurns, dlog.as<int>(), dbad.as<int>()));
  const std::vector<int> log = download<int>(dlog);
  int bad = 0;
  for (int i = 0; i < 2 * kTurns; ++i)
    if (log[i] != i % 2 && bad++ < 8) ADD_FAILURE() << "turn " << i << ": group " << log[i] << ", want " << i % 2;
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(download<int>(dbad)[0], 0) << "threads saw another turn's counter";
}
#endif  // HIPATTN_BACKEND_CUDA

}  // namespace
}  // namespace hipattn::testing
