#!/usr/bin/env python3
"""bench/peers/sdpa_peers.py: the dense-prefill peers of issue 34, measured on the same GPU as hipattn_bench.

PyTorch's scaled_dot_product_attention through two of its backends, each forced alone with
torch.nn.attention.sdpa_kernel: SDPBackend.CUDNN_ATTENTION (cuDNN's fused attention) and
SDPBackend.FLASH_ATTENTION (PyTorch's FlashAttention-2 kernels), on the shapes of bench/NOTES.md's
dense-prefill target rows (bf16):

    dense_prefill/d128_h32kv8_causal_1x16k      1 x 16384, 32 q / 8 kv heads, d 128, causal
    dense_prefill/d128_h32kv8_noncausal_2x8k    2 x 8192, 32 / 8 heads, d 128, not causal
    dense_prefill/d256_b1_h32_q4096_k4096       1 x 4096, 32 / 32 heads, d 256, causal
    dense_prefill/d192v128_b1_h32_q4096_k4096   1 x 4096, 32 / 32 heads, d_qk 192, d_v 128, causal
    dense_prefill/serve_prefill_1x4k            1 x 4096, 32 / 8 heads, d 128, causal

Method, as bench/bench_common.hpp's: before each timed call a 256 MiB write flushes the L2; each call is
timed with CUDA events; the figure is the median of --reps calls after --warmup calls. Where
hipattn_bench replays a graph, this enqueues each call eagerly behind a short device-side spin
(torch.cuda._sleep), so that the host's dispatch time stays outside the events. Inputs are
uniform in [-1, 1) (never zeros), laid out [batch, seq, heads, dim] and handed to SDPA transposed to
[batch, heads, seq, dim], as an engine holding token-major tensors would. GQA goes through
enable_gqa=True; a backend that refuses it runs with K and V expanded to the q heads (the table says
"kv expanded"). Causal rows are square, so SDPA's top-left mask is hipattn's bottom-right one.

TFLOP/s counts what bench_dense_prefill.cu counts: 2 * (d_qk + d_v) * q heads * the exact number of
visible (query, key) pairs, q_len * k_len per sequence without a mask and q_len * (q_len + 1) / 2 with
the causal one (its attended(), not half of the square). Ceilings of the same run: "of mm" is the
rate over a bf16 8192^3 torch.matmul on random data measured here; with --hipattn-json (the sweep's
bench.json) each row also shows hipattn's own figure from that file and, where the file has
wgmma_frac, every figure over the wgmma ceiling hipattn_bench measured in the same device call.

A backend that cannot run a shape prints why (the first line of PyTorch's error). Each backend's output
is compared with the other's (relative L2 of the difference): bf16 attention agrees to about 1e-2.

Usage: python3 bench/peers/sdpa_peers.py [--hipattn-json OUT/bench.json] [--reps 20] [--warmup 3]
                                          [--rows NAME,NAME] [--json OUT/peers.json]
       python3 bench/peers/sdpa_peers.py --from-json OUT/peers.json [--hipattn-json OUT/bench.json]
         (the table again from saved figures, e.g. with a sweep that ran after the peers)
"""

import argparse
import json
import math
import statistics
import sys
import warnings

ROWS = [
    # hipattn_bench row (dense_prefill/<name>), batch, seq (q = k), q heads, kv heads, d_qk, d_v, causal
    ("d128_h32kv8_causal_1x16k", 1, 16384, 32, 8, 128, 128, True),
    ("d128_h32kv8_noncausal_2x8k", 2, 8192, 32, 8, 128, 128, False),
    ("d256_b1_h32_q4096_k4096", 1, 4096, 32, 32, 256, 256, True),
    ("d192v128_b1_h32_q4096_k4096", 1, 4096, 32, 32, 192, 128, True),
    ("serve_prefill_1x4k", 1, 4096, 32, 8, 128, 128, True),
]
FLUSH_BYTES = 256 << 20


def flops(b, n, hq, dqk, dv, causal):
    pairs = b * (n * (n + 1) / 2 if causal else float(n) * n)
    return 2.0 * (dqk + dv) * hq * pairs


def median_ms(torch, fn, flush, reps, warmup):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    sleep = getattr(torch.cuda, "_sleep", None)
    for i in range(warmup + reps):
        if sleep:  # the GPU spins ~1 ms while Python enqueues the rest: no host time inside the events
            sleep(2_000_000)
        flush.fill_(i & 0xFF)
        start.record()
        fn()
        end.record()
        end.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def matmul_tflops(torch, flush, reps):
    n = 8192
    a = torch.rand(n, n, device="cuda", dtype=torch.bfloat16) * 2 - 1
    b = torch.rand(n, n, device="cuda", dtype=torch.bfloat16) * 2 - 1
    ms = median_ms(torch, lambda: torch.matmul(a, b), flush, reps, 3)
    return 2.0 * n**3 / (ms * 1e-3) / 1e12


def hipattn_rows(path):
    """{row name: (TFLOP/s, wgmma ceiling or None)} of the dense_prefill rows of a hipattn_bench JSON."""
    out = {}
    if not path:
        return out
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        print(f"(no hipattn figures: {path}: {e})")
        return out
    for b in data.get("benchmarks", []):
        parts = b.get("name", "").split("/")
        if len(parts) < 2 or parts[0] != "dense_prefill" or "TFLOP/s" not in b:
            continue
        t = b["TFLOP/s"]
        wg = t / b["wgmma_frac"] if b.get("wgmma_frac") else None
        out[parts[1]] = (t, wg)
    return out


def print_table(results, mm, hip):
    """The one table: each row's peers, hipattn's figure from `hip` (hipattn_rows), ratios."""
    wg_ceilings = [w for _, w in hip.values() if w]
    wg = statistics.median(wg_ceilings) if wg_ceilings else None
    if wg:
        print(f"ceiling: wgmma m64n256k16 bf16 {wg:.0f} TFLOP/s (hipattn_bench, same device call)")

    def fmt(t, ceil):
        return f"{t:7.0f} {t / ceil:5.2f}" if t and ceil else ("      -     -" if not t else f"{t:7.0f}     -")

    ceil_name = "wgmma" if wg else "mm"
    ceil = wg or mm
    print(f"\nDense prefill peers, bf16 (TFLOP/s, and over the {ceil_name} ceiling {ceil:.0f}; exact causal pairs)")
    print(f"{'row':32s} {'cuDNN':>13s} {'flash (FA2)':>13s} {'hipattn':>13s} {'hip/cuDNN':>9s} {'agree':>8s}  notes")
    for r in results:
        cu, fa = r["cudnn"], r["flash"]
        h = hip.get(r["row"], (None, None))[0]
        ratio = f"{h / cu['tflops']:9.2f}" if h and cu["tflops"] else f"{'-':>9s}"
        agree = f"{r['agree_rel_l2']:8.1e}" if "agree_rel_l2" in r else f"{'-':>8s}"
        notes = []
        for tag, x in (("cuDNN", cu), ("flash", fa)):
            if x["error"] and not x["tflops"]:
                notes.append(f"{tag} unsupported: {x['error']}")
            elif x["note"]:
                notes.append(f"{tag} {x['note']}")
        print(f"{r['row']:32s} {fmt(cu['tflops'], ceil):>13s} {fmt(fa['tflops'], ceil):>13s} {fmt(h, ceil):>13s} "
              f"{ratio} {agree}  {'; '.join(notes)}")
    print(f"(torch.matmul bf16 8192^3: {mm:.0f} TFLOP/s in the peers' run)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hipattn-json", default="", help="hipattn_bench's --benchmark_out JSON of the same device call")
    ap.add_argument("--json", default="", help="write the table's figures here")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rows", default="", help="comma-separated row names (default: all)")
    ap.add_argument("--from-json", default="", help="print the table of an earlier --json (no GPU work)")
    args = ap.parse_args()
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        print(f"peers: {saved['device']} (from {args.from_json})")
        print_table(saved["rows"], saved["matmul_tflops"], hipattn_rows(args.hipattn_json))
        return 0

    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        print(f"peers skipped: PyTorch with torch.nn.attention is not importable ({e})")
        return 0
    if not torch.cuda.is_available():
        print("peers skipped: no CUDA device")
        return 0

    props = torch.cuda.get_device_properties(0)
    print(f"peers: {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}")
    flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    mm = matmul_tflops(torch, flush, 10)
    print(f"ceiling: bf16 8192^3 torch.matmul {mm:.0f} TFLOP/s (random data, median of 10)")
    hip = hipattn_rows(args.hipattn_json)

    backends = [("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)]
    wanted = set(filter(None, args.rows.split(",")))
    results = []
    gen = torch.Generator(device="cuda").manual_seed(34)
    for name, b, n, hq, hkv, dqk, dv, causal in ROWS:
        if wanted and name not in wanted:
            continue
        q = (torch.rand(b, n, hq, dqk, device="cuda", generator=gen) * 2 - 1).to(torch.bfloat16).transpose(1, 2)
        k = (torch.rand(b, n, hkv, dqk, device="cuda", generator=gen) * 2 - 1).to(torch.bfloat16).transpose(1, 2)
        v = (torch.rand(b, n, hkv, dv, device="cuda", generator=gen) * 2 - 1).to(torch.bfloat16).transpose(1, 2)
        fl = flops(b, n, hq, dqk, dv, causal)
        row = {"row": name, "flops": fl}
        outs = {}
        for tag, backend in backends:
            note, ms, err = "", None, None
            for expand in ([False, True] if hq != hkv else [False]):
                kk, vv = k, v
                kw = {"is_causal": causal}
                if hq != hkv:
                    if expand:
                        kk = k.repeat_interleave(hq // hkv, dim=1)
                        vv = v.repeat_interleave(hq // hkv, dim=1)
                    else:
                        kw["enable_gqa"] = True

                def call(kk=kk, vv=vv, kw=kw):
                    with sdpa_kernel([backend]):
                        return F.scaled_dot_product_attention(q, kk, vv, **kw)

                with warnings.catch_warnings(record=True) as caught:  # SDPA says why a backend refuses by warnings
                    warnings.simplefilter("always")
                    try:
                        outs[tag] = call()
                        torch.cuda.synchronize()
                        ms = median_ms(torch, call, flush, args.reps, args.warmup)
                        note = "kv expanded" if expand else ""
                        err = None
                        break
                    except RuntimeError as e:  # the backend refuses the shape (or, with GQA, the grouping)
                        why = [str(w.message).strip().splitlines()[0] for w in caught if str(w.message).strip()]
                        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                        err = (why[-1] if why else msg)[:140]
                        outs.pop(tag, None)
            tf = fl / (ms * 1e-3) / 1e12 if ms else None
            row[tag] = {"us": ms * 1e3 if ms else None, "tflops": tf, "note": note, "error": err}
        if len(outs) == 2:
            a, c = outs["cudnn"].float(), outs["flash"].float()
            row["agree_rel_l2"] = (torch.linalg.vector_norm(a - c) / torch.linalg.vector_norm(c)).item()
        results.append(row)
        del q, k, v, outs
        torch.cuda.empty_cache()

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": props.name, "matmul_tflops": mm, "rows": results}, f, indent=1)
    print_table(results, mm, hip)
    return 0


if __name__ == "__main__":
    sys.exit(main())
