"""Benchmark: the sequential explorer on the Kafka model, one core.

    python bench/explore.py [--presets tiny,default] [--max-depth N]

For each preset, with symmetry on and off: generated and distinct states per second, depth, the
peak bytes per distinct state (everything the run holds: the visited set's 16-byte fingerprints
and parent pointers, the frontier, the model's caches; measured by tracemalloc in a second,
untimed run), and the symmetry reduction factor (distinct without / with symmetry).
Prints a markdown table with the date and machine; it writes nothing (docs/benchmarks.md is
updated by hand from it).
"""

from __future__ import annotations

import argparse
import platform
import time
import tracemalloc

from kcm import config
from kcm.checker.bfs import explore
from kcm.model.spec import KafkaModel


def run(preset: str, symmetry: bool, max_depth: int | None) -> dict:
    cfg = config.load_preset(preset)
    started = time.perf_counter()
    result = explore(KafkaModel(cfg, symmetry=symmetry), symmetry=symmetry, max_depth=max_depth)
    seconds = time.perf_counter() - started
    # Memory in a second run: tracemalloc slows Python down several times, so it never times.
    tracemalloc.start()
    explore(KafkaModel(cfg, symmetry=symmetry), symmetry=symmetry, max_depth=max_depth)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    s = result.stats
    return {"preset": preset, "symmetry": symmetry, "verdict": result.verdict, "distinct": s.distinct,
            "generated": s.generated, "depth": s.depth, "seconds": seconds,
            "bytes_per_state": peak / max(s.distinct, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="tiny,default")
    parser.add_argument("--max-depth", type=int, default=None)
    args = parser.parse_args()
    print(f"Sequential explorer, {time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, one core\n")
    print("| preset | symmetry | verdict | distinct | generated | depth | s | generated/s | distinct/s | bytes/state (peak) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for preset in args.presets.split(","):
        counts = {}
        for symmetry in (True, False):
            r = run(preset, symmetry, args.max_depth)
            counts[symmetry] = r["distinct"]
            print(f"| {preset} | {'on' if symmetry else 'off'} | {r['verdict']} | {r['distinct']:,} | {r['generated']:,} "
                  f"| {r['depth']} | {r['seconds']:.1f} | {r['generated'] / r['seconds']:,.0f} "
                  f"| {r['distinct'] / r['seconds']:,.0f} | {r['bytes_per_state']:,.0f} |", flush=True)
        print(f"\nSymmetry reduction on {preset}: {counts[False] / counts[True]:.2f}x\n")


if __name__ == "__main__":
    main()
