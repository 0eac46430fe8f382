"""Benchmark: how much a second core gives this machine, before any engine's overhead.

    python bench/cores.py [--preset deep] [--max-depth 7]

The same sequential exploration runs alone in one process, then in two processes at once. Both
copies do exactly the work the single one did, so

    ceiling = 2 * seconds alone / seconds of the pair

is the speed-up two workers could get on this machine if they shared nothing: 2.0 on two real cores,
less when the cores share caches, memory bandwidth or a physical core on the host. Spark `local[2]`
against the sequential explorer (bench/spark_explore.py) is bounded by it, and so is any other
parallel engine; docs/benchmarks.md reads the Spark ratios against it.

Prints a markdown table with the date, machine and load average; writes nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from datetime import date
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # the spawned runs import `bench.explore:run` from here too
    sys.path.insert(0, str(REPO_ROOT))

from bench.explore import run  # noqa: E402  (one exploration, its seconds, CPU and counts)
from bench.spark_explore import machine  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="deep")
    parser.add_argument("--max-depth", type=int, default=7)
    args = parser.parse_args(argv)
    ctx = multiprocessing.get_context("spawn")  # fresh interpreters: no caches carried over
    load = os.getloadavg()[0]
    job = (args.preset, True, args.max_depth)  # symmetry on, as `kcm explore`
    with ctx.Pool(1) as pool:
        alone = pool.apply(run, job)
    with ctx.Pool(2) as pool:
        pair = [r.get() for r in [pool.apply_async(run, job) for _ in range(2)]]
    if len({alone["distinct"]} | {p["distinct"] for p in pair}) != 1:
        raise SystemExit(f"the runs disagree: {alone['distinct']} and {[p['distinct'] for p in pair]} distinct states")
    pair_wall = max(p["seconds"] for p in pair)
    print(f"Two cores against one, {date.today().isoformat()}, load average {load:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after\nMachine: {machine()}\n")
    print("| preset | levels | distinct | alone: wall s / CPU s | two at once: wall s / CPU s (each) | ceiling |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| {args.preset} | {args.max_depth} | {alone['distinct']:,} | {alone['seconds']:.1f} / {alone['cpu']:.1f} | "
          + ", ".join(f"{p['seconds']:.1f} / {p['cpu']:.1f}" for p in pair)
          + f" | {2 * alone['seconds'] / pair_wall:.2f} |")


if __name__ == "__main__":
    main()
