#!/usr/bin/env python3
"""tests/tools/test_plot_bench.py ROOT OUT_DIR: tools/plot_bench.py on the committed run v23
(bench/runs/2026-12-07-v23-h100.json).

Checks: a PNG per family of the JSON in OUT_DIR (the PNG signature, nonzero size), each path printed;
a peers file (a synthetic one, written here) beside dense_prefill; exit status 2 on a malformed JSON,
a JSON without benchmarks, a missing file and a --family that matches nothing. Runs the tool with this
Python, or with Debian's /usr/bin/python3 (where python3-matplotlib installs) when this one has no
matplotlib (e.g. a pyenv python3 first on PATH); exits 77 (CTest's SKIP_RETURN_CODE) when neither has it.
"""
import json
import os
import shutil
import subprocess
import sys

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def python_with_matplotlib():
    for exe in dict.fromkeys([sys.executable, "/usr/bin/python3"]):
        if os.path.exists(exe) and subprocess.run([exe, "-c", "import matplotlib"],
                                                  capture_output=True).returncode == 0:
            return exe
    return None


def run(*args):
    r = subprocess.run([PYTHON, os.path.join(ROOT, "tools", "plot_bench.py"), *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def main():
    if PYTHON is None:
        print(f"SKIP: neither {sys.executable} nor /usr/bin/python3 has matplotlib (Debian: apt-get install "
              "python3-matplotlib)")
        return 77
    print(f"python: {PYTHON}")
    bench = os.path.join(ROOT, "bench", "runs", "2026-12-07-v23-h100.json")
    shutil.rmtree(OUT, ignore_errors=True)
    failures = []

    rc, out, err = run(bench, "--out", OUT, "--device", "NVIDIA H100 80GB HBM3")
    if rc != 0:
        failures.append(f"plot_bench.py exited {rc}: {err.strip()}")
    with open(bench) as f:
        families = sorted({b["name"].split("/")[0] for b in json.load(f)["benchmarks"]})
    for fam in families:
        path = os.path.join(OUT, fam + ".png")
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            failures.append(f"{path}: missing or empty")
            continue
        with open(path, "rb") as f:
            if f.read(8) != PNG_SIGNATURE:
                failures.append(f"{path}: no PNG signature")
        if path not in out.split():
            failures.append(f"{path}: not printed")
    print(f"{len(families)} families: {', '.join(families)}")

    # peers beside dense_prefill (figures made up for the test: one drawn, one refused, one without a row)
    peers = os.path.join(OUT, "peers-synthetic.json")
    with open(peers, "w") as f:
        json.dump({"device": "synthetic", "matmul_tflops": 800, "rows": [
            {"row": "d256_b1_h32_q4096_k4096", "cudnn": {"tflops": 600, "error": None},
             "flash": {"tflops": 300, "error": None}},
            {"row": "d192v128_b1_h32_q4096_k4096", "cudnn": {"tflops": 500, "error": None},
             "flash": {"tflops": None, "error": "refused"}},
            {"row": "serve_prefill_1x4k", "cudnn": {"tflops": 500, "error": None},
             "flash": {"tflops": 250, "error": None}}]}, f)
    rc, out, err = run(bench, "--out", os.path.join(OUT, "peers"), "--family", "dense_prefill", "--peers", peers)
    if rc != 0 or "dense_prefill.png" not in out:
        failures.append(f"--peers: exit {rc}, printed {out.strip()!r}: {err.strip()}")

    # bad input: exit 2 and a message, no picture
    bad = os.path.join(OUT, "malformed.json")
    empty = os.path.join(OUT, "no-benchmarks.json")
    with open(bad, "w") as f:
        f.write('{"context": {}, "benchmarks": [')
    with open(empty, "w") as f:
        json.dump({"context": {}, "benchmarks": []}, f)
    for args in ([bad], [empty], [os.path.join(OUT, "absent.json")], [bench, "--family", "no_such_family"]):
        rc, out, err = run(*args, "--out", os.path.join(OUT, "bad"))
        if rc != 2 or "error" not in err or os.path.exists(os.path.join(OUT, "bad")):
            what = " ".join(os.path.basename(a) for a in args)
            failures.append(f"{what}: exit {rc} (want 2), stderr {err.strip()!r}")

    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    ROOT, OUT = sys.argv[1], sys.argv[2]
    PYTHON = python_with_matplotlib()
    sys.exit(main())
