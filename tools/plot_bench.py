#!/usr/bin/env python3
"""tools/plot_bench.py: pictures of a hipattn_bench run, one PNG per family.

Reads the Google Benchmark JSON of the sweep (`hipattn_bench --benchmark_out=bench.json
--benchmark_out_format=json`) and draws, for each family (the first component of a benchmark's name:
unified, paged_decode, dense_prefill, mla_decode, fp8_io, ...), every row's fraction of the ceiling
measured in the same run against its problem size, log scale:

  memory-bound rows: bw_frac (TB/s over the copy bandwidth of the run) against the bytes moved,
                     TB/s x real_time (the compulsory bytes bench/bench_common.hpp counts);
  compute-bound rows: wgmma_frac (TFLOP/s over the wgmma m64n256k16 bf16 peak of the run) where the
                     family's rows have it, else mma_frac (the mma.sync / MFMA bf16 atom), against
                     the FLOPs, TFLOP/s x real_time (exact attended pairs).

A row is memory-bound when its bandwidth fraction is at least its compute fraction: the roofline
test (FLOP / byte below the ridge of the two ceilings) written with the counters. The ceilings
themselves are read back from the counters (TB/s / bw_frac, TFLOP/s / wgmma_frac) and shown in the
note. Rows that ended with an error and aggregate rows (repetitions) are left out, and counted.

Markers: one per row; a variant (the name's components after the case: kv dtype / path, e.g.
bf16/planned) has its own marker (by its last component) and colour (by the rest), named in the
legend; each problem is annotated with its case name (up to --max-labels problems).

Peers: --peers PEERS.json (bench/peers/sdpa_peers.py --json: {"device", "matmul_tflops", "rows":
[{"row", "flops", "cudnn": {"tflops", ...}, "flash": {...}}]}) draws cuDNN and flash (PyTorch SDPA)
beside the dense_prefill rows of the same name, over the same ceiling as that hipattn row (its
TFLOP/s / its fraction: the wgmma ceiling of the bench JSON, as sdpa_peers.py relates them). Peer rows
without a hipattn row in the JSON, and refused shapes, are not drawn; the note says so, and says
"no peers" where there are none.

Usage:
  python3 tools/plot_bench.py BENCH.json --out DIR [--family NAME ...] [--peers PEERS.json]
                              [--device NAME] [--prefix STR] [--dpi N] [--max-labels N]
Writes DIR/<prefix><family>.png and prints each path. Exit status 2 on a missing or malformed JSON,
a JSON without benchmarks, a --family that matches nothing, or nothing to draw; 3 when matplotlib
(Debian: python3-matplotlib) is not installed. Needs only the standard library and matplotlib (Agg).
"""

import argparse
import json
import math
import os
import re
import statistics
import sys
import textwrap

TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# Google Benchmark's suffixes of a name (not part of the case)
SUFFIX_RE = re.compile(r"^(iterations:\d+|manual_time|real_time|repeats:\d+|threads:\d+|min_(warmup_)?time:.*)$")
COMPUTE_COUNTERS = [  # (counter, axis text): a family takes the first that any of its rows has
    ("wgmma_frac", "the wgmma m64n256k16 bf16 peak (wgmma_frac)"),
    ("mma_frac", "the bf16 matrix atom's peak, mma.sync / MFMA (mma_frac)"),
]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p"]
PEERS = [("cudnn", "cuDNN (PyTorch SDPA)", "*", "black"), ("flash", "flash (PyTorch SDPA, FA2)", "+", "dimgray")]


class InputError(Exception):
    pass


def load_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise InputError(f"{what} {path}: {e.strerror or e}")
    except ValueError as e:
        raise InputError(f"{what} {path} is not valid JSON: {e}")


def num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def read_rows(data, path):
    """The drawable rows of a bench JSON: dicts with family, case, variant, seconds and the counters."""
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise InputError(f"{path}: no \"benchmarks\" list (not a Google Benchmark JSON)")
    if not data["benchmarks"]:
        raise InputError(f"{path}: the JSON has no benchmarks")
    rows, skipped = [], {"error": 0, "aggregate": 0}
    for i, b in enumerate(data["benchmarks"]):
        if not isinstance(b, dict) or not isinstance(b.get("name"), str):
            raise InputError(f"{path}: benchmark {i} has no name")
        if b.get("run_type") == "aggregate":
            skipped["aggregate"] += 1
            continue
        if b.get("error_occurred"):
            skipped["error"] += 1
            print(f"skipped (error): {b['name']}: {b.get('error_message', '')}", file=sys.stderr)
            continue
        unit = TIME_UNITS.get(b.get("time_unit"))
        if not num(b.get("real_time")) or unit is None or b["real_time"] <= 0:
            raise InputError(f"{path}: {b['name']}: no real_time / time_unit")
        parts = [p for p in b["name"].split("/") if not SUFFIX_RE.match(p)]
        rows.append({"name": "/".join(parts), "family": parts[0], "case": parts[1] if len(parts) > 1 else parts[0],
                     "variant": "/".join(parts[2:]), "seconds": b["real_time"] * unit, "b": b})
    return rows, skipped


def read_peers(path):
    """{row name: peer row} of a sdpa_peers.py --json file, and its device."""
    data = load_json(path, "peers JSON")
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise InputError(f"{path}: no \"rows\" list (not a bench/peers/sdpa_peers.py --json file)")
    out = {}
    for r in data["rows"]:
        if not isinstance(r, dict) or not isinstance(r.get("row"), str):
            raise InputError(f"{path}: a peer row without a \"row\" name")
        out[r["row"]] = r
    return out, str(data.get("device", "device not recorded"))


def classify(rows):
    """Splits a family's rows into memory- and compute-bound panels; returns the panels and the compute counter."""
    counter = next((c for c, _ in COMPUTE_COUNTERS if any(num(r["b"].get(c)) for r in rows)), None)
    mem, comp, none = [], [], []
    for r in rows:
        b = r["b"]
        bw = b.get("bw_frac") if num(b.get("bw_frac")) and num(b.get("TB/s")) else None
        cf = b.get(counter) if counter and num(b.get(counter)) and num(b.get("TFLOP/s")) else None
        if bw is not None and (cf is None or bw >= cf):
            r.update(x=b["TB/s"] * 1e12 * r["seconds"], y=bw)
            mem.append(r)
        elif cf is not None:
            r.update(x=b["TFLOP/s"] * 1e12 * r["seconds"], y=cf)
            comp.append(r)
        else:
            none.append(r)
    return mem, comp, none, counter


def ceiling(rows, rate, frac):
    vals = [r["b"][rate] / r["b"][frac] for r in rows
            if num(r["b"].get(rate)) and num(r["b"].get(frac)) and r["b"][frac] > 0]
    return statistics.median(vals) if vals else None


def styles(rows):
    """(marker, colour) of each variant: marker by its last component, colour by the rest."""
    lasts, rests = {}, {}
    for r in rows:
        v = r["variant"].split("/") if r["variant"] else [""]
        lasts.setdefault(v[-1], len(lasts))
        rests.setdefault("/".join(v[:-1]), len(rests))
    out = {}
    for r in rows:
        v = r["variant"].split("/") if r["variant"] else [""]
        out[r["variant"]] = (MARKERS[lasts[v[-1]] % len(MARKERS)], f"C{rests['/'.join(v[:-1])] % 10}")
    return out


def clusters(rows):
    """The problems to annotate: a case's rows grouped where their sizes lie within 5 % (a kv dtype each)."""
    by_case = {}
    for r in rows:
        by_case.setdefault(r["case"], []).append(r)
    out = []
    for case, rs in by_case.items():
        rs.sort(key=lambda r: r["x"])
        group = [rs[0]]
        for r in rs[1:]:
            if r["x"] > group[0]["x"] * 1.05:
                out.append(max(group, key=lambda g: g["y"]))
                group = []
            group.append(r)
        out.append(max(group, key=lambda g: g["y"]))
    return out


def draw_panel(ax, rows, style, xlabel, ylabel, title, ticker):
    """The rows' markers, one per row; returns the problems to annotate."""
    seen = set()
    for r in rows:
        m, c = style[r["variant"]]
        label = (r["variant"] or "hipattn") if r["variant"] not in seen else None
        seen.add(r["variant"])
        ax.scatter([r["x"]], [r["y"]], marker=m, color=c, s=36, label=label, zorder=3)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(ticker)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.axhline(1.0, color="0.5", lw=0.8, ls="--", zorder=1)
    top = max([1.05] + [r["y"] * 1.12 for r in rows])
    ax.set_ylim(0, top)
    xs = [r["x"] for r in rows]
    ax.set_xlim(min(xs) / 2, max(xs) * 3)  # room for the labels on the right
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    ax.tick_params(labelsize=7)
    return clusters(rows)


def annotate(ax, tops, size=6.5):
    """Case names beside their problems, each raised by a line until it overlaps no earlier one (after
    the figure's layout is drawn: the check is in pixels)."""
    px = ax.figure.dpi / 72.0
    w_char, h_line = 0.6 * size * px, 1.35 * size * px
    placed = []
    for r in sorted(tops, key=lambda r: (r["x"], r["y"])):
        x0, y0 = ax.transData.transform((r["x"], r["y"]))
        x0, y0 = x0 + 4 * px, y0 + 3 * px
        w = w_char * len(r["case"])
        dy = 0.0
        while any(x0 < bx + bw and bx < x0 + w and y0 + dy < by + h_line and by < y0 + dy + h_line
                  for bx, by, bw in placed):
            dy += h_line
        placed.append((x0, y0 + dy, w))
        a = ax.annotate(r["case"], (r["x"], r["y"]), xytext=(4, 3 + dy / px), textcoords="offset points",
                        fontsize=size, color="0.2", va="bottom",
                        arrowprops=dict(arrowstyle="-", color="0.6", lw=0.5) if dy else None)
        a.set_in_layout(False)  # the layout stays the one the positions were computed on


def draw_peers(ax, comp, counter, peers):
    """Draws the peers beside the same-named rows of `comp`; returns (drawn, notes)."""
    by_case = {r["case"]: r for r in comp}
    drawn, notes, labelled = 0, [], set()
    for name, p in peers.items():
        h = by_case.get(name)
        if h is None:
            notes.append(f"{name} (no hipattn row)")
            continue
        ceil = h["b"]["TFLOP/s"] / h["b"][counter]
        for key, label, marker, colour in PEERS:
            x = p.get(key) if isinstance(p.get(key), dict) else {}
            t = x.get("tflops")
            if not num(t) or t <= 0:
                notes.append(f"{label.split(' ')[0]} {name}: {'refused' if x.get('error') else 'no figure'}")
                continue
            if num(p.get("flops")) and abs(p["flops"] / h["x"] - 1) > 0.01:  # another FLOP count or shape
                notes.append(f"{name}: peers' FLOPs {p['flops']:.3g} against hipattn's {h['x']:.3g}")
            ax.scatter([h["x"]], [t / ceil], marker=marker, color=colour, s=70 if marker == "*" else 60,
                       linewidths=1.2, label=label if key not in labelled else None, zorder=4)
            labelled.add(key)
            drawn += 1
    return drawn, notes


def plot_family(plt, ticker_mod, fam, rows, skipped, args, peers, peers_device, context):
    """One PNG: a panel for the memory-bound rows and one for the compute-bound rows (those present)."""
    mem, comp, none, counter = classify(rows)
    for r in none:
        print(f"not drawn (no bw_frac / {counter or 'compute fraction'}): {r['name']}", file=sys.stderr)
    if not mem and not comp:
        print(f"{fam}: no row has a fraction counter: no picture", file=sys.stderr)
        return None
    style = styles(mem + comp)
    panels = [p for p in (("mem", mem), ("comp", comp)) if p[1]]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.4), squeeze=False, layout="constrained")
    notes, tops = [], []
    peer_note = "no peers (no --peers file)" if peers is None else "no peers for this family"
    for ax, (kind, rs) in zip(axes[0], panels):
        if kind == "mem":
            how = f"bw_frac >= {counter}" if counter else "the family has no compute counter"
            tops.append(draw_panel(ax, rs, style, "bytes moved: TB/s x real_time (compulsory bytes, log)",
                                   "fraction of the run's copy bandwidth (bw_frac)",
                                   f"memory-bound rows ({len(rs)}; {how})", ticker_mod.EngFormatter(unit="B")))
        else:
            tops.append(draw_panel(ax, rs, style, "FLOPs: TFLOP/s x real_time (exact attended pairs, log)",
                                   "fraction of the run's " + dict(COMPUTE_COUNTERS)[counter],
                                   f"compute-bound rows ({len(rs)}; {counter} > bw_frac)",
                                   ticker_mod.EngFormatter(unit="FLOP")))
            if peers and fam == "dense_prefill":
                drawn, missing = draw_peers(ax, rs, counter, peers)
                peer_note = f"peers ({peers_device}): {drawn} figures beside hipattn's, over the same ceiling"
                if missing:
                    peer_note += "; not drawn: " + ", ".join(missing)
    ceilings = []
    copy = ceiling(rows, "TB/s", "bw_frac")
    peak = ceiling(rows, "TFLOP/s", counter) if counter else None
    if copy:
        ceilings.append(f"copy {copy:.2f} TB/s")
    if peak:
        ceilings.append(f"{counter.replace('_frac', '')} bf16 {peak:.0f} TFLOP/s")
    notes.append("Fractions of ceilings measured in the same run" + (f" ({', '.join(ceilings)})" if ceilings else "")
                 + f"; {peer_note}.")
    for t in tops:
        if len(t) > args.max_labels:
            notes.append(f"{len(t)} problems in a panel: case labels left out (--max-labels {args.max_labels}).")
    if skipped["error"] or skipped["aggregate"] or none:
        notes.append(f"Left out: {skipped['error']} error rows and {skipped['aggregate']} aggregates of the JSON; "
                     f"{len(none)} {fam} rows without a fraction counter.")
    device = args.device or context.get("device") or "device not recorded (--device)"
    date = str(context.get("date", ""))[:10] or "date not recorded"
    fig.suptitle(f"{fam}: {device}, {date} ({os.path.basename(args.json)})", fontsize=10)
    handles, labels = [], []
    for ax in axes[0]:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=7, frameon=False)
    notes = [line for n in notes for line in textwrap.wrap(n, 105 * len(panels))]
    fig.text(0.01, 0.0, "\n".join(notes), fontsize=7, color="0.25", va="top")  # below the figure: outside the layout
    fig.canvas.draw()  # the layout, for annotate's pixel positions
    for ax, t in zip(axes[0], tops):
        if len(t) <= args.max_labels:
            annotate(ax, t)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", args.prefix + fam) + ".png"
    path = os.path.join(args.out, name)
    fig.savefig(path, dpi=args.dpi, bbox_inches="tight")
    plt.close(fig)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog=__doc__.split("\n", 2)[2],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", help="hipattn_bench's --benchmark_out JSON (--benchmark_out_format=json)")
    ap.add_argument("--out", required=True, help="directory for the PNGs (created if absent)")
    ap.add_argument("--family", action="append", default=[],
                    help="draw this family only (repeatable; default: every family in the JSON)")
    ap.add_argument("--peers", default=None, help="bench/peers/sdpa_peers.py --json output, drawn beside dense_prefill")
    ap.add_argument("--device", default="", help="device name for the titles (the sweep's JSON does not record it)")
    ap.add_argument("--prefix", default="", help="prefix of the file names (e.g. v23-h100-)")
    ap.add_argument("--dpi", type=int, default=90, help="resolution of the PNGs (default 90)")
    ap.add_argument("--max-labels", type=int, default=40,
                    help="annotate case names only when a panel has at most this many problems (default 40)")
    args = ap.parse_args()
    try:
        data = load_json(args.json, "bench JSON")
        rows, skipped = read_rows(data, args.json)
        peers, peers_device = read_peers(args.peers) if args.peers else (None, "")
        families = list(dict.fromkeys(r["family"] for r in rows))
        if args.family:
            unknown = [f for f in args.family if f not in families]
            if unknown:
                raise InputError(f"--family {', '.join(unknown)}: not in {args.json} "
                                 f"(families with rows to draw: {', '.join(families) or 'none'})")
            families = [f for f in families if f in args.family]
        if not families:
            raise InputError(f"{args.json}: no benchmark rows to draw (all skipped)")
    except InputError as e:
        print(f"plot_bench.py: error: {e}", file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker as ticker_mod
    except ImportError as e:
        print(f"plot_bench.py: error: matplotlib is not importable ({e}); Debian: apt-get install python3-matplotlib",
              file=sys.stderr)
        return 3
    os.makedirs(args.out, exist_ok=True)
    context = data.get("context") if isinstance(data.get("context"), dict) else {}
    written = []
    for fam in families:
        path = plot_family(plt, ticker_mod, fam, [r for r in rows if r["family"] == fam], skipped, args, peers,
                           peers_device, context)
        if path:
            print(path)
            written.append(path)
    if not written:
        print("plot_bench.py: error: no family had a row to draw", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
