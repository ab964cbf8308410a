// tests/timing/aiter_decode.cpp: AITER's decode objects on the emulator (aiter_decode.hpp says where
// each layout comes from).
#include "aiter_decode.hpp"

#include "hipattn/numeric/bf16.hpp"
#include "hipattn/numeric/fp8.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>

namespace hipattn::timing {
namespace {

// ---------------------------------------------------------------- numbers
// bf16 and fp8 through the library's own types (numeric/numeric.hpp, numeric/fp8.hpp): e4m3fnuz on
// gfx942, OCP e4m3fn on gfx950, as each target's MFMA reads them.
uint16_t bf16_bits(float f) { return bfloat16_t::from_float(f).bits; }
double bf16_value(uint16_t h) { return bfloat16_t::from_bits(h).to_float(); }
double fp8_value(uint8_t c, emu::Gfx g) {
  return g == emu::Gfx::gfx942 ? fp8_e4m3fnuz_t::from_bits(c).to_float() : fp8_e4m3fn_t::from_bits(c).to_float();
}
// The fp8 code nearest to x, never zero (the inputs must not be zeros): a value that rounds to zero
// takes the smallest code of its sign.
uint8_t fp8_code(double x, emu::Gfx g) {
  const uint8_t c = g == emu::Gfx::gfx942 ? fp8_e4m3fnuz_t::from_float(float(x)).bits : fp8_e4m3fn_t::from_float(float(x)).bits;
  if ((c & 0x7F) != 0) return c;
  return x < 0 ? 0x81 : 0x01;
}
float f32_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
constexpr uint16_t kBf16NaN = 0x7FC0;
constexpr uint32_t kF32NaN = 0x7FC00000u;

// Normal(0, 1) samples, never exactly zero after rounding to the stored type.
struct Rng {
  std::mt19937_64 gen;
  std::normal_distribution<double> nd{0.0, 1.0};
  explicit Rng(uint64_t seed) : gen(seed) {}
  double normal() {
    double x = nd(gen);
    if (std::fabs(x) < 1.0 / 64) x = x < 0 ? -1.0 / 64 : 1.0 / 64;
    return x;
  }
};

// ---------------------------------------------------------------- code objects
bool file_exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
std::vector<std::string> missing_mnemonics(const std::string& path, const std::string& symbol) {
  auto co = load_cached(path);
  std::vector<std::string> r;
  for (const std::string& m : co->mnemonics(co->kernel(symbol)))
    if (!emu::implemented(m)) r.push_back(m);
  return r;
}
// Unified VGPR + AGPR registers per lane: the descriptor's GRANULATED_WORKITEM_VGPR_COUNT
// (COMPUTE_PGM_RSRC1[5:0], granule 8 on gfx90a / gfx942 / gfx950, which count AGPRs in it).
int unified_vgprs(const emu::KernelInfo& k) { return int((k.rsrc1 & 0x3F) + 1) * 8; }

// The explicit kernel arguments of the metadata's layout (up to the end of the last one that is not
// hidden), written at byte offsets.
struct Kernarg {
  std::vector<uint8_t> bytes;
  explicit Kernarg(const emu::KernelInfo& k) {
    size_t n = 0;
    for (const emu::KernelArg& a : k.args)
      if (a.value_kind.rfind("hidden_", 0) != 0) n = std::max<size_t>(n, a.offset + a.size);
    bytes.assign(n, 0);
  }
  template <class T>
  void put(size_t off, T v) {
    if (off + sizeof(T) > bytes.size()) return;  // a field the object's layout does not have
    std::memcpy(bytes.data() + off, &v, sizeof(T));
  }
};

// Element comparison against the float64 reference: |got - ref| <= atol + rtol * mag, where mag bounds
// the error's scale: for an attention output element, sum_j p_j |v_j| / sum_j p_j (the rounding of the
// probabilities p_j to the MFMA's input type errs by a fraction of each term, whatever the cancellation
// between terms); for an LSE, 1 + |lse|. NaN (never written) is always bad.
struct Checker {
  KernelRun& run;
  double atol, rtol;
  void operator()(double got, double ref, double mag, const std::string& what) {
    ++run.compared;
    const double err = std::fabs(got - ref);
    const bool ok = !std::isnan(got) && err <= atol + rtol * mag;
    if (!std::isnan(got)) {
      run.max_abs_err = std::max(run.max_abs_err, err);
      if (std::fabs(ref) > 1e-3) run.max_rel_err = std::max(run.max_rel_err, err / std::fabs(ref));
    }
    if (!ok) {
      if (run.bad == 0) {
        std::ostringstream o;
        o << what << ": got " << got << ", expected " << ref << " (tolerance " << atol << " + " << rtol << " * "
          << mag << ")";
        run.detail = o.str();
      }
      ++run.bad;
    }
  }
};

int seq_len(int ctx, int b) { return std::max(1, ctx - (b % 3) * 5); }

}  // namespace

// ================================================================ MLA
std::vector<AiterMlaKernel> aiter_mla_kernels() {
  static std::vector<AiterMlaKernel> list;
  static bool done = false;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (done) return list;
  done = true;
  const std::string dir = calibration_dir();
  if (dir.empty()) return list;
  struct Row {
    const char* gfx;
    const char* obj;
    const char* sym;
    bool fp8;
    int heads, q_len;
  };
  // AITER's mla_asm.csv rows of these objects (qType/kvType, Gqa, qSeqLen; m16x4: seqlen up to 4).
  static const Row rows[] = {
      {"gfx942", "mla_a16w16_qh16_m16x4_n16x1_coex0_mask1_ps", "_ZN5aiter42mla_a16w16_qh16_m16x4_n16x1_coex0_mask1_psE", false, 16, 4},
      {"gfx950", "mla_a16w16_qh16_m16x4_n16x1_coex0_mask1_ps", "_ZN5aiter42mla_a16w16_qh16_m16x4_n16x1_coex0_mask1_psE", false, 16, 4},
      {"gfx950", "mla_a16w16_qh64_qseqlen1_gqaratio64_v3_ps", "_ZN5aiter41mla_a16w16_qh64_qseqlen1_gqaratio64_v3_psE", false, 64, 1},
      {"gfx942", "mla_a8w8_qh16_qseqlen1_gqaratio16_ps", "_ZN5aiter36mla_a8w8_qh16_qseqlen1_gqaratio16_psE", true, 16, 1},
      {"gfx950", "mla_a8w8_qh16_qseqlen1_gqaratio16_ps", "_ZN5aiter36mla_a8w8_qh16_qseqlen1_gqaratio16_psE", true, 16, 1},
      {"gfx942", "mla_a8w8_qh64_qseqlen1_gqaratio64_v3_ps", "_ZN5aiter39mla_a8w8_qh64_qseqlen1_gqaratio64_v3_psE", true, 64, 1},
  };
  for (const Row& r : rows) {
    AiterMlaKernel k;
    k.file = dir + "/aiter/" + r.gfx + "/" + r.obj + ".co";
    if (!file_exists(k.file)) continue;
    k.symbol = r.sym;
    k.name = std::string(r.gfx) + "/" + r.obj;
    k.gfx = std::string(r.gfx) == "gfx942" ? emu::Gfx::gfx942 : emu::Gfx::gfx950;
    k.fp8 = r.fp8;
    k.q_heads = r.heads;
    k.q_len = r.q_len;
    k.missing = missing_mnemonics(k.file, k.symbol);
    list.push_back(k);
  }
  return list;
}

// The persistent schedule of AITER's v1.2 metadata generator (csrc/kernels/mla/metadata/v1_2_device.cuh,
// kn_get_mla_metadata_v1_2, as op_tests/test_mla_persistent.py calls it: fast_mode, page size 1,
// kv_granularity max(page, 16) = 16, max_split_per_batch 32), for the cases these objects take: one KV
// head, every sequence with the same query length, heads * q_len <= the packed tile (no query split),
// no sparsity, no head folding (qk_batch_ratio 1). The rule, in units of G = 16-token KV blocks:
//   * each sequence costs ceil(kv_len / G) + OH blocks, OH = max(1, ceil(16 / page)) = 16 (a fixed
//     overhead per work item); the `num_splits` = min(num_cus, 32 * batch) parts each get a payload of
//     ceil(total cost / num_splits) + OH;
//   * CUs are filled in order (cid 0, 1, ...), sequences in order: a CU takes a whole remaining sequence
//     when it fits its remaining payload (the work item is final, partial_qo_loc = -1, unless the
//     sequence was split before: then it is the last split); otherwise, when more than OH is left, it
//     takes payload - OH blocks of it as a split (a partial work item, partial_qo_loc = the next q_len
//     rows of the partial buffers) and the next CU continues; a remainder shorter than the query length
//     (tail_done_threshold = max_seqlen_q) is never left alone: it joins the current split;
//   * kv_offset = tokens of the sequence after the item's kv_end (the causal mask of the query tokens);
//   * each split sequence gets one reduce tile: reduce_final_map = its (qo_start, qo_end),
//     reduce_partial_map = the first partial row of each of its splits in order.
MlaSchedule aiter_mla_schedule(const AiterMlaKernel& k, const MlaShape& s, int num_cus) {
  (void)k;
  if (s.page_size != 1) throw std::invalid_argument("MLA: these objects take page size 1 only");
  if (num_cus < 1 || s.batch < 1 || s.q_len < 1) throw std::invalid_argument("MLA: empty shape");
  const int G = 16, OH = std::max(1, (16 + s.page_size - 1) / s.page_size);
  const int tail_threshold = s.q_len;
  const int B = s.batch;
  std::vector<int> kv_len(B);
  for (int b = 0; b < B; ++b) kv_len[b] = seq_len(s.ctx, b);
  auto blocks = [&](int n) { return (n + G - 1) / G; };
  long sum_blocks = 0;
  for (int b = 0; b < B; ++b) sum_blocks += blocks(kv_len[b]) + OH;
  const int num_splits = std::min(num_cus, 32 * B);
  const int payload = int((sum_blocks + num_splits - 1) / num_splits) + OH;

  MlaSchedule out;
  out.work_indptr.assign(num_cus + 1, 0);
  out.reduce_indptr.push_back(0);
  int curr_batch = 0, curr_kv_block = 0, curr_n_split = 0;
  int curr_kv_begin = 0, curr_kv_end = kv_len[0];
  int partial_idx = 0, last_reduce = 0;
  bool tail_done = false;
  const int qts = s.q_len;  // qo tile size (one tile per sequence)
  for (int cid = 0; cid < num_cus; ++cid) {
    int remain = payload;
    while (curr_batch < B) {
      const int curr_kv_len = curr_kv_end - curr_kv_begin;
      const int remain_blocks = blocks(curr_kv_len) - curr_kv_block;
      MlaWork w{};
      w.batch = curr_batch;
      w.qo_start = curr_batch * s.q_len;
      w.qo_end = w.qo_start + s.q_len;
      w.kv_start = curr_kv_begin + curr_kv_block * G;
      if (remain >= remain_blocks + OH || tail_done) {
        w.kv_end = std::min(w.kv_start + remain_blocks * G, curr_kv_end);
        w.kv_offset = curr_kv_end - w.kv_end;
        if (curr_n_split > 0) {
          const int n = curr_n_split + 1;
          w.partial_qo_loc = partial_idx;
          for (int i = 0; i < n; ++i) out.reduce_partial_map.push_back(partial_idx - (curr_n_split - i) * qts);
          out.reduce_final_map.push_back(w.qo_start);
          out.reduce_final_map.push_back(w.qo_end);
          partial_idx += qts;
          last_reduce += n;
          out.reduce_indptr.push_back(last_reduce);
        } else {
          w.partial_qo_loc = -1;
        }
        out.works.push_back(w);
        remain -= remain_blocks + OH;
        ++curr_batch;
        if (curr_batch < B) {
          curr_kv_begin = curr_kv_end;
          curr_kv_end = curr_kv_begin + kv_len[curr_batch];
        }
        curr_kv_block = 0;
        curr_n_split = 0;
        tail_done = false;
      } else {
        if (remain > OH) {
          const int consuming = remain - OH;
          w.kv_end = std::min(w.kv_start + consuming * G, curr_kv_end);
          if (curr_kv_end - w.kv_end < tail_threshold) {
            tail_done = true;  // the rest goes to this CU as the last split (the branch above)
          } else {
            w.kv_offset = curr_kv_end - w.kv_end;
            w.partial_qo_loc = partial_idx;
            out.works.push_back(w);
            partial_idx += qts;
            curr_kv_block += consuming;
            ++curr_n_split;
          }
        }
        if (!tail_done) break;
      }
    }
    out.work_indptr[cid + 1] = int(out.works.size());
  }
  if (curr_batch < B) throw std::logic_error("MLA schedule: sequences left after the last CU");
  out.partial_rows = partial_idx;
  return out;
}

std::vector<int> aiter_mla_work(const AiterMlaKernel& k, const MlaShape& s, int num_cus) {
  const MlaSchedule sch = aiter_mla_schedule(k, s, num_cus);
  std::vector<int> r(num_cus, 0);
  for (int c = 0; c < num_cus; ++c)
    for (int i = sch.work_indptr[c]; i < sch.work_indptr[c + 1]; ++i)
      r[c] += (sch.works[i].kv_end - sch.works[i].kv_start + 15) / 16;
  return r;
}

KernelRun run_aiter_mla(const AiterMlaKernel& k, const MlaShape& s, int num_cus, uint64_t seed,
                        const emu::LaunchOptions& opt, bool check) {
  constexpr int D = 576, DV = 512;
  if (s.heads != k.q_heads)
    throw std::invalid_argument(k.name + " takes " + std::to_string(k.q_heads) + " query heads");
  if (s.q_len > k.q_len)
    throw std::invalid_argument(k.name + " takes at most " + std::to_string(k.q_len) + " query tokens");
  auto co = load_cached(k.file);
  const emu::KernelInfo& ki = co->kernel(k.symbol);
  const MlaSchedule sch = aiter_mla_schedule(k, s, num_cus);
  const int B = s.batch, H = s.heads, QL = s.q_len;
  const int total_q = B * QL;

  KernelRun run;
  {
    std::ostringstream o;
    o << "aiter " << k.name << " b" << B << " h" << H << " q" << QL << " ctx" << s.ctx << " cus" << num_cus;
    run.label = o.str();
  }
  run.grid = {uint32_t(num_cus), 1, 1};
  run.block = {256, 1, 1};
  run.lds_bytes = ki.group_segment_fixed_size;
  run.vgprs = unified_vgprs(ki);

  // ---- sequences, pages (page size 1: one token per page, scattered at random)
  std::vector<int> kv_len(B), qo_indptr(B + 1, 0), kv_indptr(B + 1, 0);
  for (int b = 0; b < B; ++b) {
    kv_len[b] = seq_len(s.ctx, b);
    qo_indptr[b + 1] = qo_indptr[b] + QL;
    kv_indptr[b + 1] = kv_indptr[b] + kv_len[b];
  }
  const int total_kv = kv_indptr[B];
  const int num_pages = total_kv + 7;
  Rng rng(seed);
  std::vector<int> pages(num_pages);
  std::iota(pages.begin(), pages.end(), 0);
  std::shuffle(pages.begin(), pages.end(), rng.gen);
  pages.resize(total_kv);
  std::vector<int> last_page_lens(B, 1);

  // ---- inputs: Q [total_q, H, 576], KV [num_pages, 576] (bf16, or fp8 with per-tensor scales)
  const size_t nq = size_t(total_q) * H * D, nkv = size_t(num_pages) * D;
  std::vector<double> qv(nq), kvv(nkv);  // the values the kernel sees (after scales)
  std::vector<uint16_t> q16, kv16;
  std::vector<uint8_t> q8, kv8;
  const float q_scale = 0.75f, kv_scale = 1.25f;  // AITER's launcher passes pointers to fp32 scalars
  if (k.fp8) {
    q8.resize(nq);
    kv8.resize(nkv);
    for (size_t i = 0; i < nq; ++i) {
      q8[i] = fp8_code(2.0 * rng.normal(), k.gfx);
      qv[i] = fp8_value(q8[i], k.gfx) * double(q_scale);
    }
    for (size_t i = 0; i < nkv; ++i) {
      kv8[i] = fp8_code(2.0 * rng.normal(), k.gfx);
      kvv[i] = fp8_value(kv8[i], k.gfx) * double(kv_scale);
    }
  } else {
    q16.resize(nq);
    kv16.resize(nkv);
    for (size_t i = 0; i < nq; ++i) {
      q16[i] = bf16_bits(float(rng.normal()));
      qv[i] = bf16_value(q16[i]);
    }
    for (size_t i = 0; i < nkv; ++i) {
      kv16[i] = bf16_bits(float(rng.normal()));
      kvv[i] = bf16_value(kv16[i]);
    }
  }
  const float softmax_scale = float(1.0 / std::sqrt(double(D)));
  const double p_floor = k.fp8 ? 1.0 / 64 : 0.0;  // see the tolerances below

  // ---- device buffers
  emu::Memory mem;
  const uint64_t d_q = k.fp8 ? mem.upload(q8, "Q") : mem.upload(q16, "Q");
  const uint64_t d_kv = k.fp8 ? mem.upload(kv8, "KV") : mem.upload(kv16, "KV");
  const uint64_t d_qo = mem.upload(qo_indptr, "qo_indptr");
  const uint64_t d_kvp = mem.upload(kv_indptr, "kv_indptr");
  const uint64_t d_pages = mem.upload(pages, "kv_page_indices");
  const uint64_t d_lpl = mem.upload(last_page_lens, "kv_last_page_lens");
  std::vector<int32_t> work_info;
  for (const MlaWork& w : sch.works)
    for (int v : {w.batch, w.partial_qo_loc, w.qo_start, w.qo_end, w.kv_start, w.kv_end, w.kv_offset, 0})
      work_info.push_back(v);
  const uint64_t d_windptr = mem.upload(sch.work_indptr, "work_indptr");
  const uint64_t d_winfo = mem.upload(work_info, "work_info_set");
  std::vector<uint64_t> meta(10, 0);
  meta[0] = d_windptr;
  meta[1] = d_winfo;
  const uint64_t d_meta = mem.upload(meta, "work_meta_data");
  const int prows = std::max(1, sch.partial_rows);
  const uint64_t d_o = mem.upload(std::vector<uint16_t>(size_t(total_q) * H * DV, kBf16NaN), "output");
  const uint64_t d_r = mem.upload(std::vector<uint32_t>(size_t(prows) * H * DV, kF32NaN), "partial output");
  const uint64_t d_lse = mem.upload(std::vector<uint32_t>(size_t(prows) * H, kF32NaN), "partial lse");
  const uint64_t d_qs = mem.upload(std::vector<float>{q_scale}, "q_scale");
  const uint64_t d_kvs = mem.upload(std::vector<float>{kv_scale}, "kv_scale");

  // ---- kernel arguments (asm_mla.cu KernelArgs; every field padded to 16 bytes)
  Kernarg ka(ki);
  const int bpe = k.fp8 ? 1 : 2;
  ka.put<uint64_t>(0, d_r);          // ptr_R: split partial output
  ka.put<uint64_t>(16, d_lse);       // ptr_LSE: split partial LSE
  ka.put<uint64_t>(32, d_q);         // ptr_Q
  ka.put<uint64_t>(48, d_kv);        // ptr_KV
  ka.put<uint64_t>(64, d_kvp);       // ptr_LTP: kv_indptr
  ka.put<uint64_t>(80, d_pages);     // ptr_LTD: kv_page_indices
  ka.put<uint64_t>(96, d_lpl);       // ptr_LTL: kv_last_page_lens
  ka.put<float>(112, softmax_scale); // scalar
  ka.put<uint32_t>(128, uint32_t(H * QL));            // s_MQA = gqa_ratio * max_seqlen_q (qh16 objects
                                                      // overwrite it with 16)
  ka.put<uint32_t>(144, 1);                           // s_kv_split (splitData.size(1) = 1 when persistent)
  ka.put<uint32_t>(160, uint32_t(H * D * bpe * QL));  // s_Q_Bs = Q.stride(0) * elem * max_seqlen_q
  ka.put<uint32_t>(176, uint32_t(s.page_size * D * bpe));  // s_Bs: bytes per page
  ka.put<uint32_t>(192, 0);                           // s_log2_plen
  ka.put<uint64_t>(208, d_qo);       // ptr_QTP: qo_indptr
  ka.put<uint64_t>(224, d_meta);     // ptr_STP: {work_indptr, work_info_set}
  ka.put<uint64_t>(240, d_o);        // ptr_RP: final output
  ka.put<uint64_t>(256, d_qs);       // ptr_QSCALE
  ka.put<uint64_t>(272, d_kvs);      // ptr_KVSCALE
  ka.put<uint32_t>(288, 1);          // out_16_nosplit = kv_split
  ka.put<uint64_t>(304, 0);          // ptr_LSEP: no final LSE
  ka.put<uint64_t>(320, d_kvp);      // g_kv_indptr (global = local without context parallelism)
  ka.put<uint32_t>(336, 1);          // cp_world_size
  ka.put<uint32_t>(352, 0);          // cp_rank

  run.stats = emu::launch(*co, ki, run.grid, run.block, 0, ka.bytes.data(), ka.bytes.size(), mem, opt);
  if (!check) return run;
  run.checked = true;

  // ---- float64 reference: scores of every (token, head, position), mask bottom-right causal
  // Token t of sequence b (i = t - qo_start) sees positions j <= kv_len - q_len + i.
  const auto out16 = mem.download<uint16_t>(d_o, size_t(total_q) * H * DV);
  const auto part = mem.download<uint32_t>(d_r, size_t(prows) * H * DV);
  const auto plse = mem.download<uint32_t>(d_lse, size_t(prows) * H);
  // score(t, h, j) for j in [0, kv_len(b)), b = t / QL
  auto score = [&](int t, int h, int j) {
    const int b = t / QL;
    const double* q = &qv[(size_t(t) * H + h) * D];
    const double* kr = &kvv[size_t(pages[kv_indptr[b] + j]) * D];
    double acc = 0;
    for (int d = 0; d < D; ++d) acc += q[d] * kr[d];
    return acc * double(softmax_scale);
  };
  // softmax over [j0, j1) (batch-local positions) of token t, head h: out[DV] and lse
  auto attend = [&](int t, int h, int j0, int j1, std::vector<double>& o, std::vector<double>& mag, double& lse) {
    const int b = t / QL, i = t - b * QL;
    const int last = kv_len[b] - QL + i;
    j1 = std::min(j1, last + 1);
    std::vector<double> sc(std::max(0, j1 - j0));
    double m = -INFINITY;
    for (int j = j0; j < j1; ++j) m = std::max(m, sc[j - j0] = score(t, h, j));
    o.assign(DV, 0.0);
    mag.assign(DV, 0.0);
    double l = 0;
    for (int j = j0; j < j1; ++j) {
      const double p = std::exp(sc[j - j0] - m);
      l += p;
      const double* v = &kvv[size_t(pages[kv_indptr[b] + j]) * D];
      for (int d = 0; d < DV; ++d) {
        o[d] += p * v[d];
        mag[d] += (p + p_floor) * std::fabs(v[d]);
      }
    }
    for (int d = 0; d < DV; ++d) {
      o[d] /= l;
      mag[d] /= l;
    }
    lse = m + std::log(l);
  };

  // Tolerances, relative to the magnitude sum_j (p_j + p_floor) |v_j| / sum_j p_j (Checker). bf16
  // objects: P is rounded to bf16 for the PV MFMA (2^-9 relative each, 2^-8 if truncated) and the final
  // output to bf16 (2^-9): rtol 2^-7, p_floor 0. fp8 objects: Q, K, V are exact fp8 values (the
  // reference uses them); P (<= 1) goes through fp8 e4m3: 3 mantissa bits (2^-4 relative) and, below
  // 2^-6 / 2^-7, subnormal steps of 2^-9 (gfx950 e4m3fn; 2^-10 on gfx942): rtol 2^-3, p_floor 2^-6
  // (2^-3 * 2^-6 = 2^-9: a whole subnormal step per term). atol 1e-6 for the f32 accumulation. The partial
  // LSE (f32 arithmetic, no P rounding): 1e-4 * (1 + |lse|).
  const double rtol = k.fp8 ? 1.0 / 8 : 1.0 / 128;
  Checker out_check{run, 1e-6, rtol};
  Checker lse_check{run, 0.0, 1e-4};

  // partial work items: partial output and LSE against the split's own softmax
  std::vector<double> o, mag;
  double lse;
  for (const MlaWork& w : sch.works) {
    if (w.partial_qo_loc < 0) continue;
    const int b = w.batch;
    for (int t = w.qo_start; t < w.qo_end; ++t) {
      const int row = w.partial_qo_loc + (t - w.qo_start);
      for (int h = 0; h < H; ++h) {
        attend(t, h, w.kv_start - kv_indptr[b], w.kv_end - kv_indptr[b], o, mag, lse);
        const size_t base = (size_t(row) * H + h) * DV;
        for (int d = 0; d < DV; ++d)
          out_check(f32_of(part[base + d]), o[d], mag[d],
                    "partial row " + std::to_string(row) + " head " + std::to_string(h) + " d " + std::to_string(d));
        lse_check(f32_of(plse[size_t(row) * H + h]), lse, 1 + std::fabs(lse),
                  "partial LSE row " + std::to_string(row) + " head " + std::to_string(h));
      }
    }
  }
  // final output: the kernel's rows for unsplit sequences; for split ones the host merge (float64) of
  // the kernel's partials, as AITER's mla_reduce_v1 does: o = sum_i exp(lse_i - max) o_i / sum_i exp(..)
  std::vector<double> final_out(size_t(total_q) * H * DV);
  for (size_t i = 0; i < final_out.size(); ++i) final_out[i] = bf16_value(out16[i]);
  for (size_t tile = 0; tile + 1 < sch.reduce_indptr.size(); ++tile) {
    const int p0 = sch.reduce_indptr[tile], p1 = sch.reduce_indptr[tile + 1];
    const int qs = sch.reduce_final_map[2 * tile], qe = sch.reduce_final_map[2 * tile + 1];
    for (int t = qs; t < qe; ++t)
      for (int h = 0; h < H; ++h) {
        double m = -INFINITY;
        for (int p = p0; p < p1; ++p)
          m = std::max(m, double(f32_of(plse[size_t(sch.reduce_partial_map[p] + t - qs) * H + h])));
        std::vector<double> acc(DV, 0.0);
        double l = 0;
        for (int p = p0; p < p1; ++p) {
          const size_t row = size_t(sch.reduce_partial_map[p] + t - qs);
          const double wgt = std::exp(double(f32_of(plse[row * H + h])) - m);
          l += wgt;
          for (int d = 0; d < DV; ++d) acc[d] += wgt * double(f32_of(part[(row * H + h) * DV + d]));
        }
        for (int d = 0; d < DV; ++d) final_out[(size_t(t) * H + h) * DV + d] = acc[d] / l;
      }
  }
  for (int t = 0; t < total_q; ++t) {
    const int b = t / QL;
    for (int h = 0; h < H; ++h) {
      attend(t, h, 0, kv_len[b], o, mag, lse);
      for (int d = 0; d < DV; ++d)
        out_check(final_out[(size_t(t) * H + h) * DV + d], o[d], mag[d],
                  "output token " + std::to_string(t) + " head " + std::to_string(h) + " d " + std::to_string(d));
    }
  }
  return run;
}

// ================================================================ PA
std::vector<AiterPaKernel> aiter_pa_kernels() {
  static std::vector<AiterPaKernel> list;
  static bool done = false;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (done) return list;
  done = true;
  const std::string dir = calibration_dir();
  if (dir.empty()) return list;
  for (const char* gfx : {"gfx942", "gfx950"}) {
    AiterPaKernel k;
    k.file = dir + "/aiter/" + gfx + "/pa_bf16_noquant_gqa8_1tg_4w.co";
    if (!file_exists(k.file)) continue;
    k.symbol = "_ZN5aiter27pa_bf16_noquant_gqa8_1tg_4wE";
    k.name = std::string(gfx) + "/pa_bf16_noquant_gqa8_1tg_4w";
    k.gfx = std::string(gfx) == "gfx942" ? emu::Gfx::gfx942 : emu::Gfx::gfx950;
    k.missing = missing_mnemonics(k.file, k.symbol);
    list.push_back(k);
  }
  return list;
}

std::vector<int> aiter_pa_work(const AiterPaKernel& k, const PaShape& s) {
  std::vector<int> r;
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.heads_kv; ++h) r.push_back((seq_len(s.ctx, b) + k.block_size - 1) / k.block_size);
  return r;
}

KernelRun run_aiter_pa(const AiterPaKernel& k, const PaShape& s, uint64_t seed, const emu::LaunchOptions& opt,
                       bool check) {
  const int D = k.head_dim, BS = k.block_size;
  if (s.heads_kv < 1 || s.heads_q != s.heads_kv * k.gqa)
    throw std::invalid_argument(k.name + " takes " + std::to_string(k.gqa) + " query heads per KV head");
  if (s.page_size != BS) throw std::invalid_argument(k.name + " takes pages of " + std::to_string(BS) + " tokens");
  auto co = load_cached(k.file);
  const emu::KernelInfo& ki = co->kernel(k.symbol);
  const int B = s.batch, HQ = s.heads_q, HK = s.heads_kv;
  KernelRun run;
  {
    std::ostringstream o;
    o << "aiter " << k.name << " b" << B << " h" << HQ << "/" << HK << " ctx" << s.ctx;
    run.label = o.str();
  }
  run.grid = {uint32_t(HK), uint32_t(B), 1};
  run.block = {256, 1, 1};
  run.lds_bytes = ki.group_segment_fixed_size;
  run.vgprs = unified_vgprs(ki);

  Rng rng(seed);
  std::vector<int> ctx(B), npages(B);
  int mblk = 0, total_pages = 0;
  for (int b = 0; b < B; ++b) {
    ctx[b] = seq_len(s.ctx, b);
    npages[b] = (ctx[b] + BS - 1) / BS;
    mblk = std::max(mblk, npages[b]);
    total_pages += npages[b];
  }
  const int num_blocks = total_pages + 3;
  std::vector<int> perm(num_blocks);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng.gen);
  std::vector<int> bt(size_t(B) * mblk, 0);
  for (int b = 0, n = 0; b < B; ++b)
    for (int p = 0; p < npages[b]; ++p) bt[size_t(b) * mblk + p] = perm[n++];

  // Q [B, HQ, D]; K [blocks, HK, D/8, BS, 8]; V [blocks, HK, BS/8, D, 8] (bf16, x = 16 bytes / 2)
  const int X = 8;
  std::vector<uint16_t> q16(size_t(B) * HQ * D), k16(size_t(num_blocks) * HK * D * BS), v16(k16.size());
  for (auto& x : q16) x = bf16_bits(float(rng.normal()));
  for (auto& x : k16) x = bf16_bits(float(rng.normal()));
  for (auto& x : v16) x = bf16_bits(float(rng.normal()));
  auto kval = [&](int blk, int h, int tok, int d) {
    return bf16_value(k16[((((size_t(blk) * HK + h) * (D / X) + d / X) * BS + tok) * X) + d % X]);
  };
  auto vval = [&](int blk, int h, int tok, int d) {
    return bf16_value(v16[((((size_t(blk) * HK + h) * (BS / X) + tok / X) * D + d) * X) + tok % X]);
  };

  emu::Memory mem;
  const uint64_t d_o = mem.upload(std::vector<uint16_t>(size_t(B) * HQ * D, kBf16NaN), "output");
  const uint64_t d_q = mem.upload(q16, "Q");
  const uint64_t d_k = mem.upload(k16, "K");
  const uint64_t d_v = mem.upload(v16, "V");
  const uint64_t d_bt = mem.upload(bt, "block_tables");
  const uint64_t d_cl = mem.upload(ctx, "context_lens");
  const float sclg2e = float(std::log2(std::exp(1.0)) / std::sqrt(double(D)));

  Kernarg ka(ki);
  ka.put<uint64_t>(0, d_o);
  ka.put<uint64_t>(16, d_q);
  ka.put<uint64_t>(32, d_k);
  ka.put<uint64_t>(48, d_v);
  ka.put<uint64_t>(64, d_bt);
  ka.put<uint64_t>(80, d_cl);
  ka.put<uint64_t>(96, 0);                                    // KQ: no quantization
  ka.put<uint64_t>(112, 0);                                   // VQ
  ka.put<float>(128, sclg2e);                                 // log2(e) / sqrt(d)
  ka.put<uint32_t>(144, uint32_t(mblk));                      // block_tables.stride(0)
  ka.put<uint32_t>(160, uint32_t(HK));                        // kv heads
  ka.put<uint32_t>(176, uint32_t(HQ * D * 2));                // Qs: Q.stride(0) bytes
  ka.put<uint32_t>(192, uint32_t(HK * D * BS * 2));           // Bs: bytes per cache block
  ka.put<uint32_t>(208, uint32_t(D * BS * 2));                // KVs: bytes per KV head of a block
  ka.put<uint32_t>(224, 0);                                   // mtp (one query token)
  ka.put<uint32_t>(240, uint32_t(k.gqa));                     // GQA
  ka.put<uint64_t>(256, 0);                                   // QTP: no qo_indptr

  run.stats = emu::launch(*co, ki, run.grid, run.block, 0, ka.bytes.data(), ka.bytes.size(), mem, opt);
  if (!check) return run;
  run.checked = true;

  // Tolerances (bf16, relative to sum_j p_j |v_j| / sum_j p_j as for MLA): P rounded to bf16 before the
  // PV MFMA and the output rounded to bf16: rtol 2^-7, atol 1e-6.
  Checker chk{run, 1e-6, 1.0 / 128};
  const auto out = mem.download<uint16_t>(d_o, size_t(B) * HQ * D);
  const double scale = 1.0 / std::sqrt(double(D));
  for (int b = 0; b < B; ++b)
    for (int hq = 0; hq < HQ; ++hq) {
      const int hk = hq / k.gqa;
      std::vector<double> sc(ctx[b]);
      double m = -INFINITY;
      for (int j = 0; j < ctx[b]; ++j) {
        const int blk = bt[size_t(b) * mblk + j / BS], tok = j % BS;
        double acc = 0;
        for (int d = 0; d < D; ++d) acc += bf16_value(q16[(size_t(b) * HQ + hq) * D + d]) * kval(blk, hk, tok, d);
        sc[j] = acc * scale;
        m = std::max(m, sc[j]);
      }
      std::vector<double> o(D, 0.0), mag(D, 0.0);
      double l = 0;
      for (int j = 0; j < ctx[b]; ++j) {
        const double p = std::exp(sc[j] - m);
        l += p;
        const int blk = bt[size_t(b) * mblk + j / BS], tok = j % BS;
        for (int d = 0; d < D; ++d) {
          const double v = vval(blk, hk, tok, d);
          o[d] += p * v;
          mag[d] += p * std::fabs(v);
        }
      }
      for (int d = 0; d < D; ++d)
        chk(bf16_value(out[(size_t(b) * HQ + hq) * D + d]), o[d] / l, mag[d] / l,
            "output seq " + std::to_string(b) + " head " + std::to_string(hq) + " d " + std::to_string(d));
    }
  return run;
}

}  // namespace hipattn::timing
