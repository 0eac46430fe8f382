"""Benchmark: `kcm fuzz` throughput, lock-step steps per second, on the tiny and default presets.

    python bench/fuzz.py [--presets tiny,default] [--examples 200] [--steps 50] [--seed 0] [--repeat 3]

For each preset, runs the Hypothesis lock-step machine (`kcm.checker.stateful.fuzz`, the model and
the stepped implementation compared after every step) and, for scale, the same walk over the model
alone (`compare=False`). Prints a markdown table with the date and the machine: examples, steps
taken (stuttering steps, which do nothing once every bound is spent, are counted apart), wall
time (median of `--repeat` runs) and steps per second. A healthy preset runs clean; a run that
fails stops early and is marked. It writes nothing: the numbers go into docs/benchmarks.md by hand.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time

import hypothesis

from kcm.checker.stateful import FuzzStats, fuzz
from kcm.config import load_preset


def run(preset: str, examples: int, steps: int, seed: int, compare: bool) -> tuple[float, FuzzStats, bool]:
    stats = FuzzStats()
    started = time.perf_counter()
    result = fuzz(load_preset(preset), examples=examples, steps=steps, seed=seed, compare=compare, stats=stats)
    return time.perf_counter() - started, stats, result.ok


def bench(presets: list[str], examples: int, steps: int, seed: int, repeat: int) -> list[str]:
    rows = ["| Preset | Compared with | Examples | Steps | Stuttering | Time (s) | Steps/s | Verdict |",
            "|:-------|:--------------|---------:|------:|-----------:|---------:|--------:|:--------|"]
    for preset in presets:
        for compare in (True, False):
            runs = [run(preset, examples, steps, seed, compare) for _ in range(repeat)]
            seconds = statistics.median(r[0] for r in runs)
            _, stats, ok = runs[0]  # the same seed makes the same run: the counts agree across repeats
            rows.append(f"| {preset} | {'implementation' if compare else 'model only'} | {stats.examples} "
                        f"| {stats.steps:,} | {stats.stutters:,} | {seconds:.2f} | {stats.steps / seconds:,.0f} "
                        f"| {'clean' if ok else 'FAILED'} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="tiny,default")
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = bench(args.presets.split(","), args.examples, args.steps, args.seed, max(1, args.repeat))
    print("### kcm fuzz: lock-step steps per second\n")
    print(f"{datetime.date.today().isoformat()}; {platform.node() or 'unknown host'}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs, {platform.processor() or platform.system()}; Python {platform.python_version()}, "
          f"Hypothesis {hypothesis.__version__}; {args.examples} examples × {args.steps} steps, seed {args.seed}, "
          f"median of {max(1, args.repeat)} run(s); wall clock {time.perf_counter() - start:.1f} s in all.\n")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
