"""hipattn_torch: torch.ops.hipattn, hipattn's attention kernels as PyTorch custom ops.

Loads libhipattn_torch_ops.so (HIPATTN_TORCH_LIB, else this folder, else <repo>/build*/bindings/torch),
registers a fake (meta) implementation of every op so that torch.compile traces them, and exposes
thin wrappers with the engines' calling conventions:

    unified_attention(...)        vLLM's Triton unified_attention (vllm/v1/attention/ops/triton_unified_attention.py)
    PagedDecodePlan(...).run(...) paged decode, FlashInfer-style plan / run (paged_decode for the op itself)
    get_mla_metadata(...), flash_mla_with_kvcache(...), mla_decode(...)   FlashMLA-style MLA decode
    merge_attn_states(...)        vLLM's merge_attn_states
    flash_attn_varlen_func(...), dense_prefill(...)                       flash-attention's varlen prefill

Errors carry hipattn's message, "hipattn: <code>: <field>: <message>": ValueError for a bad argument
or an unsupported problem, RuntimeError for a CUDA runtime failure. bindings/torch/README.md has the
op schemas.
"""
import glob
import os

import torch

__all__ = [
    "unified_attention", "PagedDecodePlan", "paged_decode_plan", "paged_decode", "get_mla_metadata",
    "mla_decode", "flash_mla_with_kvcache", "merge_attn_states", "dense_prefill", "flash_attn_varlen_func",
    "library_path",
]

_HERE = os.path.dirname(os.path.abspath(__file__))


def _find_library():
    env = os.environ.get("HIPATTN_TORCH_LIB")
    if env:
        return env
    candidates = [os.path.join(_HERE, "libhipattn_torch_ops.so")]
    repo = os.path.abspath(os.path.join(_HERE, "..", "..", ".."))
    candidates += sorted(glob.glob(os.path.join(repo, "build*", "bindings", "torch", "libhipattn_torch_ops.so")))
    for c in candidates:
        if os.path.exists(c):
            return c
    raise ImportError("hipattn_torch: libhipattn_torch_ops.so not found (set HIPATTN_TORCH_LIB, or build it: "
                      "bindings/torch/run_tests.sh); looked in: " + ", ".join(candidates))


library_path = _find_library()
torch.ops.load_library(library_path)
_ops = torch.ops.hipattn

# ---- fakes: every out-variant op writes its given tensors and returns nothing ----------------
# (paged_decode_plan and mla_decode_plan are CompositeImplicitAutograd in C++: under FakeTensorMode
# their own code makes a fake workspace of the right size, so they take no fake here.)
_register_fake = getattr(torch.library, "register_fake", None) or torch.library.impl_abstract


def _writes_outputs_only(*args, **kwargs):
    return None


for _name in ("unified_attention", "paged_decode", "mla_decode", "merge_attn_states", "dense_prefill"):
    _register_fake("hipattn::" + _name, _writes_outputs_only)


def _unsupported(field, message):
    return ValueError(f"hipattn: unsupported: {field}: {message}")


def _f32(t):
    return t if t is None or t.dtype == torch.float32 else t.float()


def _window(window_size):
    left, right = window_size
    return [int(left), int(right)]


# vLLM's KVQuantMode (by name) as the op's kv_quant_mode: 0 auto, 1 per tensor, 2 per (token, head).
def _kv_quant_mode(mode):
    if mode is None:
        return 0
    name = getattr(mode, "name", None)
    if name is None:
        if isinstance(mode, int) and mode in (0, 1, 2):
            return mode
        raise _unsupported("kv_quant_mode", f"{mode!r}: expected vLLM's KVQuantMode or 0 / 1 / 2")
    if name in ("NONE", "AUTO"):
        return 0
    if name in ("FP8_PER_TENSOR", "PER_TENSOR"):
        return 1
    if name == "FP8_PER_TOKEN_HEAD":
        return 2
    raise _unsupported("kv_quant_mode", f"{name}: hipattn serves fp8 caches with per-tensor or per-(token, head) scales")


# ---- unified attention -------------------------------------------------------------------
def unified_attention(q, k, v, out, cu_seqlens_q, max_seqlen_q, seqused_k, max_seqlen_k, softmax_scale, causal,
                      window_size, block_table, softcap, q_descale, k_descale, v_descale, seq_threshold_3D=None,
                      num_par_softmax_segments=None, softmax_segm_output=None, softmax_segm_max=None,
                      softmax_segm_expsum=None, alibi_slopes=None, output_scale=None, qq_bias=None, sinks=None,
                      mm_prefix_range=None, use_alibi_sqrt=False, kv_quant_mode=None, k_scale_cache=None,
                      v_scale_cache=None, *, lse=None, output_group_scale=None, output_group_size=0,
                      output_group_ue8m0=False):
    """vLLM's unified_attention, writing `out` (and `lse` [num_q_heads, num_tokens] when given).

    The 3D-path arguments (seq_threshold_3D, num_par_softmax_segments, softmax_segm_*) are vLLM's
    own workspace: hipattn chooses its split itself and takes its workspace from PyTorch's caching
    allocator, so they are not read. Not served: mm_prefix_range, use_alibi_sqrt, INT8 / INT4 / INT2
    caches (ValueError naming the argument).
    """
    if mm_prefix_range is not None:
        raise _unsupported("mm_prefix_range", "multimodal prefix ranges are not served")
    if use_alibi_sqrt:
        raise _unsupported("use_alibi_sqrt", "True: hipattn's ALiBi is slope * (j - pos)")
    _ops.unified_attention(q, k, v, out, cu_seqlens_q, int(max_seqlen_q), seqused_k, int(max_seqlen_k),
                           float(softmax_scale), bool(causal), _window(window_size), block_table, float(softcap),
                           q_descale, k_descale, v_descale, _f32(alibi_slopes), output_scale, _f32(qq_bias),
                           _f32(sinks), _kv_quant_mode(kv_quant_mode), k_scale_cache, v_scale_cache, lse,
                           output_group_scale, int(output_group_size), bool(output_group_ue8m0))


# ---- paged decode: plan once, run every step -----------------------------------------------
def paged_decode_plan(max_num_seqs, max_q_len, num_q_heads, num_kv_heads, max_head_size, max_seqlen_k, device="cuda"):
    """The workspace (a uint8 CUDA tensor) every paged_decode call within these bounds needs."""
    return _ops.paged_decode_plan(int(max_num_seqs), int(max_q_len), int(num_q_heads), int(num_kv_heads),
                                  int(max_head_size), int(max_seqlen_k), torch.device(device))


def paged_decode(q, k_cache, v_cache, out, block_table, seq_lens, max_seqlen_k, softmax_scale, workspace, q_len=1,
                 window_size=(-1, -1), softcap=0.0, alibi_slopes=None, sinks=None, k_scale=None, v_scale=None,
                 k_scale_value=1.0, v_scale_value=1.0, k_scale_cache=None, v_scale_cache=None, q_scale=None,
                 output_scale=None, lse=None):
    """The op: q [num_seqs * q_len, num_q_heads, head_size], caches [num_blocks, block_size, num_kv_heads, head_size]."""
    _ops.paged_decode(q, k_cache, v_cache, out, block_table, seq_lens, int(max_seqlen_k), float(softmax_scale),
                      workspace, int(q_len), _window(window_size), float(softcap), _f32(alibi_slopes), _f32(sinks),
                      k_scale, v_scale, float(k_scale_value), float(v_scale_value), k_scale_cache, v_scale_cache,
                      q_scale, output_scale, lse)


class PagedDecodePlan:
    """FlashInfer-style paged decode: the plan holds the traits (bounds) and the workspace sized from
    them; run() checks a step against the bounds (host integers only) and launches. Plan once, outside
    graph capture; run inside it, as often as needed."""

    def __init__(self, max_num_seqs, max_q_len, num_q_heads, num_kv_heads, max_head_size, max_seqlen_k, device="cuda"):
        self.max_num_seqs, self.max_q_len = int(max_num_seqs), int(max_q_len)
        self.num_q_heads, self.num_kv_heads = int(num_q_heads), int(num_kv_heads)
        self.max_head_size, self.max_seqlen_k = int(max_head_size), int(max_seqlen_k)
        self.workspace = paged_decode_plan(max_num_seqs, max_q_len, num_q_heads, num_kv_heads, max_head_size,
                                           max_seqlen_k, device)

    def _bound(self, field, value, bound, name):
        if value > bound:
            raise ValueError(f"hipattn: invalid_argument: {field}: {field} ({value}) exceeds the plan's {name} ({bound})")

    def run(self, q, k_cache, v_cache, out, block_table, seq_lens, max_seqlen_k, softmax_scale, q_len=1, **kwargs):
        self._bound("num_seqs", seq_lens.shape[0], self.max_num_seqs, "max_num_seqs")
        self._bound("q_len", q_len, self.max_q_len, "max_q_len")
        self._bound("max_seqlen_k", max_seqlen_k, self.max_seqlen_k, "max_seqlen_k")
        self._bound("head_size", q.shape[-1], self.max_head_size, "max_head_size")
        if q.shape[1] != self.num_q_heads or k_cache.shape[2] != self.num_kv_heads:
            raise ValueError(f"hipattn: invalid_argument: num_q_heads: heads ({q.shape[1]} / {k_cache.shape[2]}) are not "
                             f"the plan's ({self.num_q_heads} / {self.num_kv_heads})")
        paged_decode(q, k_cache, v_cache, out, block_table, seq_lens, max_seqlen_k, softmax_scale, self.workspace,
                     q_len, **kwargs)
        return out


# ---- MLA decode (FlashMLA-style) ------------------------------------------------------------
def get_mla_metadata(max_batch, max_q_len, num_heads, max_seqlen_k, device="cuda"):
    """The tile_scheduler_metadata of mla_decode: hipattn's MLA workspace for every call within these bounds."""
    return _ops.mla_decode_plan(int(max_batch), int(max_q_len), int(num_heads), int(max_seqlen_k), torch.device(device))


def mla_decode(q, kv_cache, block_table, cache_seqlens, head_dim_v, tile_scheduler_metadata, softmax_scale, causal, out,
               softmax_lse=None, max_seqlen_k=-1, q_rope=None, kv_scale=None, kv_scale_value=1.0, q_scale=None,
               output_scale=None):
    """The op: q [batch, q_len, num_heads, 576], kv_cache [num_pages, page_size, 1, 576], out [.., 512],
    softmax_lse [batch, num_heads, q_len] (one token stride: e.g. a transposed [batch, q_len, num_heads])."""
    _ops.mla_decode(q, kv_cache, block_table, cache_seqlens, int(head_dim_v), tile_scheduler_metadata,
                    float(softmax_scale), bool(causal), out, softmax_lse, int(max_seqlen_k), q_rope, kv_scale,
                    float(kv_scale_value), q_scale, output_scale)


def flash_mla_with_kvcache(q, k_cache, block_table, cache_seqlens, head_dim_v, tile_scheduler_metadata, num_splits=None,
                           softmax_scale=None, causal=False, *, out=None, softmax_lse=None, max_seqlen_k=-1):
    """FlashMLA's call, returning (out [b, s_q, h, 512], softmax_lse [b, h, s_q]); num_splits is not read
    (hipattn's plan lives in tile_scheduler_metadata)."""
    b, s_q, h, d = q.shape
    if softmax_scale is None:
        softmax_scale = d ** -0.5
    if out is None:
        out = torch.empty(b, s_q, h, head_dim_v, dtype=q.dtype, device=q.device)
    if softmax_lse is None:
        softmax_lse = torch.empty(b, s_q, h, dtype=torch.float32, device=q.device).transpose(1, 2)
    mla_decode(q, k_cache, block_table, cache_seqlens, head_dim_v, tile_scheduler_metadata, softmax_scale, causal, out,
               softmax_lse, max_seqlen_k)
    return out, softmax_lse


# ---- merge -----------------------------------------------------------------------------------
def merge_attn_states(output, prefix_output, prefix_lse, suffix_output, suffix_lse, output_lse=None):
    """vLLM's merge_attn_states: O [num_tokens, num_heads, head_size], LSE [num_heads, num_tokens] float32."""
    _ops.merge_attn_states(output, output_lse, prefix_output, prefix_lse, suffix_output, suffix_lse)


# ---- dense prefill -----------------------------------------------------------------------------
def dense_prefill(q, k, v, out, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale, causal,
                  window_size=(-1, -1), softcap=0.0, alibi_slopes=None, softmax_lse=None):
    """The op: packed varlen q [total_q, hq, d], k / v [total_k, hk, d / dv], out [total_q, hq, dv]."""
    _ops.dense_prefill(q, k, v, out, cu_seqlens_q, cu_seqlens_k, int(max_seqlen_q), int(max_seqlen_k),
                       float(softmax_scale), bool(causal), _window(window_size), float(softcap), alibi_slopes,
                       softmax_lse)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                           softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                           deterministic=False, return_attn_probs=False, *, out=None, return_softmax_lse=False):
    """flash-attention's flash_attn_varlen_func (forward): returns out, or (out, softmax_lse [hq, total_q])."""
    if dropout_p != 0.0:
        raise _unsupported("dropout_p", f"{dropout_p}: inference only (0.0)")
    if return_attn_probs:
        raise _unsupported("return_attn_probs", "True: the probabilities are never materialized")
    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** -0.5
    if out is None:
        out = torch.empty(q.shape[0], q.shape[1], v.shape[-1], dtype=q.dtype, device=q.device)
    lse = torch.empty(q.shape[1], q.shape[0], dtype=torch.float32, device=q.device) if return_softmax_lse else None
    dense_prefill(q, k, v, out, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale, causal,
                  window_size, softcap, alibi_slopes, lse)
    return (out, lse) if return_softmax_lse else out
