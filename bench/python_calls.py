"""Calls per second: memfit.estimate_memory in a Python loop over the catalog models (offline)
against spawning the memfit binary once per model, the only way a script had before the module.

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_calls.py build/memfit [--rounds 3]
Figures in docs/benchmarks.md ("The Python module"). Like the tests, it runs with a fresh HOME and
caches and HF_HUB_OFFLINE=1: the catalog's models, nothing read from the network.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

home = tempfile.mkdtemp(prefix="memfit-bench-")
os.environ.update({"HOME": home, "HF_HOME": os.path.join(home, "hf"),
                   "MEMFIT_CACHE": os.path.join(home, "memfit"), "HF_HUB_OFFLINE": "1",
                   "HF_ENDPOINT": "http://127.0.0.1:9"})
os.environ.pop("HF_HUB_CACHE", None)

import memfit  # noqa: E402


def per_second(count, seconds):
    return count / seconds if seconds > 0 else float("inf")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    models = [e["id"] for e in memfit.models().to_dict()]
    n = len(models)

    start = time.perf_counter()
    for m in models:
        memfit.estimate_memory(m, offline=True)
    first = time.perf_counter() - start
    print(f"module, first pass (each model described once): {n} calls in {first:.3f} s = "
          f"{per_second(n, first):,.0f} calls/s")

    best = float("inf")
    for _ in range(args.rounds):
        start = time.perf_counter()
        for m in models:
            memfit.estimate_memory(m, offline=True).to_dict()
        best = min(best, time.perf_counter() - start)
    print(f"module, repeat pass (the process's model cache), with to_dict(): {n} calls in "
          f"{best:.3f} s = {per_second(n, best):,.0f} calls/s (best of {args.rounds})")

    best_spawn = float("inf")
    for _ in range(max(1, args.rounds - 1)):
        start = time.perf_counter()
        for m in models:
            subprocess.run([args.binary, "estimate-memory", m, "--offline", "--format", "json"],
                           check=True, stdout=subprocess.DEVNULL)
        best_spawn = min(best_spawn, time.perf_counter() - start)
    print(f"binary spawned per model: {n} calls in {best_spawn:.3f} s = "
          f"{per_second(n, best_spawn):,.0f} calls/s (best of {max(1, args.rounds - 1)})")
    print(f"module first pass / spawn: {best_spawn / first:.1f}x; "
          f"repeat / spawn: {best_spawn / best:.1f}x")


if __name__ == "__main__":
    sys.exit(main())
