"""torch.ops.hipattn on the GPU: every op against a float64 PyTorch reference written here from the
attention definition (ALGORITHM.md section 2's order: scale, softcap, mask, ALiBi, QQ-bias; sinks in the
denominator), CUDA graph capture and replay with new inputs, a torch.compile(fullgraph=True) caller, and
bad inputs raising with the argument's name.

Inputs are fresh uniform random numbers in [-1, 1]; outputs are NaN-poisoned before every call, so
every element must be written. Runs under pytest (python3 -m pytest bindings/torch/tests/test_ops.py)
or, without pytest, under run_tests.sh's runner (the `parametrize` shim below records the cases).
"""
import itertools
import os
import sys

import torch

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

try:
    import pytest

    parametrize = pytest.mark.parametrize
except ImportError:  # run_tests.sh's runner reads __hipattn_params__
    pytest = None

    def parametrize(name, values, ids=None):
        def deco(fn):
            fn.__hipattn_params__ = (name, list(values), ids)
            return fn
        return deco


class Skip(Exception):
    pass


def skip(reason):
    if pytest is not None:
        pytest.skip(reason)
    raise Skip(reason)


HAVE_GPU = torch.cuda.is_available()
ht = None
if HAVE_GPU:
    import hipattn_torch as ht  # noqa: E402

DEV = "cuda"
F64 = torch.float64
ATOL = {torch.float16: 6e-3, torch.bfloat16: 2.5e-2, torch.float32: 1e-4}
LSE_ATOL = 5e-3


def need_gpu():
    if not HAVE_GPU:
        skip("no CUDA device")


def rand(*shape, dtype=torch.float32):
    """Uniform in [-1, 1], never all zeros."""
    return (torch.rand(*shape, device=DEV, dtype=torch.float32) * 2 - 1).to(dtype)


def poison(*ts):
    for t in ts:
        if t is not None:
            t.fill_(float("nan"))


def check_close(name, actual, expected, atol):
    a = actual.to(F64)
    assert torch.isfinite(a).all(), f"{name}: non-finite elements (unwritten or NaN): {(~torch.isfinite(a)).sum().item()}"
    err = (a - expected).abs().max().item()
    assert err <= atol, f"{name}: max |actual - reference| = {err:.3g} > {atol:.3g}"


def check_lse(name, actual, expected):
    a = actual.to(F64)
    fin = torch.isfinite(expected)
    assert torch.equal(torch.isfinite(a), fin), f"{name}: finite pattern differs from the reference"
    assert (a[~fin] == expected[~fin]).all(), f"{name}: -inf entries differ"
    if fin.any():
        err = (a[fin] - expected[fin]).abs().max().item()
        assert err <= LSE_ATOL + 1e-3 * expected[fin].abs().max().item(), f"{name}: max |lse - reference| = {err:.3g}"


# ---- the reference: one sequence, float64 ----------------------------------------------------
def ref_sequence(Q, K, V, scale, causal=True, window_left=-1, softcap=0.0, alibi=None, sinks=None, qq_bias=None):
    """Q [lq, hq, d], K [lk, hk, d], V [lk, hk, dv] (float64) -> O [lq, hq, dv], LSE [hq, lq]."""
    lq, hq, _ = Q.shape
    lk, hk, dv = V.shape
    g = hq // hk
    K = K.repeat_interleave(g, dim=1)
    V = V.repeat_interleave(g, dim=1)
    S = scale * torch.einsum("ihd,jhd->hij", Q, K)
    if softcap > 0:
        S = softcap * torch.tanh(S / softcap)
    pos = torch.arange(lq, device=Q.device) + (lk - lq)
    j = torch.arange(lk, device=Q.device)
    visible = torch.ones(lq, lk, dtype=torch.bool, device=Q.device)
    if causal:
        visible &= j[None, :] <= pos[:, None]
    if window_left >= 0:
        visible &= j[None, :] >= pos[:, None] - window_left
    if alibi is not None:
        S = S + alibi.to(F64)[:, None, None] * (j[None, None, :] - pos[None, :, None]).to(F64)
    if qq_bias is not None:
        r = j - (lk - lq)
        ok = (r >= 0) & (r < qq_bias.shape[1])
        bias = torch.zeros(lq, lk, dtype=F64, device=Q.device)
        bias[:, ok] = qq_bias.to(F64)[:lq][:, r[ok]]
        S = S + bias[None]
    S = S.masked_fill(~visible[None], float("-inf"))
    if sinks is not None:
        S = torch.cat([S, sinks.to(F64)[:, None, None].expand(hq, lq, 1)], dim=-1)
    m = S.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    e = torch.exp(S - m)
    den = e.sum(dim=-1, keepdim=True)
    lse = (torch.log(den) + m).squeeze(-1)  # log 0 = -inf
    P = torch.where(den > 0, e / den, torch.zeros_like(e))[..., :lk]
    O = torch.einsum("hij,jhd->ihd", P, V)
    return O, lse


def cumulative(lens):
    """cu_seqlens: [0, l0, l0 + l1, ...] as int32 on the device."""
    return torch.tensor([0] + list(itertools.accumulate(lens)), dtype=torch.int32, device=DEV)


def gather_pages(cache, table_row, n):
    """The first n slots of a sequence from a paged cache [num_blocks, block_size, ...] (logical view)."""
    bs = cache.shape[1]
    nb = (n + bs - 1) // bs
    return cache[table_row[:nb].long()].reshape(nb * bs, *cache.shape[2:])[:n]


def make_block_table(kv_lens, bs, num_blocks, width=None):
    """A shuffled block table; entries past a sequence's blocks hold an out-of-range index (never read)."""
    need = sum((n + bs - 1) // bs for n in kv_lens)
    assert need <= num_blocks
    perm = torch.randperm(num_blocks, device=DEV).to(torch.int32)
    width = width or max(1, max((n + bs - 1) // bs for n in kv_lens))
    table = torch.full((len(kv_lens), width), num_blocks + 1000, dtype=torch.int32, device=DEV)
    nxt = 0
    for s, n in enumerate(kv_lens):
        nb = (n + bs - 1) // bs
        table[s, :nb] = perm[nxt:nxt + nb]
        nxt += nb
    return table


def poison_cache_tails(cache, table, kv_lens):
    """NaN in the unused slots of each sequence's last block: a kernel must never read them."""
    bs = cache.shape[1]
    for s, n in enumerate(kv_lens):
        if n % bs:
            cache[table[s, n // bs].long(), n % bs:] = float("nan")


# ================================ unified attention ================================
UNIFIED_CASES = [
    dict(name="bf16_d128_gqa_bs16", dtype=torch.bfloat16, d=128, hq=8, hk=2, bs=16, q_lens=[1, 37, 1, 5], kv_lens=[200, 37, 1, 90]),
    dict(name="f16_d64_bs64_window_softcap", dtype=torch.float16, d=64, hq=4, hk=4, bs=64, q_lens=[17, 1, 3], kv_lens=[300, 129, 3],
         window=31, softcap=20.0),
    dict(name="bf16_d256_sinks_alibi_qq", dtype=torch.bfloat16, d=256, hq=4, hk=1, bs=16, q_lens=[9, 4], kv_lens=[40, 70],
         sinks=True, alibi=True, qq=True),
    dict(name="bf16_fp8_per_tensor_bs64", dtype=torch.bfloat16, d=128, hq=8, hk=1, bs=64, q_lens=[1, 1, 12], kv_lens=[500, 64, 80],
         fp8="per_tensor"),
    dict(name="f16_fp8_per_token_head", dtype=torch.float16, d=128, hq=4, hk=2, bs=16, q_lens=[3, 1], kv_lens=[50, 33],
         fp8="per_token_head"),
    dict(name="f16_hnd_noncausal", dtype=torch.float16, d=128, hq=8, hk=2, bs=16, q_lens=[6, 2], kv_lens=[30, 8], hnd=True,
         causal=False),
    dict(name="bf16_decode_long", dtype=torch.bfloat16, d=128, hq=8, hk=1, bs=16, q_lens=[1, 1], kv_lens=[2000, 1500]),
]


class UnifiedCase:
    def __init__(self, c):
        self.c = c
        self.q_lens, self.kv_lens = c["q_lens"], c["kv_lens"]
        T, hq, hk, d, bs = sum(self.q_lens), c["hq"], c["hk"], c["d"], c["bs"]
        self.num_blocks = sum((n + bs - 1) // bs for n in self.kv_lens) + 5
        self.q = rand(T, hq, d, dtype=c["dtype"])
        if c.get("hnd"):  # HND storage, vLLM's logical [num_blocks, block_size, num_kv_heads, d]
            self.k = rand(self.num_blocks, hk, bs, d, dtype=c["dtype"]).transpose(1, 2)
            self.v = rand(self.num_blocks, hk, bs, d, dtype=c["dtype"]).transpose(1, 2)
        else:
            kv_dtype = torch.float8_e4m3fn if c.get("fp8") else c["dtype"]
            self.k = rand(self.num_blocks, bs, hk, d).to(kv_dtype)
            self.v = rand(self.num_blocks, bs, hk, d).to(kv_dtype)
        self.out = torch.empty(T, hq, d, dtype=c["dtype"], device=DEV)
        self.lse = torch.empty(hq, T, dtype=torch.float32, device=DEV)
        self.cu = cumulative(self.q_lens)
        self.seqused = torch.tensor(self.kv_lens, dtype=torch.int32, device=DEV)
        self.table = make_block_table(self.kv_lens, bs, self.num_blocks)
        self.scale = d ** -0.5
        self.sinks = rand(hq) * 2 if c.get("sinks") else None
        self.alibi = rand(hq).abs() * 0.1 if c.get("alibi") else None
        self.qq = rand(max(self.q_lens), max(self.q_lens)) if c.get("qq") else None
        self.k_descale = self.v_descale = self.k_scale_cache = self.v_scale_cache = None
        self.kv_mode = None
        if c.get("fp8") == "per_tensor":
            self.k_descale = torch.tensor([0.7], device=DEV)
            self.v_descale = torch.tensor([1.3], device=DEV)
        elif c.get("fp8") == "per_token_head":
            self.k_scale_cache = torch.rand(self.num_blocks, bs, hk, device=DEV) + 0.5
            self.v_scale_cache = torch.rand(self.num_blocks, bs, hk, device=DEV) + 0.5
            self.kv_mode = 2
        if not c.get("fp8"):
            poison_cache_tails(self.k, self.table, self.kv_lens)
            poison_cache_tails(self.v, self.table, self.kv_lens)

    def outputs(self):
        return [self.out, self.lse]

    def call(self):
        c = self.c
        ht.unified_attention(self.q, self.k, self.v, self.out, self.cu, max(self.q_lens), self.seqused, max(self.kv_lens),
                             self.scale, c.get("causal", True), (c.get("window", -1), 0 if c.get("causal", True) else -1),
                             self.table, c.get("softcap", 0.0), None, self.k_descale, self.v_descale,
                             alibi_slopes=self.alibi, qq_bias=self.qq, sinks=self.sinks, kv_quant_mode=self.kv_mode,
                             k_scale_cache=self.k_scale_cache, v_scale_cache=self.v_scale_cache, lse=self.lse)

    def refresh(self):
        """New data in the same tensors (and a reshuffled block table), as a graph replay sees it."""
        self.q.copy_(rand(*self.q.shape, dtype=self.q.dtype))
        self.k.copy_(rand(*self.k.shape).to(self.k.dtype))
        self.v.copy_(rand(*self.v.shape).to(self.v.dtype))
        self.table.copy_(make_block_table(self.kv_lens, self.c["bs"], self.num_blocks, self.table.shape[1]))

    def reference(self):
        c = self.c
        K, V = self.k.to(F64), self.v.to(F64)
        if self.k_descale is not None:
            K, V = K * self.k_descale.item(), V * self.v_descale.item()
        if self.k_scale_cache is not None:
            K, V = K * self.k_scale_cache.to(F64)[..., None], V * self.v_scale_cache.to(F64)[..., None]
        outs, lses, t = [], [], 0
        for s, (lq, lk) in enumerate(zip(self.q_lens, self.kv_lens)):
            O, L = ref_sequence(self.q[t:t + lq].to(F64), gather_pages(K, self.table[s], lk), gather_pages(V, self.table[s], lk),
                                self.scale, c.get("causal", True), c.get("window", -1), c.get("softcap", 0.0), self.alibi,
                                self.sinks, self.qq)
            outs.append(O)
            lses.append(L)
            t += lq
        return [("out", self.out, torch.cat(outs), ATOL[c["dtype"]] * (1.5 if c.get("fp8") else 1.0)),
                ("lse", self.lse, torch.cat(lses, dim=1), None)]


# ================================ paged decode ================================
PAGED_CASES = [
    dict(name="bf16_d128_gqa_bs16", dtype=torch.bfloat16, d=128, hq=8, hk=1, bs=16, q_len=1,
         kv_lens=[1, 17, 300, 1000, 64, 5, 2048, 33]),
    dict(name="f16_d64_bs64_mtp4_window_softcap_sinks_alibi", dtype=torch.float16, d=64, hq=8, hk=2, bs=64, q_len=4,
         kv_lens=[4, 100, 700], window=63, softcap=30.0, sinks=True, alibi=True),
    dict(name="bf16_d256_fp8_host_scale", dtype=torch.bfloat16, d=256, hq=4, hk=4, bs=16, q_len=2, kv_lens=[2, 90, 400],
         fp8=True),
]


class PagedCase:
    def __init__(self, c):
        self.c = c
        self.kv_lens = c["kv_lens"]
        S, ql, hq, hk, d, bs = len(self.kv_lens), c["q_len"], c["hq"], c["hk"], c["d"], c["bs"]
        self.num_blocks = sum((n + bs - 1) // bs for n in self.kv_lens) + 3
        kv_dtype = torch.float8_e4m3fn if c.get("fp8") else c["dtype"]
        self.q = rand(S * ql, hq, d, dtype=c["dtype"])
        self.k = rand(self.num_blocks, bs, hk, d).to(kv_dtype)
        self.v = rand(self.num_blocks, bs, hk, d).to(kv_dtype)
        self.out = torch.empty(S * ql, hq, d, dtype=c["dtype"], device=DEV)
        self.lse = torch.empty(hq, S * ql, dtype=torch.float32, device=DEV)
        self.seq_lens = torch.tensor(self.kv_lens, dtype=torch.int32, device=DEV)
        self.table = make_block_table(self.kv_lens, bs, self.num_blocks)
        self.scale = d ** -0.5
        self.sinks = rand(hq) if c.get("sinks") else None
        self.alibi = rand(hq).abs() * 0.05 if c.get("alibi") else None
        self.k_scale_value, self.v_scale_value = (0.5, 1.5) if c.get("fp8") else (1.0, 1.0)
        self.plan = ht.PagedDecodePlan(max_num_seqs=S, max_q_len=ql, num_q_heads=hq, num_kv_heads=hk, max_head_size=d,
                                       max_seqlen_k=max(self.kv_lens), device=DEV)
        if not c.get("fp8"):
            poison_cache_tails(self.k, self.table, self.kv_lens)
            poison_cache_tails(self.v, self.table, self.kv_lens)

    def outputs(self):
        return [self.out, self.lse]

    def call(self):
        c = self.c
        kw = dict(k_scale_value=self.k_scale_value, v_scale_value=self.v_scale_value) if c.get("fp8") else {}
        self.plan.run(self.q, self.k, self.v, self.out, self.table, self.seq_lens, max(self.kv_lens), self.scale,
                      q_len=c["q_len"], window_size=(c.get("window", -1), 0), softcap=c.get("softcap", 0.0),
                      alibi_slopes=self.alibi, sinks=self.sinks, lse=self.lse, **kw)

    def refresh(self):
        self.q.copy_(rand(*self.q.shape, dtype=self.q.dtype))
        self.k.copy_(rand(*self.k.shape).to(self.k.dtype))
        self.v.copy_(rand(*self.v.shape).to(self.v.dtype))
        # new lengths within the plan's bounds: the device planner re-plans at replay
        self.kv_lens = [max(self.c["q_len"], n - n // 3) for n in self.kv_lens]
        self.seq_lens.copy_(torch.tensor(self.kv_lens, dtype=torch.int32))
        self.table.copy_(make_block_table(self.kv_lens, self.c["bs"], self.num_blocks, self.table.shape[1]))

    def reference(self):
        c, ql = self.c, self.c["q_len"]
        K, V = self.k.to(F64) * self.k_scale_value, self.v.to(F64) * self.v_scale_value
        outs, lses = [], []
        for s, lk in enumerate(self.kv_lens):
            O, L = ref_sequence(self.q[s * ql:(s + 1) * ql].to(F64), gather_pages(K, self.table[s], lk),
                                gather_pages(V, self.table[s], lk), self.scale, True, c.get("window", -1),
                                c.get("softcap", 0.0), self.alibi, self.sinks)
            outs.append(O)
            lses.append(L)
        return [("out", self.out, torch.cat(outs), ATOL[c["dtype"]] * (1.5 if c.get("fp8") else 1.0)),
                ("lse", self.lse, torch.cat(lses, dim=1), None)]


# ================================ MLA decode ================================
MLA_CASES = [
    dict(name="bf16_q1_page64", dtype=torch.bfloat16, q_len=1, heads=16, page=64, kv_lens=[1, 300, 700]),
    dict(name="bf16_mtp2_page16", dtype=torch.bfloat16, q_len=2, heads=16, page=16, kv_lens=[2, 129, 40, 500]),
    dict(name="f16_fp8_cache", dtype=torch.float16, q_len=1, heads=32, page=64, kv_lens=[65, 256], fp8=True),
]


class MlaCase:
    def __init__(self, c):
        self.c = c
        self.kv_lens = c["kv_lens"]
        B, ql, H, page = len(self.kv_lens), c["q_len"], c["heads"], c["page"]
        self.num_pages = sum((n + page - 1) // page for n in self.kv_lens) + 2
        self.q = rand(B, ql, H, 576, dtype=c["dtype"])
        self.kv = rand(self.num_pages, page, 1, 576).to(torch.float8_e4m3fn if c.get("fp8") else c["dtype"])
        self.kv_scale = torch.tensor([0.8], device=DEV) if c.get("fp8") else None
        self.table = make_block_table(self.kv_lens, page, self.num_pages)
        self.seq_lens = torch.tensor(self.kv_lens, dtype=torch.int32, device=DEV)
        self.out = torch.empty(B, ql, H, 512, dtype=c["dtype"], device=DEV)
        self.lse = torch.empty(B, ql, H, dtype=torch.float32, device=DEV).transpose(1, 2)  # FlashMLA's [B, H, s_q]
        self.scale = 576 ** -0.5
        self.meta = ht.get_mla_metadata(B, ql, H, max(self.kv_lens), DEV)
        if not c.get("fp8"):
            poison_cache_tails(self.kv, self.table, self.kv_lens)

    def outputs(self):
        return [self.out, self.lse]

    def call(self):
        ht.mla_decode(self.q, self.kv, self.table, self.seq_lens, 512, self.meta, self.scale, True, self.out, self.lse,
                      max(self.kv_lens), kv_scale=self.kv_scale)

    def refresh(self):
        self.q.copy_(rand(*self.q.shape, dtype=self.q.dtype))
        self.kv.copy_(rand(*self.kv.shape).to(self.kv.dtype))
        self.table.copy_(make_block_table(self.kv_lens, self.c["page"], self.num_pages, self.table.shape[1]))

    def reference(self):
        c, ql = self.c, self.c["q_len"]
        KV = self.kv.to(F64) * (self.kv_scale.item() if self.kv_scale is not None else 1.0)
        outs, lses = [], []
        for b, lk in enumerate(self.kv_lens):
            rows = gather_pages(KV, self.table[b], lk)  # [lk, 1, 576]
            O, L = ref_sequence(self.q[b].to(F64), rows, rows[..., :512], self.scale, True)
            outs.append(O)
            lses.append(L.transpose(0, 1))  # [ql, H]
        return [("out", self.out, torch.stack(outs), ATOL[c["dtype"]] * (1.5 if c.get("fp8") else 1.0)),
                ("lse", self.lse, torch.stack(lses).transpose(1, 2), None)]


# ================================ merge ================================
MERGE_CASES = [
    dict(name="bf16_stacked_f32_out", dtype=torch.bfloat16, out_dtype=torch.float32, stacked=True),
    dict(name="f16_separate", dtype=torch.float16, out_dtype=torch.float16, stacked=False),
    dict(name="bf16_separate_swapped", dtype=torch.bfloat16, out_dtype=torch.bfloat16, stacked=True, swap=True),
]


class MergeCase:
    def __init__(self, c):
        self.c = c
        T, H, D = 37, 8, 128
        if c["stacked"]:  # one buffer: the in-place path (swap: suffix at the lower address)
            both = rand(2, T, H, D, dtype=c["dtype"])
            lses = rand(2, H, T) * 4
            i, j = (1, 0) if c.get("swap") else (0, 1)
            self.po, self.so, self.pl, self.sl = both[i], both[j], lses[i], lses[j]
        else:
            self.po, self.so = rand(T, H, D, dtype=c["dtype"]), rand(T, H, D, dtype=c["dtype"])
            self.pl, self.sl = rand(H, T) * 4, rand(H, T) * 4
        self.empty_ranks()
        self.out = torch.empty(T, H, D, dtype=c["out_dtype"], device=DEV)
        self.out_lse = torch.empty(H, T, dtype=torch.float32, device=DEV)

    def empty_ranks(self):
        # a rank that saw no key: LSE -inf, its O never read (NaN here); one token empty in both ranks
        self.pl[:, 3] = float("-inf")
        self.po[3] = float("nan")
        self.sl[:, 5] = float("-inf")
        self.so[5] = float("nan")
        self.pl[:, 7] = self.sl[:, 7] = float("-inf")

    def outputs(self):
        return [self.out, self.out_lse]

    def call(self):
        ht.merge_attn_states(self.out, self.po, self.pl, self.so, self.sl, self.out_lse)

    def refresh(self):
        for t in (self.po, self.so):
            t.copy_(rand(*t.shape, dtype=t.dtype))
        for t in (self.pl, self.sl):
            t.copy_(rand(*t.shape) * 4)
        self.empty_ranks()

    def reference(self):
        L = torch.stack([self.pl, self.sl]).to(F64)  # [2, H, T]
        O = torch.stack([self.po, self.so]).to(F64).permute(0, 2, 1, 3)  # [2, H, T, D]
        m = L.amax(0)
        m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
        w = torch.exp(L - m)
        den = w.sum(0)
        O = torch.where(w[..., None] > 0, O, torch.zeros_like(O))
        out = torch.where(den[..., None] > 0, (w[..., None] * O).sum(0) / den[..., None], torch.zeros_like(O[0]))
        return [("out", self.out, out.permute(1, 0, 2), ATOL[self.c["out_dtype"]] + ATOL[self.c["dtype"]]),
                ("lse", self.out_lse, torch.log(den) + m, None)]


# ================================ dense prefill ================================
DENSE_CASES = [
    dict(name="bf16_d128_gqa_causal", dtype=torch.bfloat16, d=128, hq=8, hk=2, q_lens=[100, 1, 37], k_lens=[100, 50, 80], causal=True),
    dict(name="f16_d64_noncausal_window", dtype=torch.float16, d=64, hq=4, hk=4, q_lens=[64, 30], k_lens=[64, 90], causal=False,
         window=20),
    dict(name="bf16_d256_causal_window_softcap", dtype=torch.bfloat16, d=256, hq=4, hk=1, q_lens=[70, 9], k_lens=[70, 40],
         causal=True, window=15, softcap=25.0),
]


class DenseCase:
    def __init__(self, c):
        self.c = c
        self.q_lens, self.k_lens = c["q_lens"], c["k_lens"]
        Tq, Tk, hq, hk, d = sum(self.q_lens), sum(self.k_lens), c["hq"], c["hk"], c["d"]
        self.q = rand(Tq, hq, d, dtype=c["dtype"])
        self.k = rand(Tk, hk, d, dtype=c["dtype"])
        self.v = rand(Tk, hk, d, dtype=c["dtype"])
        self.out = torch.empty(Tq, hq, d, dtype=c["dtype"], device=DEV)
        self.lse = torch.empty(hq, Tq, dtype=torch.float32, device=DEV)
        self.cu_q, self.cu_k = cumulative(self.q_lens), cumulative(self.k_lens)
        self.scale = d ** -0.5

    def outputs(self):
        return [self.out, self.lse]

    def window(self):
        return (self.c.get("window", -1), 0 if self.c["causal"] else -1)

    def call(self):
        ht.dense_prefill(self.q, self.k, self.v, self.out, self.cu_q, self.cu_k, max(self.q_lens), max(self.k_lens),
                         self.scale, self.c["causal"], self.window(), self.c.get("softcap", 0.0), None, self.lse)

    def refresh(self):
        for t in (self.q, self.k, self.v):
            t.copy_(rand(*t.shape, dtype=t.dtype))

    def reference(self):
        c = self.c
        outs, lses, tq, tk = [], [], 0, 0
        for lq, lk in zip(self.q_lens, self.k_lens):
            O, L = ref_sequence(self.q[tq:tq + lq].to(F64), self.k[tk:tk + lk].to(F64), self.v[tk:tk + lk].to(F64),
                                self.scale, c["causal"], c.get("window", -1), c.get("softcap", 0.0))
            outs.append(O)
            lses.append(L)
            tq, tk = tq + lq, tk + lk
        return [("out", self.out, torch.cat(outs), ATOL[c["dtype"]]), ("lse", self.lse, torch.cat(lses, dim=1), None)]


FAMILIES = {"unified": (UnifiedCase, UNIFIED_CASES), "paged_decode": (PagedCase, PAGED_CASES),
            "mla_decode": (MlaCase, MLA_CASES), "merge": (MergeCase, MERGE_CASES), "dense_prefill": (DenseCase, DENSE_CASES)}
ALL_CASES = [(fam, c) for fam, (_, cases) in FAMILIES.items() for c in cases]
ALL_IDS = [f"{fam}-{c['name']}" for fam, c in ALL_CASES]


def verify(case):
    for name, actual, expected, atol in case.reference():
        if atol is None:
            check_lse(name, actual, expected)
        else:
            check_close(name, actual, expected, atol)


@parametrize("fam_case", ALL_CASES, ids=ALL_IDS)
def test_op_matches_reference(fam_case):
    need_gpu()
    torch.manual_seed(1)
    fam, c = fam_case
    case = FAMILIES[fam][0](c)
    poison(*case.outputs())
    case.call()
    torch.cuda.synchronize()
    verify(case)
    # a second call with new inputs into the same (re-poisoned) outputs
    case.refresh()
    poison(*case.outputs())
    case.call()
    torch.cuda.synchronize()
    verify(case)


GRAPH_CASES = [("unified", UNIFIED_CASES[0]), ("unified", UNIFIED_CASES[6]), ("paged_decode", PAGED_CASES[0]),
               ("paged_decode", PAGED_CASES[1]), ("mla_decode", MLA_CASES[1]), ("merge", MERGE_CASES[1]),
               ("dense_prefill", DENSE_CASES[0])]


@parametrize("fam_case", GRAPH_CASES, ids=[f"{f}-{c['name']}" for f, c in GRAPH_CASES])
def test_cuda_graph_replay_with_new_inputs(fam_case):
    need_gpu()
    torch.manual_seed(2)
    fam, c = fam_case
    case = FAMILIES[fam][0](c)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside capture (module load, kernel attributes)
        case.call()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        case.call()
    for _ in range(2):
        case.refresh()
        poison(*case.outputs())
        graph.replay()
        torch.cuda.synchronize()
        verify(case)


def test_torch_compile_fullgraph():
    need_gpu()
    torch.manual_seed(3)
    uc, mc = UnifiedCase(UNIFIED_CASES[0]), MergeCase(MERGE_CASES[1])
    pc = PagedCase(PAGED_CASES[0])

    def step(q, k, v, out, cu, seqused, table, lse, po, pl, so, sl, mout, mlse, pq, pk, pv, pout, ptable, plens, ws, plse):
        ht.unified_attention(q, k, v, out, cu, max(uc.q_lens), seqused, max(uc.kv_lens), uc.scale, True, (-1, 0), table,
                             0.0, None, None, None, lse=lse)
        ht.merge_attn_states(mout, po, pl, so, sl, mlse)
        ht.paged_decode(pq, pk, pv, pout, ptable, plens, max(pc.kv_lens), pc.scale, ws, 1, lse=plse)
        return out.float() * 2.0, mout.float().sum(), pout.float() + 1.0

    compiled = torch.compile(step, fullgraph=True)
    for it in range(2):
        if it:
            for case in (uc, mc, pc):
                case.refresh()
        for case in (uc, mc, pc):
            poison(*case.outputs())
        doubled, msum, plus = compiled(uc.q, uc.k, uc.v, uc.out, uc.cu, uc.seqused, uc.table, uc.lse, mc.po, mc.pl, mc.so,
                                       mc.sl, mc.out, mc.out_lse, pc.q, pc.k, pc.v, pc.out, pc.table, pc.seq_lens,
                                       pc.plan.workspace, pc.lse)
        torch.cuda.synchronize()
        for case in (uc, mc, pc):
            verify(case)  # the ops wrote the tensors the compiled caller gave them
        check_close("compiled out * 2", doubled, uc.out.to(F64) * 2, 1e-6)
        check_close("compiled merge sum", msum.reshape(1), mc.out.to(F64).sum().reshape(1), 1e-2)
        check_close("compiled paged + 1", plus, pc.out.to(F64) + 1, 1e-6)


# ================================ bad inputs ================================
def expect_value_error(fn, *needles):
    try:
        fn()
    except ValueError as e:
        msg = str(e)
        for n in needles:
            assert n in msg, f"{n!r} not in the message: {msg}"
        assert "hipattn" in msg, msg
        return
    raise AssertionError(f"no ValueError (expected one naming {needles})")


def test_bad_inputs_name_the_argument():
    need_gpu()
    torch.manual_seed(4)
    u = UnifiedCase(UNIFIED_CASES[0])

    def unified(**over):
        a = dict(q=u.q, k=u.k, v=u.v, out=u.out, cu_seqlens_q=u.cu, max_seqlen_q=max(u.q_lens), seqused_k=u.seqused,
                 max_seqlen_k=max(u.kv_lens), softmax_scale=u.scale, causal=True, window_size=(-1, 0),
                 block_table=u.table, softcap=0.0, q_descale=None, k_descale=None, v_descale=None)
        a.update(over)
        ht.unified_attention(**a)

    expect_value_error(lambda: unified(cu_seqlens_q=u.cu.long()), "cu_seqlens_q", "int64")
    expect_value_error(lambda: unified(q=u.q.float()), "q", "float32")
    expect_value_error(lambda: unified(q=u.q.cpu()), "q", "CUDA")
    expect_value_error(lambda: unified(out=u.out[:, :, :64]), "out", "dimension 2")
    expect_value_error(lambda: unified(window_size=(8, 4)), "window_size[1]", "4")
    expect_value_error(lambda: unified(softmax_scale=float("nan")), "softmax_scale")
    expect_value_error(lambda: unified(k=u.k[:, :, :1].expand(-1, -1, 3, -1), v=u.v[:, :, :1].expand(-1, -1, 3, -1)),
                       "num_kv_heads", "3")
    expect_value_error(lambda: unified(mm_prefix_range=u.cu), "mm_prefix_range")
    # a head size outside the binding's instance library: hipattn's instance error
    q192 = rand(u.q.shape[0], 8, 192, dtype=torch.bfloat16)
    k192 = rand(u.num_blocks, 16, 2, 192, dtype=torch.bfloat16)
    expect_value_error(lambda: unified(q=q192, k=k192, v=k192, out=torch.empty_like(q192)), "instance", "192")

    p = PagedCase(PAGED_CASES[0])
    wrong = p.plan.workspace.view(torch.int32) if p.plan.workspace.numel() % 4 == 0 else p.plan.workspace.float()
    expect_value_error(lambda: ht.paged_decode(p.q, p.k, p.v, p.out, p.table, p.seq_lens, max(p.kv_lens), p.scale, wrong),
                       "workspace", "uint8")
    expect_value_error(lambda: ht.paged_decode(p.q, p.k, p.v, p.out, p.table, p.seq_lens, max(p.kv_lens), p.scale,
                                               p.plan.workspace, q_len=2), "q", "q_len (2)")
    expect_value_error(lambda: ht.paged_decode_plan(4, 9, 8, 1, 128, 100), "max_q_len", "9")

    m = MlaCase(MLA_CASES[0])
    expect_value_error(lambda: ht.mla_decode(m.q, m.kv, m.table, m.seq_lens, 128, m.meta, m.scale, True, m.out),
                       "head_dim_v", "128")
    expect_value_error(lambda: ht.mla_decode(m.q, m.kv, m.table, m.seq_lens.long(), 512, m.meta, m.scale, True, m.out),
                       "cache_seqlens", "int64")

    g = MergeCase(MERGE_CASES[1])
    expect_value_error(lambda: ht.merge_attn_states(g.out, g.po, g.pl.t().contiguous(), g.so, g.sl), "prefix_lse")

    d = DenseCase(DENSE_CASES[0])
    expect_value_error(lambda: ht.dense_prefill(d.q, d.k, d.v, d.out, d.cu_q, d.cu_k, 100, 100, d.scale, True,
                                                alibi_slopes=torch.ones(8, device=DEV)), "alibi_slopes")
    expect_value_error(lambda: ht.flash_attn_varlen_func(d.q, d.k, d.v, d.cu_q, d.cu_k, 100, 100, dropout_p=0.1), "dropout_p")
