"""Benchmark: the sequential explorer on the Kafka model, one core.

    python bench/explore.py [--presets tiny,default] [--max-depth N]

For each preset, with symmetry on and off (on only when the config admits a renaming besides the
identity): generated and distinct states per second of wall clock and of CPU time (the CPU rate is
what to compare when the machine is shared), depth, the bytes per distinct state (the growth of
the process's peak resident memory over the run: the visited set's 16-byte fingerprints and
parent pointers, the frontier, the model's caches), and the symmetry reduction factor (distinct
without / with symmetry). Prints a markdown table with the date, machine and load average; it
writes nothing (docs/benchmarks.md is updated by hand from it).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import resource
import time

from kcm.checker.engine.bfs import explore
from kcm.model.checking.kafka_model import KafkaModel

from kcm import config


def run(preset: str, symmetry: bool, max_depth: int | None) -> dict:
    cfg = config.load_preset(preset)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    started, cpu_started = time.perf_counter(), time.process_time()
    result = explore(KafkaModel(cfg, symmetry=symmetry), symmetry=symmetry, max_depth=max_depth)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    rss_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before
    s = result.stats
    return {"preset": preset, "symmetry": result.symmetry, "verdict": result.verdict, "distinct": s.distinct,
            "generated": s.generated, "depth": s.depth, "seconds": seconds, "cpu": cpu,
            "bytes_per_state": rss_growth / max(s.distinct, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="tiny,default")
    parser.add_argument("--max-depth", type=int, default=None)
    args = parser.parse_args()
    print(f"Sequential explorer, {time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, one core, load average {os.getloadavg()[0]:.1f}\n")
    print("| preset | symmetry | verdict | distinct | generated | depth | wall s | CPU s | generated/s (wall) "
          "| generated/s (CPU) | bytes/state (peak RSS growth) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for preset in args.presets.split(","):
        counts = {}
        for symmetry in (True, False):
            if symmetry and not KafkaModel(config.load_preset(preset)).has_symmetry:
                continue
            # A fresh process per run: the peak resident memory only grows within a process.
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                r = pool.apply(run, (preset, symmetry, args.max_depth))
            counts[symmetry] = r["distinct"]
            print(f"| {preset} | {'on' if r['symmetry'] else 'off'} | {r['verdict']} | {r['distinct']:,} "
                  f"| {r['generated']:,} | {r['depth']} | {r['seconds']:.1f} | {r['cpu']:.1f} "
                  f"| {r['generated'] / r['seconds']:,.0f} | {r['generated'] / r['cpu']:,.0f} "
                  f"| {r['bytes_per_state']:,.0f} |", flush=True)
        if True in counts:
            print(f"\nSymmetry reduction on {preset}: {counts[False] / counts[True]:.2f}x\n")
        else:
            print(f"\nSymmetry on {preset}: none (its topic creation fixes every broker; docs/model.md)\n")


if __name__ == "__main__":
    main()
