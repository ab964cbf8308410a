// Benchmark sweep of dense prefill (issue 11): hipattn::dense_prefill on contiguous Q / K / V, the
// dense_prefill grid of the seed sweeps (tests/data/dense_prefill_sweeps.json; d256 and d192 / v128, trimmed: see
// register_dense_prefill_benchmarks), a d128 series at about 16K query tokens (causal and not, 1K to
// 16K a sequence), the serving prefill shapes of the design documents' H200 peer table
// (serve_prefill_1x4k, single_batch_prefill_d128_gqa8_S4096) by name, a sliding-window row, a batched
// BSHD row and an fp16 row.
//
// Names: dense_prefill/<case> (Google Benchmark appends /iterations:1/manual_time); run this sweep
// alone with --benchmark_filter=dense_prefill/. The label says the layout (varlen: packed, cu_seqlens;
// bshd: batched, batch strides) and the dtype.
//
// Method and counters as the unified sweep (bench_common.hpp): the call captured in a graph, replays
// after an L2 flush, the median of 40. us; TB/s over the compulsory bytes (Q and O of every query
// token, the K and V of the keys some query of the sequence sees, each once; 2 bytes an element; + the
// LSE floats when a case writes them) and bw_frac, that rate over the copy ceiling; TFLOP/s over
// 2 * (d_qk + d_v) * num_q_heads * the exact number of visible (query, key) pairs (bottom-right causal
// and the window counted row by row, bench_common.hpp's attended(); non-causal: q_len * k_len) and
// that rate over the two matrix-unit ceilings of the run: mma_frac (mma.sync m16n8k16) and wgmma_frac
// (wgmma m64n256k16; absent where the run has no wgmma ceiling). Inputs uniform random in [-1, 1];
// one problem on the device at a time (allocated by its benchmark, freed after it).
// A call that throws (hipattn::Error: an unsupported target, e.g. a CDNA GPU, or invalid params; a
// failed allocation) skips its row with the message.
#include <cmath>
#include <cstdint>
#include <deque>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "bench_common.hpp"
#include "hipattn/dispatch/dense_prefill.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/numeric/bf16.hpp"
#include "hipattn/numeric/fp16.hpp"

namespace hipattn::bench {
namespace {
using namespace hipattn::testing;

// One row: num_seqs sequences of q_len queries and k_len keys each.
struct Case {
  std::string name;  // <case> of the benchmark name
  DType dtype = DType::bf16;
  int num_seqs = 1, q_len = 0, k_len = 0;
  int num_q_heads = 32, num_kv_heads = 32, d_qk = 128, d_v = 128;
  bool causal = true;     // bottom-right
  int window_left = -1;   // keys j >= position - window_left (with causal); -1: none
  bool batched = false;   // batched BSHD (batch strides); else packed varlen (cu_seqlens)
  bool lse = false;       // also write the LSE
};

// Exact work and compulsory traffic of a case.
struct Work {
  double flops = 0, bytes = 0;
};
Work work(const Case& c) {
  Attended a;
  if (c.causal) {
    a = attended(std::vector<std::pair<int, int>>(size_t(c.num_seqs), {c.q_len, c.k_len}), c.window_left);
  } else {  // every query sees every key of its sequence
    a.pairs = double(c.num_seqs) * c.q_len * c.k_len;
    a.keys = c.q_len > 0 ? double(c.num_seqs) * c.k_len : 0.0;
  }
  const double tokens_q = double(c.num_seqs) * c.q_len;
  Work w;
  w.flops = 2.0 * (c.d_qk + c.d_v) * c.num_q_heads * a.pairs;
  w.bytes = tokens_q * c.num_q_heads * (c.d_qk + c.d_v) * 2.0 + a.keys * c.num_kv_heads * (c.d_qk + c.d_v) * 2.0 +
            (c.lse ? tokens_q * c.num_q_heads * 4.0 : 0.0);
  return w;
}

// The case's arrays on the device and its DensePrefillParams.
struct Problem {
  DeviceBuffer q, k, v, out, lse, cu_q, cu_k;
  DensePrefillParams p;
  explicit Problem(const Case& c) {
    const int64_t tq = int64_t(c.num_seqs) * c.q_len, tk = int64_t(c.num_seqs) * c.k_len;
    const bool bf16 = c.dtype == DType::bf16;
    q = DeviceBuffer(size_t(tq) * c.num_q_heads * c.d_qk * 2);
    k = DeviceBuffer(size_t(tk) * c.num_kv_heads * c.d_qk * 2);
    v = DeviceBuffer(size_t(tk) * c.num_kv_heads * c.d_v * 2);
    out = DeviceBuffer(size_t(tq) * c.num_q_heads * c.d_v * 2);
    fill_uniform16(q, 0x51u, bf16);
    fill_uniform16(k, 0x4Bu, bf16);
    fill_uniform16(v, 0x56u, bf16);
    p.dtype = c.dtype;
    p.q = q.ptr, p.k = k.ptr, p.v = v.ptr, p.out = out.ptr;
    // [tokens, heads, d] (batched: [seqs, len, heads, d]), contiguous.
    p.q_stride_head = c.d_qk, p.q_stride_token = int64_t(c.num_q_heads) * c.d_qk;
    p.k_stride_head = c.d_qk, p.k_stride_token = int64_t(c.num_kv_heads) * c.d_qk;
    p.v_stride_head = c.d_v, p.v_stride_token = int64_t(c.num_kv_heads) * c.d_v;
    p.o_stride_head = c.d_v, p.o_stride_token = int64_t(c.num_q_heads) * c.d_v;
    if (c.batched) {
      p.q_stride_batch = p.q_stride_token * c.q_len, p.o_stride_batch = p.o_stride_token * c.q_len;
      p.k_stride_batch = p.k_stride_token * c.k_len, p.v_stride_batch = p.v_stride_token * c.k_len;
    } else {
      std::vector<int32_t> cq(size_t(c.num_seqs) + 1), ck(size_t(c.num_seqs) + 1);
      for (int s = 0; s <= c.num_seqs; ++s) cq[s] = s * c.q_len, ck[s] = s * c.k_len;
      cu_q = DeviceBuffer::from(cq);
      cu_k = DeviceBuffer::from(ck);
      p.cu_seqlens_q = cu_q.as<int32_t>(), p.cu_seqlens_k = cu_k.as<int32_t>();
    }
    p.num_seqs = c.num_seqs;
    p.num_tokens_q = static_cast<int32_t>(tq), p.num_tokens_k = static_cast<int32_t>(tk);
    p.max_seqlen_q = c.q_len, p.max_seqlen_k = c.k_len;
    p.num_q_heads = c.num_q_heads, p.num_kv_heads = c.num_kv_heads;
    p.head_size_qk = c.d_qk, p.head_size_v = c.d_v;
    p.scale = 1.0f / std::sqrt(float(c.d_qk));
    p.causal = c.causal;
    p.window_left = c.window_left;
    if (c.lse) {
      lse = DeviceBuffer(size_t(tq) * c.num_q_heads * sizeof(float));
      p.lse = lse.as<float>(), p.lse_stride_head = tq;
    }
    // The fills ran on the legacy stream; the graph's stream is a non-blocking one.
    HIPATTN_CHECK(rt::device_synchronize());
  }
};

void bench_dense_prefill(benchmark::State& state, const Case* c) {
  try {
    const Problem pr(*c);
    const DensePrefillParams& p = pr.p;
    const Work w = work(*c);
    const rt::CapturedGraph graph([&](rt::stream_t st) { prebuilt::dense_prefill(p, st); });
    const double ms = time_graph(state, graph);
    const double tflops = w.flops / (ms * 1e-3) / 1e12;
    set_bandwidth_counters(state, ms, w.bytes);
    state.counters["TFLOP/s"] = tflops;
    state.counters["mma_frac"] = tflops / g_mma_tflops;
    if (g_wgmma_tflops > 0) state.counters["wgmma_frac"] = tflops / g_wgmma_tflops;
    state.SetLabel(std::string(c->batched ? "bshd " : "varlen ") + std::string(dtype_name(c->dtype)));
  } catch (const Error& e) {  // unsupported target, invalid params, a failed runtime call
    state.SkipWithError(e.what());
  } catch (const std::exception& e) {  // e.g. no memory on the host side
    state.SkipWithError(e.what());
  }
}

std::deque<Case> g_cases;  // stable addresses for the registered benchmarks

void add(const Case& c) {
  const Case* cp = &g_cases.emplace_back(c);
  benchmark::RegisterBenchmark(("dense_prefill/" + c.name).c_str(), bench_dense_prefill, cp)
      ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

std::string k_suffix(int len) { return len % 1024 == 0 ? std::to_string(len / 1024) + "k" : std::to_string(len); }

}  // namespace

void register_dense_prefill_benchmarks() {
  // decode_sweeps.json "dense_prefill": batched problems, causal bottom-right, q heads = kv heads,
  // bf16; d256 (batch 1, 16) and d192 / v128 (batch 1, 16, 64, 128), heads 32 and 64, seqlen_q 1K ..
  // 16K, seqlen_k 4096, 16384, 65664; d256 skips seqlen_k < seqlen_q (the grid's rule), d192 / v128
  // keeps those points (their first seqlen_q - seqlen_k rows see no key; the count is exact).
  // Trimming rule (for memory and a sweep of about a minute): a point is kept when its exact FLOP
  // count is at most 1e13 (10 TFLOP: 25 ms a call at 400 TFLOP/s, about 1.1 s a row for the 44
  // calls a row makes). That keeps 68 of the 172 points, 214 TFLOP in all (about 24 s of calls at
  // 400 TFLOP/s), at most 12.5 GiB of Q / K / V / O a row. For both head sizes:
  //   batch 1:   every point with seqlen_k 4096 or 16384; seqlen_k 65664 with seqlen_q <= 4096 at 32
  //              heads, <= 2048 at 64 heads;
  //   batch 16:  every seqlen_q with seqlen_k 4096 (d256: seqlen_q <= 4096, its skip rule), and
  //              seqlen_q 1024 with seqlen_k 16384 at 32 heads;
  //   batch 64 (d192 / v128): seqlen_k 4096 with seqlen_q 1024 and 2048 at 32 heads, 1024 at 64;
  //   batch 128 (d192 / v128): seqlen_q 1024, seqlen_k 4096, 32 heads.
  // The rows are packed varlen (cu_seqlens, every sequence of the same lengths: the bytes of the
  // grid's BSHD layout); one batched BSHD row follows below.
  {
    struct Grid {
      const char* tag;
      int d_qk, d_v;
      std::vector<int> batches;
      bool skip_short_k;
    };
    constexpr double kMaxFlops = 1e13;
    for (const Grid& g : {Grid{"d256", 256, 256, {1, 16}, true}, Grid{"d192v128", 192, 128, {1, 16, 64, 128}, false}})
      for (int b : g.batches)
        for (int h : {32, 64})
          for (int lq : {1024, 2048, 4096, 8192, 16384})
            for (int lk : {4096, 16384, 65664}) {
              if (g.skip_short_k && lk < lq) continue;
              Case c;
              c.name = std::string(g.tag) + "_b" + std::to_string(b) + "_h" + std::to_string(h) + "_q" +
                       std::to_string(lq) + "_k" + std::to_string(lk);
              c.num_seqs = b, c.q_len = lq, c.k_len = lk;
              c.num_q_heads = c.num_kv_heads = h;
              c.d_qk = g.d_qk, c.d_v = g.d_v;
              if (work(c).flops > kMaxFlops) continue;
              add(c);
            }
  }
  // d128, 32 q / 8 kv heads (GQA 4, the serving prefill shapes' heads), about 16K query tokens a call:
  // 16 x 1K, 8 x 2K, 4 x 4K, 2 x 8K, 1 x 16K, causal and not (causal 8 x 2K is serve_prefill_8x2k's
  // shape).
  for (bool causal : {true, false})
    for (auto [n, len] : {std::pair{16, 1024}, std::pair{8, 2048}, std::pair{4, 4096}, std::pair{2, 8192},
                          std::pair{1, 16384}}) {
      Case c;
      c.name = std::string("d128_h32kv8_") + (causal ? "causal_" : "noncausal_") + std::to_string(n) + "x" + k_suffix(len);
      c.num_seqs = n, c.q_len = c.k_len = len;
      c.num_q_heads = 32, c.num_kv_heads = 8;
      c.causal = causal;
      add(c);
    }
  // The serving prefill shapes of h200-peers.md (tests/data/unified_default.json), causal bf16 d128:
  // serve_prefill_1x4k 32 / 8 heads, single_batch_prefill_d128_gqa8_S4096 64 / 8 heads, 1 x 4096.
  add(Case{.name = "serve_prefill_1x4k", .q_len = 4096, .k_len = 4096, .num_q_heads = 32, .num_kv_heads = 8});
  add(Case{.name = "single_batch_prefill_d128_gqa8_S4096", .q_len = 4096, .k_len = 4096, .num_q_heads = 64,
           .num_kv_heads = 8});
  // Variants of d128_h32kv8_causal: batched BSHD (8 x 2K, against the varlen row of the same shape),
  // fp16 (4 x 4K), a 4096-key sliding window (window_left 4095) at 1 x 16K, and with the LSE (8 x 2K).
  add(Case{.name = "d128_h32kv8_causal_8x2k_bshd", .num_seqs = 8, .q_len = 2048, .k_len = 2048, .num_q_heads = 32,
           .num_kv_heads = 8, .batched = true});
  add(Case{.name = "d128_h32kv8_causal_4x4k_f16", .dtype = DType::f16, .num_seqs = 4, .q_len = 4096, .k_len = 4096,
           .num_q_heads = 32, .num_kv_heads = 8});
  add(Case{.name = "d128_h32kv8_causal_w4k_1x16k", .q_len = 16384, .k_len = 16384, .num_q_heads = 32,
           .num_kv_heads = 8, .window_left = 4095});
  add(Case{.name = "d128_h32kv8_causal_8x2k_lse", .num_seqs = 8, .q_len = 2048, .k_len = 2048, .num_q_heads = 32,
           .num_kv_heads = 8, .lse = true});
}

}  // namespace hipattn::bench
