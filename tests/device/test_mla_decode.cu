// Parity suite of MLA decode (dispatch/mla_decode.hpp: the sm_90 warp-specialised kernel of
// kernels/mla_decode) against the float64 reference (reference/mla_decode.hpp), on the GPU, and the
// context-parallel merge (dispatch/merge_attention_states.hpp) of round-robin ranks.
//
// Outputs in every format of problem/fp8_io.hpp (16-bit; fp8 e4m3fn / e4m3fnuz per tensor or per group
// of 16..128 columns with UE8M0 and group_fp8_max), through the kernel's own epilogue (one partition,
// one-part planned sequences) and the reduce (split sequences); each element decoded with the scale it
// was written with and checked by tests/common/fp8_output_check.hpp's rules (test_fp8_io.cu's).
//
// Problems: seeded std::mt19937_64 data, uniform in [-1, 1] and never 0, rounded to the dtype; the
// latent cache is NaN-filled first, then each sequence's tokens are written to randomly permuted
// pages (fragmented block tables), so that unowned slots past a context, unused pages and the padded
// block-table entries (which point at NaN pages) would poison any output that read them. Queries
// and outputs live in padded strided storage whose padding holds NaN (queries) or the poison
// (outputs). Every launch runs over an output poisoned with NaN codes of its format, group scales and
// LSE poisoned with 0xFF bytes (NaN), is checked (the entry point's error, the runtime's last error,
// the synchronization), and then every group scale and owned element is compared with the reference
// (rows without keys: exactly 0 and LSE -inf) and every padding element must still hold the poison.
//
// MLA decode has kernels on sm_90, gfx942 and gfx950 (the CDNA ones also run on the emulator tier:
// tests/emu/test_emu_mla_decode.cpp): the parity tests skip themselves, saying why, on any other
// device, without sm_90a device code (CUDA builds), and without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "../common/compare.hpp"
#include "../common/fp8_output_check.hpp"
#include "../common/gpu.hpp"
#include "../common/mla_problem.hpp"
#include "../../testing/paged_problem.hpp"
#include "hipattn/dispatch/merge_attention_states.hpp"
#include "hipattn/dispatch/mla_decode.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/reference/mla_decode.hpp"
#if defined(HIPATTN_BACKEND_CUDA)
#include "../common/sm90_check.hpp"
#endif

namespace hipattn::testing {
namespace {

using namespace mla_test;

std::string mla_unavailable() {
  if (!gpu_present()) return "no GPU present: device test skipped";
  const rt::DeviceProperties& dev = rt::cached_device_properties();
  if (!mla_decode_target_supported(dev.target))
    return "MLA decode has kernels on sm_90, gfx942 and gfx950; this device is " + dev.arch_name + ": skipped";
#if defined(HIPATTN_BACKEND_CUDA)
  static const std::string code = sm90_check::unavailable(3);
  if (!code.empty()) return code;
#endif
  return {};
}
#define REQUIRE_MLA()                                            \
  do {                                                           \
    const std::string why_ = ::hipattn::testing::mla_unavailable(); \
    if (!why_.empty()) GTEST_SKIP() << why_;                     \
  } while (0)

struct MlaDevice {
  const MlaHost& h;
  DeviceBuffer q, q_nope, q_rope, kv, bt, lens, scale, q_scale, out, lse, out_scale, group_scale, ws;
  size_t ws_bytes = 0;
  explicit MlaDevice(const MlaHost& hp, size_t workspace_bytes)
      : h(hp), q(DeviceBuffer::from(hp.q)), kv(DeviceBuffer::from(hp.kv)), bt(DeviceBuffer::from(hp.bt)),
        lens(DeviceBuffer::from(hp.lens)),
        ws_bytes(workspace_bytes) {
    if (hp.s.split_q) {
      q_nope = DeviceBuffer::from(hp.q_nope);
      q_rope = DeviceBuffer::from(hp.q_rope);
    }
    scale = DeviceBuffer::from(std::vector<float>{hp.kv_scale});
    q_scale = DeviceBuffer::from(std::vector<float>{hp.q_scale});
    out = DeviceBuffer(hp.out_bytes());
    lse = DeviceBuffer(hp.lse_bytes());
    out_scale = DeviceBuffer::from(std::vector<float>{hp.output.tensor_scale});
    group_scale = DeviceBuffer(hp.group_scale_bytes());
    if (ws_bytes > 0) ws = DeviceBuffer(ws_bytes);
  }
  MlaDecodeParams params() const {
    MlaBuffers b;
    b.q = q.ptr;
    b.q_nope = q_nope.ptr;
    b.q_rope = q_rope.ptr;
    b.kv = kv.ptr;
    b.block_table = bt.as<int32_t>();
    b.seq_lens_k = lens.as<int32_t>();
    b.kv_scale = scale.as<float>();
    b.q_scale = q_scale.as<float>();
    b.out = out.ptr;
    b.lse = lse.as<float>();
    b.out_scale = out_scale.as<float>();
    b.group_scale = group_scale.as<float>();
    return h.params(b);
  }
  void poison(rt::stream_t st) {
    HIPATTN_CHECK(rt::memset_async(out.ptr, output_poison_byte(h.output.dtype), out.bytes, st));
    HIPATTN_CHECK(rt::memset_async(lse.ptr, 0xFF, lse.bytes, st));
    HIPATTN_CHECK(rt::memset_async(group_scale.ptr, 0xFF, group_scale.bytes, st));
  }
};

MlaDecodeTraits traits_of(const MlaHost& h) {
  MlaDecodeTraits t;
  t.max_batch = h.batch;
  t.max_q_len = h.s.q_len;
  t.num_heads = h.s.heads;
  t.max_seqlen_k = h.max_len;
  return t;
}

MlaOut fetch(const MlaDevice& d) {
  MlaOut r;
  r.out.resize(d.out.bytes);
  r.group_scale.resize(d.group_scale.bytes / sizeof(float));  // the scales, then the guard
  r.lse.resize(d.lse.bytes / 4);
  HIPATTN_CHECK(rt::memcpy_d2h(r.out.data(), d.out.ptr, d.out.bytes));
  HIPATTN_CHECK(rt::memcpy_d2h(r.group_scale.data(), d.group_scale.ptr, d.group_scale.bytes));
  HIPATTN_CHECK(rt::memcpy_d2h(r.lse.data(), d.lse.ptr, d.lse.bytes));
  return r;
}

MlaOut run_checked(MlaDevice& d, const MlaDecodeOptions& opt, rt::stream_t st = nullptr) {
  d.poison(st);
  prebuilt::mla_decode(d.params(), d.ws.ptr, d.ws_bytes, st, opt);
  HIPATTN_CHECK(rt::get_last_error());
  HIPATTN_CHECK(rt::device_synchronize());
  return fetch(d);
}

void run_case(const MlaSpec& s) {
  SCOPED_TRACE(s.str());
  const MlaHost h(s);
  MlaDecodeOptions opt;
  opt.split = s.split;
  MlaDevice d(h, mla_decode_workspace_size(traits_of(h), opt));
  const MlaOut got = run_checked(d, opt);
  expect_matches(h, got, h.reference(), s.str());
}

std::vector<int> ragged_lens(int batch, int max_len, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<int> u(0, max_len);
  std::vector<int> v(static_cast<size_t>(batch));
  for (int& x : v) x = u(g);
  return v;
}

// ---- the parity sweep ----

TEST(MlaDecode, HeadsQLenPagesBf16) {
  REQUIRE_MLA();
  uint64_t seed = 10;
  for (int heads : {16, 32, 64, 128})
    for (int q_len : {1, 2, 4, 8})
      for (int page : {1, 64, 17}) {
        if ((heads >= 64 && q_len >= 4) && page != 64) continue;  // (the largest row counts: one page size)
        MlaSpec s;
        s.heads = heads;
        s.q_len = q_len;
        s.page_size = page;
        s.lens = ragged_lens(3, 700, seed);
        s.lens.push_back(q_len > 1 ? q_len - 1 : 0);  // shorter than q_len (0 included)
        s.seed = seed++;
        run_case(s);
      }
}

TEST(MlaDecode, DtypesAndFp8Caches) {
  REQUIRE_MLA();
  uint64_t seed = 100;
  for (DType q : {DType::bf16, DType::f16})
    for (DType kv : {DType::bf16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz}) {
      MlaSpec s;
      s.q_dtype = q;
      s.kv_dtype = kv == DType::bf16 ? q : kv;
      s.heads = 32;
      s.q_len = 2;
      s.page_size = 64;
      s.lens = {1, 130, 513, 64};
      s.seed = seed++;
      run_case(s);
      if (is_fp8(kv)) {
        s.scale_on_device = false;  // the host float
        s.kv_scale = 1.75f;
        s.seed = seed++;
        run_case(s);
      }
    }
}

TEST(MlaDecode, SplitQueryAndStrides) {
  REQUIRE_MLA();
  for (bool split : {false, true})
    for (int heads : {16, 128}) {
      MlaSpec s;
      s.split_q = split;
      s.heads = heads;
      s.q_len = 3;
      s.page_size = 1;
      s.q_pad = 24;
      s.o_pad = 40;
      s.lens = {257, 3, 1000};
      s.seed = 200 + heads + split;
      run_case(s);
    }
}

TEST(MlaDecode, PlannedAndOnePartitionAgree) {
  REQUIRE_MLA();
  for (MlaDecodeSplit sp : {MlaDecodeSplit::one_partition, MlaDecodeSplit::planned, MlaDecodeSplit::automatic}) {
    MlaSpec s;
    s.split = sp;
    s.heads = 16;
    s.q_len = 1;
    s.page_size = 64;
    s.lens = {8192, 17, 0, 3000, 1};
    s.seed = 300;
    run_case(s);
  }
}

TEST(MlaDecode, LongRaggedContexts) {
  REQUIRE_MLA();
  MlaSpec s;
  s.heads = 16;
  s.q_len = 2;
  s.page_size = 1;
  s.lens = {32768, 0, 12345, 1, 20000};
  s.lse = true;
  s.seed = 400;
  run_case(s);
}

TEST(MlaDecode, NoLse) {
  REQUIRE_MLA();
  MlaSpec s;
  s.lse = false;
  s.heads = 64;
  s.q_len = 1;
  s.lens = {100, 200};
  s.seed = 500;
  run_case(s);
}

TEST(MlaDecode, GraphReplayWithChangedLengths) {
  REQUIRE_MLA();
  MlaSpec s;
  s.heads = 16;
  s.q_len = 2;
  s.page_size = 64;
  s.lens = {4000, 1200, 64, 9};
  s.split = MlaDecodeSplit::planned;
  s.seed = 600;
  const MlaHost h(s);
  MlaDecodeOptions opt;
  opt.split = s.split;
  MlaDevice d(h, mla_decode_workspace_size(traits_of(h), opt));
  const MlaDecodeParams p = d.params();
  const rt::CapturedGraph graph([&](rt::stream_t st) { prebuilt::mla_decode(p, d.ws.ptr, d.ws_bytes, st, opt); });
  // other lengths (each within the pages its block-table row gives), then replay
  MlaHost h2 = h;
  h2.lens = {2500, 1150, 1, 0};
  HIPATTN_CHECK(rt::memcpy_h2d(d.lens.ptr, h2.lens.data(), h2.lens.size() * 4));
  d.poison(nullptr);
  graph.launch(nullptr);
  HIPATTN_CHECK(rt::get_last_error());
  HIPATTN_CHECK(rt::device_synchronize());
  const MlaOut replay = fetch(d);
  expect_matches(h2, replay, h2.reference(), "graph replay");
  const MlaOut eager = run_checked(d, opt);
  EXPECT_EQ(std::memcmp(replay.out.data(), eager.out.data(), replay.out.size()), 0) << "replay != eager";
  EXPECT_EQ(std::memcmp(replay.lse.data(), eager.lse.data(), replay.lse.size() * 4), 0) << "replay != eager (lse)";
}

// ---- the output formats (problem/fp8_io.hpp) ----

// One problem's launches in several output formats, each through one partition (the kernel's
// epilogue writes every sequence) and the planned path (the reduce writes the split sequences, the
// epilogue the one-part ones). The inputs and the reference are the problem's, shared by its launches.
void run_formats(const MlaSpec& s, const std::vector<OutSpec>& formats) {
  MlaHost h(s);
  const reference::AttentionResult ref = h.reference();
  for (const OutSpec& o : formats) {
    h.set_output(o);
    for (MlaDecodeSplit sp : {MlaDecodeSplit::one_partition, MlaDecodeSplit::planned}) {
      const std::string what = h.s.str() + (sp == MlaDecodeSplit::planned ? " planned" : " one partition");
      SCOPED_TRACE(what);
      MlaDecodeOptions opt;
      opt.split = sp;
      MlaDevice d(h, mla_decode_workspace_size(traits_of(h), opt));
      expect_matches(h, run_checked(d, opt), ref, what);
    }
  }
}

// fp8 queries over fp8 caches (both formats each, the codes converted exactly to the compute dtype as
// the producer loads them, q_scale on the device and the host): f16, bf16 and fp8 outputs (the compute
// dtype follows a 16-bit output, fp16 under an fp8 one), joined and split queries, 16 and 128 heads,
// MTP 1 and 4, one partition and planned (the reduce), contexts shorter than q_len.
TEST(MlaDecode, Fp8QueriesOverFp8Caches) {
  REQUIRE_MLA();
  uint64_t seed = 700;
  for (DType q : {DType::fp8_e4m3fn, DType::fp8_e4m3fnuz})
    for (DType kv : {DType::fp8_e4m3fn, DType::fp8_e4m3fnuz}) {
      MlaSpec s;
      s.q_dtype = q;
      s.kv_dtype = kv;
      s.heads = q == kv ? 128 : 16;
      s.q_len = q == kv ? 1 : 4;
      s.page_size = q == DType::fp8_e4m3fn ? 64 : 1;
      s.lens = {3, 200, 1100, 0};
      s.split_q = q != kv;
      s.scale_on_device = kv == DType::fp8_e4m3fn;
      s.o_pad = 16;  // fp8 outputs: 16-byte rows
      s.seed = seed++;
      OutSpec f16, bf16, fp8;
      f16.dtype = DType::f16;
      bf16.dtype = DType::bf16;
      fp8.dtype = kv;
      fp8.group = q == kv ? 0 : 64;
      run_formats(s, {f16, bf16, fp8});
    }
}

// vLLM's fp8 outputs: per tensor (e4m3fn with the host scale, e4m3fnuz with a device scalar), per
// group (e4m3fn 64; 128 with UE8M0, column-major scales; e4m3fnuz 32 with fp8 max 224), over a bf16
// and an fp8 cache, 16 and 128 heads, q_len 1 and 4, with a context shorter than q_len (rows without
// keys: zeros, each group's scale that of a zero maximum).
TEST(MlaDecode, Fp8Outputs) {
  REQUIRE_MLA();
  std::vector<OutSpec> formats(5);
  formats[0].dtype = DType::fp8_e4m3fn;
  formats[1].dtype = DType::fp8_e4m3fnuz;
  formats[1].scale_on_device = true;
  formats[2].dtype = DType::fp8_e4m3fn;
  formats[2].group = 64;
  formats[3].dtype = DType::fp8_e4m3fn;
  formats[3].group = 128;
  formats[3].ue8m0 = true;
  formats[3].col_major_scales = true;
  formats[4].dtype = DType::fp8_e4m3fnuz;
  formats[4].group = 32;
  formats[4].group_max = 224.f;
  uint64_t seed = 800;
  for (DType kv : {DType::bf16, DType::fp8_e4m3fn})
    for (int heads : {16, 128})
      for (int q_len : {1, 4}) {
        MlaSpec s;
        s.kv_dtype = (is_fp8(kv) && heads == 128) ? DType::fp8_e4m3fnuz : kv;  // both fp8 cache formats
        s.heads = heads;
        s.q_len = q_len;
        s.page_size = heads == 16 ? 17 : 64;
        s.o_pad = 16;  // an fp8 row of 528 bytes: a 16-byte multiple
        s.lens = {1000, 130, q_len - 1, 333};  // q_len - 1: no key for the first row (q_len 1: no context)
        s.seed = seed++;
        run_formats(s, formats);
      }
}

// fp16 queries and cache: the 16-bit output named explicitly, and groups of 16 (one 16-column block
// of the accumulator each) with column-major scales and a host per-tensor scale in e4m3fnuz.
TEST(MlaDecode, OutputFormatsFp16) {
  REQUIRE_MLA();
  std::vector<OutSpec> formats(3);
  formats[0].dtype = DType::f16;
  formats[1].dtype = DType::fp8_e4m3fn;
  formats[1].group = 16;
  formats[1].col_major_scales = true;
  formats[2].dtype = DType::fp8_e4m3fnuz;
  MlaSpec s;
  s.q_dtype = s.kv_dtype = DType::f16;
  s.heads = 32;
  s.q_len = 2;
  s.page_size = 64;
  s.o_pad = 48;
  s.lens = {513, 1, 64, 2049};
  s.seed = 850;
  run_formats(s, formats);
}

// ---- context parallelism: round-robin ranks, merged by LSE ----

// Rank r of W owns global tokens g = j W + r (page size 1: its own block table over the same cache).
TEST(MlaDecode, ContextParallelRoundRobinMerge) {
  REQUIRE_MLA();
  for (int W : {2, 3, 4, 7, 8}) {
    SCOPED_TRACE("W = " + std::to_string(W));
    MlaSpec s;
    s.heads = 32;
    s.q_len = 1;
    s.page_size = 1;
    s.lens = {1000, W - 1, 1, 0, 257};  // contexts shorter than W included
    s.seed = 700 + W;
    const MlaHost h(s);
    const reference::AttentionResult ref = h.reference();
    const int T = h.tokens(), H = s.heads;
    // the ranks' partial outputs [W, T, H, 512] (bf16) and LSEs [W, T, H]
    DeviceBuffer parts(size_t(W) * T * H * DV * 2), part_lse(size_t(W) * T * H * 4);
    MlaDevice d(h, 0);
    for (int r = 0; r < W; ++r) {
      std::vector<int32_t> bt(h.bt.size(), h.bt.back()), lens(size_t(h.batch));
      for (int b = 0; b < h.batch; ++b) {
        const int L = h.lens[size_t(b)];
        const int n = L > r ? (L - r + W - 1) / W : 0;
        lens[size_t(b)] = n;
        for (int j = 0; j < n; ++j) bt[size_t(b) * h.max_pages + j] = h.bt[size_t(b) * h.max_pages + (j * W + r)];
      }
      DeviceBuffer rbt = DeviceBuffer::from(bt), rlens = DeviceBuffer::from(lens);
      MlaDecodeParams p = d.params();
      p.block_table = rbt.as<int32_t>();
      p.seq_lens_k = rlens.as<int32_t>();
      p.out = static_cast<char*>(parts.ptr) + size_t(r) * T * H * DV * 2;
      p.o_stride_token = int64_t(H) * DV;
      p.o_stride_head = DV;
      p.lse = part_lse.as<float>() + size_t(r) * T * H;
      p.lse_stride_token = H;
      p.lse_stride_head = 1;
      MlaDecodeOptions opt;
      opt.split = MlaDecodeSplit::one_partition;
      prebuilt::mla_decode(p, nullptr, 0, nullptr, opt);
      HIPATTN_CHECK(rt::get_last_error());
      HIPATTN_CHECK(rt::device_synchronize());
    }
    MergeAttentionStatesParams m;
    m.partial_out = parts.ptr;
    m.partial_dtype = s.q_dtype;
    m.po_stride_rank = int64_t(T) * H * DV;
    m.po_stride_token = int64_t(H) * DV;
    m.po_stride_head = DV;
    m.partial_lse = part_lse.as<float>();
    m.plse_stride_rank = int64_t(T) * H;
    m.plse_stride_token = H;
    m.plse_stride_head = 1;
    m.num_ranks = W;
    m.num_tokens = T;
    m.num_heads = H;
    m.head_size = DV;
    d.poison(nullptr);
    m.out = d.out.ptr;
    m.out_dtype = s.q_dtype;
    m.o_stride_token = h.o_st;
    m.o_stride_head = h.o_sh;
    m.lse = d.lse.as<float>();
    m.lse_stride_token = H;
    m.lse_stride_head = 1;
    merge_attention_states(m, nullptr);
    HIPATTN_CHECK(rt::get_last_error());
    HIPATTN_CHECK(rt::device_synchronize());
    expect_matches(h, fetch(d), ref, "merged W=" + std::to_string(W));
  }
}

// ---- errors ----

// An e4m3fn output over p's own buffer with packed strides (the test rows' 8 elements of padding are
// not a 16-byte multiple in one-byte elements), per tensor (group 0: the host scale 1) or per group
// with no scale tensor yet.
void fp8_output(MlaDecodeParams& p, int32_t group) {
  p.out_format.dtype = DType::fp8_e4m3fn;
  p.o_stride_head = DV;
  p.o_stride_token = int64_t(p.num_heads) * DV;
  if (group > 0) {
    p.out_format.group_size = group;
    p.out_format.group_scale_stride_group = 1;
    p.out_format.group_scale_stride_token = int64_t(p.num_heads) * (DV / group);
  }
}

TEST(MlaDecode, TypedErrors) {
  REQUIRE_MLA();
  MlaSpec s;
  s.lens = {10};
  const MlaHost h(s);
  MlaDevice d(h, 0);
  {
    MlaDecodeParams p = d.params();
    p.q_len = 9;
    try {
      prebuilt::mla_decode(p, nullptr, 0, nullptr);
      ADD_FAILURE() << "q_len 9 accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::unsupported);  // MTP beyond kMlaMaxQLen
      EXPECT_EQ(e.field(), "q_len");
    }
  }
  {
    MlaDecodeParams p = d.params();
    MlaDecodeOptions opt;
    opt.split = MlaDecodeSplit::planned;
    try {
      prebuilt::mla_decode(p, nullptr, 0, nullptr, opt);
      ADD_FAILURE() << "planned call without workspace accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::workspace);
    }
  }
  // bad output formats are refused before any launch, naming the field
  struct Bad {
    const char* field;
    ErrorCode code;
    std::function<void(MlaDecodeParams&)> set;
  };
  const Bad bads[] = {
      {"out_format.scale.host", ErrorCode::invalid_argument, [](MlaDecodeParams& p) { fp8_output(p, 0); p.out_format.scale.host = INFINITY; }},
      {"out_format.scale.host", ErrorCode::invalid_argument, [](MlaDecodeParams& p) { fp8_output(p, 0); p.out_format.scale.host = -2.f; }},
      {"out_format.scale.host", ErrorCode::invalid_argument,
       [](MlaDecodeParams& p) { fp8_output(p, 0); p.out_format.scale.host = std::nanf(""); }},
      {"out_format.group_size", ErrorCode::unsupported, [](MlaDecodeParams& p) { fp8_output(p, 48); }},
      {"out_format.group_scale", ErrorCode::invalid_argument, [](MlaDecodeParams& p) { fp8_output(p, 64); }},  // null
      {"o_stride_head", ErrorCode::invalid_argument, [](MlaDecodeParams& p) {
         fp8_output(p, 0);
         p.o_stride_head = DV + 8;  // 520 one-byte elements: not a 16-byte multiple
         p.o_stride_token = int64_t(p.num_heads) * (DV + 16);
       }},
  };
  for (const Bad& b : bads) {
    MlaDecodeParams p = d.params();
    b.set(p);
    d.poison(nullptr);
    try {
      prebuilt::mla_decode(p, nullptr, 0, nullptr);
      ADD_FAILURE() << b.field << ": accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), b.field) << e.what();
      EXPECT_EQ(e.code(), b.code) << e.what();
    }
  }
}

}  // namespace
}  // namespace hipattn::testing
