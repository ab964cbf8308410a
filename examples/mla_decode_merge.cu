// MLA decode through the instance library, and the context-parallel merge of two ranks' partials.
//
// DeepSeek-style absorbed MLA decode (one latent KV head of 576 dims, V its first 512): 2 sequences
// of 512 and 192 keys, 16 heads, bf16, 32-token pages in shuffled order. It runs three ways on one
// stream, over one workspace sized from bounds (MlaDecodeTraits): one call over the whole context,
// then as two context-parallel ranks, each over its half of every sequence's pages (its own block
// table) writing its partial output and LSE, merged by hipattn::merge_attention_states (compiled here:
// a small portable kernel) into an fp32 output and LSE. Both results are checked against the float64
// reference (reference::mla_decode) of the whole context. hipattn::prebuilt::mla_decode comes from the
// hipattn_instances library. Every output is poisoned (NaN bits) before the launches. With no GPU it
// says so and exits 0.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "example_util.hpp"
#include "hipattn/dispatch/merge_attention_states.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/reference/mla_decode.hpp"

namespace {
using bf16 = hipattn::bfloat16_t;
using example::DeviceBuffer, example::max_abs_error;

int run() {
  constexpr int DK = hipattn::kMlaQkDim, DV = hipattn::kMlaLatentDim;  // 576, 512
  const std::vector<int32_t> lens{512, 192}, half_lens{256, 96};       // each half a whole number of pages
  const int batch = 2, T = batch, H = 16, page = 32, max_pages = 16, half_pages = 8, num_pages = 16 + 6;

  // Seeded random inputs in [-1, 1]: q [T, H, 576], cache [num_pages, page, 576]; the full block table
  // [batch, 16] over shuffled pages, and each rank's [batch, 8]: its half of every row.
  std::mt19937 rng(576);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  std::vector<bf16> q(size_t(T) * H * DK), kv(size_t(num_pages) * page * DK);
  for (auto* t : {&q, &kv})
    for (bf16& x : *t) x = bf16::from_float(uni(rng));
  std::vector<int32_t> pages(num_pages), table(size_t(batch) * max_pages, 0);
  std::iota(pages.begin(), pages.end(), 0);
  std::shuffle(pages.begin(), pages.end(), rng);
  for (int b = 0, next = 0; b < batch; ++b)
    for (int j = 0; j * page < lens[b]; ++j) table[b * max_pages + j] = pages[next++];
  std::vector<int32_t> rank_table[2];
  for (int r = 0; r < 2; ++r)
    for (int b = 0; b < batch; ++b)
      for (int j = 0; j < half_pages; ++j)
        rank_table[r].push_back(j * page < half_lens[b] ? table[b * max_pages + r * half_lens[b] / page + j] : 0);

  // The float64 reference of the whole context, over host pointers.
  hipattn::reference::MlaDecodeParams ref_p;
  ref_p.q = q.data(), ref_p.q_dtype = hipattn::DType::bf16;
  ref_p.q_stride_batch = int64_t(H) * DK, ref_p.q_stride_token = int64_t(H) * DK, ref_p.q_stride_head = DK;
  ref_p.kv_cache = kv.data(), ref_p.kv_dtype = hipattn::DType::bf16;
  ref_p.kv_stride_page = int64_t(page) * DK, ref_p.kv_stride_slot = DK, ref_p.num_pages = num_pages,
  ref_p.page_size = page;
  ref_p.block_table = table.data(), ref_p.block_table_stride = max_pages, ref_p.max_pages = max_pages;
  ref_p.seq_lens_k = lens.data(), ref_p.batch = batch, ref_p.q_len = 1, ref_p.num_heads = H;
  ref_p.scale = 1.f / std::sqrt(float(DK));
  const hipattn::reference::AttentionResult ref = hipattn::reference::mla_decode(ref_p);

  DeviceBuffer dq(q), dkv(kv), dtable(table), dlens(lens), dhalf_lens(half_lens), dtable0(rank_table[0]),
      dtable1(rank_table[1]);
  const size_t out_elems = size_t(T) * H * DV, lse_elems = size_t(T) * H;
  DeviceBuffer dout(out_elems * sizeof(bf16)), dpartial(2 * out_elems * sizeof(bf16)),
      dpartial_lse(2 * lse_elems * sizeof(float)), dmerged(out_elems * sizeof(float)),
      dmerged_lse(lse_elems * sizeof(float));
  for (const DeviceBuffer* o : {&dout, &dpartial, &dpartial_lse, &dmerged, &dmerged_lse}) o->poison();

  // One call's params: the same queries and cache; the block table, lengths and outputs of a context.
  const auto params = [&](const DeviceBuffer& tab, int tab_pages, const DeviceBuffer& seq_lens, int max_len, void* out,
                          float* lse) {
    hipattn::MlaDecodeParams p;
    p.q = dq.ptr, p.q_stride_token = int64_t(H) * DK, p.q_stride_head = DK, p.q_dtype = hipattn::DType::bf16;
    p.kv_cache = dkv.ptr, p.kv_dtype = hipattn::DType::bf16, p.kv_stride_page = int64_t(page) * DK,
    p.kv_stride_slot = DK;
    p.num_pages = num_pages, p.page_size = page;
    p.block_table = tab.as<int32_t>(), p.block_table_stride = tab_pages, p.max_pages_per_seq = tab_pages;
    p.seq_lens_k = seq_lens.as<int32_t>(), p.batch = batch, p.max_seqlen_k = max_len;
    p.num_heads = H, p.scale = ref_p.scale;
    p.out = out, p.o_stride_token = int64_t(H) * DV, p.o_stride_head = DV;
    p.lse = lse, p.lse_stride_token = H, p.lse_stride_head = 1;  // [T, H]
    return p;
  };
  // Once, from bounds; the calls run in order on one stream, so they share it.
  const size_t ws_bytes =
      hipattn::mla_decode_workspace_size({.max_batch = batch, .max_q_len = 1, .num_heads = H, .max_seqlen_k = 512});
  DeviceBuffer ws(ws_bytes);
  hipattn::prebuilt::mla_decode(params(dtable, max_pages, dlens, 512, dout.ptr, nullptr), ws.ptr, ws_bytes, nullptr);
  for (int r = 0; r < 2; ++r)  // rank r: its partial output [T, H, 512] and LSE [T, H], stacked by rank
    hipattn::prebuilt::mla_decode(params(r == 0 ? dtable0 : dtable1, half_pages, dhalf_lens, 256,
                                         dpartial.as<bf16>() + r * out_elems, dpartial_lse.as<float>() + r * lse_elems),
                                  ws.ptr, ws_bytes, nullptr);
  hipattn::MergeAttentionStatesParams m;
  m.partial_out = dpartial.ptr, m.partial_dtype = hipattn::DType::bf16;
  m.po_stride_rank = int64_t(out_elems), m.po_stride_token = int64_t(H) * DV, m.po_stride_head = DV;
  m.partial_lse = dpartial_lse.as<float>();
  m.plse_stride_rank = int64_t(lse_elems), m.plse_stride_token = H, m.plse_stride_head = 1;
  m.num_ranks = 2, m.num_tokens = T, m.num_heads = H, m.head_size = DV;
  m.out = dmerged.ptr, m.out_dtype = hipattn::DType::f32, m.o_stride_token = int64_t(H) * DV, m.o_stride_head = DV;
  m.lse = dmerged_lse.as<float>(), m.lse_stride_token = H, m.lse_stride_head = 1;
  hipattn::merge_attention_states(m, nullptr);  // throws hipattn::Error on bad params
  HIPATTN_CHECK(hipattn::rt::get_last_error());
  HIPATTN_CHECK(hipattn::rt::device_synchronize());

  // bf16 outputs (the merge's inputs too): P and O each rounded to 8 significant bits; |O| <= 1 here.
  std::vector<double> ref_lse(lse_elems);  // the reference's [H, T] as [T, H]
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < H; ++h) ref_lse[size_t(t) * H + h] = ref.lse[size_t(h) * T + t];
  const double tol = 2e-2, lse_tol = 5e-3;
  const std::vector<bf16> one = dout.to_host<bf16>();
  const std::vector<float> merged = dmerged.to_host<float>();
  std::vector<double> one_d(one.size());
  for (size_t i = 0; i < one.size(); ++i) one_d[i] = one[i].to_float();
  const double err_one = max_abs_error(one, ref.out), err_merged = max_abs_error(merged, ref.out);
  const double err_merged_one = max_abs_error(merged, one_d);
  const double err_lse = max_abs_error(dmerged_lse.to_host<float>(), ref_lse);
  const bool pass = err_one <= tol && err_merged <= tol && err_merged_one <= tol && err_lse <= lse_tol;
  std::printf(
      "mla_decode_merge: %s: max |out - float64 reference| = %.3g one call, %.3g two halves merged "
      "(%.3g from the one call; tolerance %.g); merged max |lse - reference| = %.3g (tolerance %.g); "
      "%d seqs, %d heads, bf16\n",
      pass ? "PASS" : "FAIL", err_one, err_merged, err_merged_one, tol, err_lse, lse_tol, batch, H);
  return pass ? 0 : 1;
}

}  // namespace

int main() { return example::run_example("mla_decode_merge", run); }
