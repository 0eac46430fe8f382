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
import platform
import time
from datetime import date


def run(preset: str, max_depth: int | None) -> tuple[float, float, int]:
    """Wall and CPU seconds of one exploration, and its distinct states (for the agreement check)."""
    from kcm import config
    from kcm.checker.bfs import explore
    from kcm.model.spec import KafkaModel

    model = KafkaModel(config.load_preset(preset))
    started, cpu = time.perf_counter(), time.process_time()
    result = explore(model, max_depth=max_depth)
    return time.perf_counter() - started, time.process_time() - cpu, result.stats.distinct


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="deep")
    parser.add_argument("--max-depth", type=int, default=7)
    args = parser.parse_args(argv)
    ctx = multiprocessing.get_context("spawn")  # fresh interpreters: no caches carried over
    load = os.getloadavg()[0]
    with ctx.Pool(1) as pool:
        alone = pool.apply(run, (args.preset, args.max_depth))
    with ctx.Pool(2) as pool:
        pair = [r.get() for r in [pool.apply_async(run, (args.preset, args.max_depth)) for _ in range(2)]]
    if len({alone[2]} | {p[2] for p in pair}) != 1:
        raise SystemExit(f"the runs disagree: {alone[2]} and {[p[2] for p in pair]} distinct states")
    pair_wall = max(p[0] for p in pair)
    print(f"Two cores against one, {date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, load average {load:.1f} before, {os.getloadavg()[0]:.1f} after\n")
    print("| preset | levels | distinct | alone: wall s / CPU s | two at once: wall s / CPU s (each) | ceiling |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| {args.preset} | {args.max_depth} | {alone[2]:,} | {alone[0]:.1f} / {alone[1]:.1f} | "
          + ", ".join(f"{w:.1f} / {c:.1f}" for w, c, _ in pair) + f" | {2 * alone[0] / pair_wall:.2f} |")


if __name__ == "__main__":
    main()
