// Benchmark sweep of MLA decode (issue 12): hipattn::mla_decode over the mla_decode grid of
// the seed documents' decode sweep grids (trimmed: see register_mla_decode_benchmarks), the issue's
// target rows by name, and the context-parallel merge (merge_attention_states of W ranks' partials)
// timed next to the decode it follows.
//
// Names: mla_decode/<case> (Google Benchmark appends /iterations:1/manual_time); run this sweep alone
// with --benchmark_filter=mla_decode/. The label says the dtypes and the page size.
//
// Layout as the grid describes it: a latent cache [pages, page_size, 576] with one kv head; every
// sequence of the batch has the same context (ctx keys, its q_len new tokens included); page size 1
// (also 64) with each sequence's pages a random permutation of the cache (fragmented). Method as the
// other sweeps (bench_common.hpp): the call captured in a graph, replays after an L2 flush, the
// median of 40. Counters: us; TB/s over the compulsory bytes (Q and O of every query row, 2 bytes an
// element, and each attended latent row once in the cache's dtype) and bw_frac, that over the copy
// ceiling; TFLOP/s over 2 x (576 + 512) x heads x the exact attended (query, key) pairs (causal among
// the MTP rows counted row by row) and wgmma_frac, that over the wgmma ceiling of the run (the atom the
// kernel uses). Merge rows add merge_us (the merge of W bf16 partials with their LSEs, one graph) and
// merge_frac = merge_us / us of the decode call of the same shape.
// A call that throws (hipattn::Error: e.g. a CDNA GPU, which has no MLA kernel yet) skips its row.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <exception>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "hipattn/dispatch/merge_attention_states.hpp"
#include "hipattn/dispatch/mla_decode.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/numeric/bf16.hpp"
#include "hipattn/numeric/fp8.hpp"

namespace hipattn::bench {
namespace {
using namespace hipattn::testing;

struct Case {
  std::string name;
  int heads = 16, batch = 64, ctx = 8192, q_len = 1, page = 1;
  DType kv = DType::bf16;  // bf16 or fp8_e4m3fn
  DType q = DType::bf16;   // bf16, or fp8_e4m3fn over an fp8 cache (bf16 output, q_scale 0.5)
  int merge_ranks = 0;     // > 0: also time the merge of this many ranks' partials
};

struct Work {
  double flops = 0, bytes = 0;
};
Work work(const Case& c) {
  Work w;
  const double tokens = double(c.batch) * c.q_len;
  double pairs = 0;
  for (int i = 0; i < c.q_len; ++i) pairs += std::max(0, std::min(c.ctx, c.ctx - c.q_len + i + 1));
  pairs *= c.batch;
  w.flops = 2.0 * (kMlaQkDim + kMlaLatentDim) * c.heads * pairs;
  w.bytes = tokens * c.heads * (kMlaQkDim * double(dtype_size(c.q)) + kMlaLatentDim * 2.0) +
            double(c.batch) * c.ctx * kMlaQkDim * dtype_size(c.kv);
  return w;
}

// n bytes of kv codes or 16-bit values uniform in [-1, 1] (fp8: in [-2, 2]) from a hash of the index.
__global__ void fill_kv_kernel(uint8_t* p, size_t n_elems, uint32_t seed, bool fp8) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n_elems; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t x = (static_cast<uint32_t>(i) ^ static_cast<uint32_t>(i >> 32) * 0x85EBCA6Bu) * 2654435761u ^ seed;
    x ^= x >> 15; x *= 2246822519u; x ^= x >> 13; x *= 3266489917u; x ^= x >> 16;
    const float f = float(x >> 8) * (2.0f / 16777215.0f) - 1.0f;
    if (fp8) p[i] = fp8_e4m3fn_t::from_float(2.f * f).bits;
    else reinterpret_cast<uint16_t*>(p)[i] = bfloat16_t::from_float(f).bits;
  }
}
void fill_kv(DeviceBuffer& b, size_t elems, uint32_t seed, bool fp8) {
  if (elems == 0) return;
  fill_kv_kernel<<<2048, 256>>>(b.as<uint8_t>(), elems, seed, fp8);
  HIPATTN_CHECK_LAUNCH();
}

struct Problem {
  DeviceBuffer q, kv, bt, lens, out, lse, ws;
  size_t ws_bytes = 0;
  MlaDecodeParams p;
  explicit Problem(const Case& c) {
    const int64_t tokens = int64_t(c.batch) * c.q_len;
    const int pages_per_seq = (c.ctx + c.page - 1) / c.page;
    const int64_t pages = int64_t(c.batch) * pages_per_seq;
    q = DeviceBuffer(size_t(tokens) * c.heads * kMlaQkDim * dtype_size(c.q));
    kv = DeviceBuffer(size_t(pages) * c.page * kMlaQkDim * dtype_size(c.kv));
    out = DeviceBuffer(size_t(tokens) * c.heads * kMlaLatentDim * 2);
    lse = DeviceBuffer(size_t(tokens) * c.heads * 4);
    fill_kv(q, size_t(tokens) * c.heads * kMlaQkDim, 0x51u, is_fp8(c.q));
    fill_kv(kv, size_t(pages) * c.page * kMlaQkDim, 0x4Bu, is_fp8(c.kv));
    std::vector<int32_t> table(static_cast<size_t>(pages));
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), std::mt19937_64(7));  // fragmented: every sequence's pages scattered
    bt = DeviceBuffer::from(table);
    lens = DeviceBuffer::from(std::vector<int32_t>(static_cast<size_t>(c.batch), c.ctx));
    p.q = q.ptr;
    p.q_stride_head = kMlaQkDim;
    p.q_stride_token = int64_t(c.heads) * kMlaQkDim;
    p.q_dtype = c.q;
    if (is_fp8(c.q)) {
      p.q_scale.host = 0.5f;
      p.out_format.dtype = DType::bf16;
    }
    p.q_len = c.q_len;
    p.kv_cache = kv.ptr;
    p.kv_dtype = c.kv;
    p.kv_stride_slot = kMlaQkDim;
    p.kv_stride_page = int64_t(c.page) * kMlaQkDim;
    p.num_pages = static_cast<int32_t>(pages);
    p.page_size = c.page;
    p.kv_scale_value = 0.5f;
    p.block_table = bt.as<int32_t>();
    p.block_table_stride = pages_per_seq;
    p.max_pages_per_seq = pages_per_seq;
    p.seq_lens_k = lens.as<int32_t>();
    p.batch = c.batch;
    p.max_seqlen_k = c.ctx;
    p.num_heads = c.heads;
    p.scale = 1.f / std::sqrt(float(kMlaQkDim));
    p.out = out.ptr;
    p.o_stride_token = int64_t(c.heads) * kMlaLatentDim;
    p.o_stride_head = kMlaLatentDim;
    p.lse = lse.as<float>();
    p.lse_stride_token = c.heads;
    p.lse_stride_head = 1;
    MlaDecodeTraits t;
    t.max_batch = c.batch;
    t.max_q_len = c.q_len;
    t.num_heads = c.heads;
    t.max_seqlen_k = c.ctx;
    ws_bytes = mla_decode_workspace_size(t);
    if (ws_bytes > 0) ws = DeviceBuffer(ws_bytes);
    HIPATTN_CHECK(rt::device_synchronize());
  }
};

void bench_mla(benchmark::State& state, const Case* c) {
  try {
    const Problem pr(*c);
    const Work w = work(*c);
    const rt::CapturedGraph graph([&](rt::stream_t st) { prebuilt::mla_decode(pr.p, pr.ws.ptr, pr.ws_bytes, st); });
    const double ms = time_graph(state, graph);
    const double tflops = w.flops / (ms * 1e-3) / 1e12;
    set_bandwidth_counters(state, ms, w.bytes);
    state.counters["TFLOP/s"] = tflops;
    if (g_wgmma_tflops > 0) state.counters["wgmma_frac"] = tflops / g_wgmma_tflops;
    if (c->merge_ranks > 0) {
      // W ranks' partials of this call's outputs (bf16, [W, tokens, heads, 512]) with their LSEs
      const int64_t rows = int64_t(c->batch) * c->q_len * c->heads;
      DeviceBuffer parts(size_t(c->merge_ranks) * rows * kMlaLatentDim * 2), plse(size_t(c->merge_ranks) * rows * 4);
      fill_kv(parts, size_t(c->merge_ranks) * rows * kMlaLatentDim, 0x33u, false);
      HIPATTN_CHECK(rt::memset_async(plse.ptr, 0, plse.bytes, nullptr));
      HIPATTN_CHECK(rt::device_synchronize());
      MergeAttentionStatesParams m;
      m.partial_out = parts.ptr;
      m.partial_dtype = DType::bf16;
      m.po_stride_rank = rows * kMlaLatentDim;
      m.po_stride_token = int64_t(c->heads) * kMlaLatentDim;
      m.po_stride_head = kMlaLatentDim;
      m.partial_lse = plse.as<float>();
      m.plse_stride_rank = rows;
      m.plse_stride_token = c->heads;
      m.plse_stride_head = 1;
      m.num_ranks = c->merge_ranks;
      m.num_tokens = c->batch * c->q_len;
      m.num_heads = c->heads;
      m.head_size = kMlaLatentDim;
      m.out = pr.out.ptr;
      m.out_dtype = DType::bf16;
      m.o_stride_token = int64_t(c->heads) * kMlaLatentDim;
      m.o_stride_head = kMlaLatentDim;
      m.lse = pr.lse.as<float>();
      m.lse_stride_token = c->heads;
      m.lse_stride_head = 1;
      const rt::CapturedGraph mg([&](rt::stream_t st) { merge_attention_states(m, st); });
      const double merge_ms = median_ms([&] { mg.launch(nullptr); }, g_flush);
      state.counters["merge_us"] = merge_ms * 1e3;
      state.counters["merge_frac"] = merge_ms / ms;
    }
    state.SetLabel(std::string(dtype_name(c->q)) + " q, " + std::string(dtype_name(c->kv)) + " kv, page " + std::to_string(c->page));
  } catch (const Error& e) {
    state.SkipWithError(e.what());
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

std::deque<Case> g_cases;

void add(const Case& c) {
  const Case* cp = &g_cases.emplace_back(c);
  benchmark::RegisterBenchmark(("mla_decode/" + c.name).c_str(), bench_mla, cp)
      ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

std::string k_of(int n) { return std::to_string(n / 1024) + "k"; }
std::string name_of(const Case& c) {
  return "h" + std::to_string(c.heads) + "_b" + std::to_string(c.batch) + "_ctx" + k_of(c.ctx) + "_mtp" +
         std::to_string(c.q_len) + (is_fp8(c.q) ? "_fp8q" : "") + (is_fp8(c.kv) ? "_fp8" : "_bf16") +
         (c.page != 1 ? "_page" + std::to_string(c.page) : "");
}

}  // namespace

void register_mla_decode_benchmarks() {
  // The issue's target rows first (named "target_..."): 128 heads b64 x 8K and b128 x 32K (bf16),
  // 16 heads b64 x 8K (bf16 and fp8 KV), each also with page 64, the merge of 8 ranks after the
  // 128-head call, and fp8 queries over an fp8 cache at 128 and 16 heads.
  for (int page : {1, 64}) {
    Case c;
    c.page = page;
    c.heads = 128, c.batch = 64, c.ctx = 8192;
    c.merge_ranks = page == 1 ? 8 : 0;
    c.name = "target_" + name_of(c);
    add(c);
    c.merge_ranks = 0;
    c.batch = 128, c.ctx = 32768;
    c.name = "target_" + name_of(c);
    add(c);
    c.heads = 16, c.batch = 64, c.ctx = 8192;
    for (DType kv : {DType::bf16, DType::fp8_e4m3fn}) {
      c.kv = kv;
      c.name = "target_" + name_of(c);
      add(c);
    }
  }
  // fp8 queries over an fp8 cache (the issue's 970 TFLOP/s row at 128 heads; 16 heads for bandwidth):
  // the codes converted to bf16 as Q loads, so the products run at the 16-bit rate
  for (int heads : {128, 16}) {
    Case c;
    c.heads = heads, c.batch = 64, c.ctx = 8192;
    c.q = c.kv = DType::fp8_e4m3fn;
    c.name = "target_" + name_of(c);
    add(c);
  }
  // decode_sweeps.json "mla_decode": heads {16, 32, 64, 96, 128} x ctx {4K, 16K, 64K, 128K} x batch
  // {16, 32, 64, 128} x MTP {1, 2, 4, 8} x {bf16, fp8}, page size 1. Trimmed to (batch, ctx) in
  // {(16, 4K), (64, 4K), (16, 16K), (64, 16K), (16, 64K), (16, 128K)} (at most 2.4 GB of bf16 cache
  // a row; batch 32 and 128 and the batch-64 long contexts left out for the sweep's time), every head
  // count and MTP depth in bf16, and MTP 1 and 8 in fp8: 180 rows.
  const std::pair<int, int> shapes[] = {{16, 4096}, {64, 4096}, {16, 16384}, {64, 16384}, {16, 65536}, {16, 131072}};
  for (DType kv : {DType::bf16, DType::fp8_e4m3fn})
    for (const auto& [b, ctx] : shapes)
      for (int h : {16, 32, 64, 96, 128})
        for (int mtp : {1, 2, 4, 8}) {
          if (is_fp8(kv) && mtp != 1 && mtp != 8) continue;
          Case c;
          c.kv = kv, c.batch = b, c.ctx = ctx, c.heads = h, c.q_len = mtp;
          c.name = name_of(c);
          add(c);
        }
}

}  // namespace hipattn::bench
