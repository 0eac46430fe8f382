"""Benchmark: `kcm fuzz` throughput (lock-step steps per second), clean presets and the variants.

    python bench/fuzz.py [--presets tiny,default,large] [--examples 200] [--steps 50] [--seed 0] [--repeat 3]
                         [--variants V1,...,V9 | --variants none]

Clean presets: for each, runs the Hypothesis lock-step machine (`kcm.checker.stateful.fuzz`, the
model and the stepped implementation compared after every step) and, for scale, the same walk over
the model alone (`compare=False`). Examples, steps taken (stuttering steps, which do nothing once
every bound is spent, are counted apart), wall time (median of `--repeat` runs) and steps per
second. A healthy preset runs clean; a run that fails stops early and is marked.

Variants: `kcm fuzz --variant V` as the command runs it (its preset, the variant bounds
`VARIANT_EXAMPLES` × `VARIANT_STEPS`, seed 0, the implementation compared), once each: which
example failed first and how long that walk was, the shrunk length beside the explorer's shortest
(breadth-first on the same preset, to the shrunk depth), the time to the first failure and in all
(shrinking included), and steps per second over the whole run.

It writes nothing: prints markdown tables with the date and the machine; the numbers go into
docs/benchmarks.md by hand.
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
from kcm.checker.engine.bfs import explore
from kcm.checker.stateful import VARIANT_EXAMPLES, VARIANT_STEPS, FuzzStats, fuzz
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.variants import VARIANTS

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


def bench_variants(names: list[str]) -> list[str]:
    rows = ["| Variant | Invariant | First failing example | Its length | Shrunk | Explorer's shortest "
            "| To first failure (s) | In all (s) | Runs with shrinking | Steps/s |",
            "|:--------|:----------|----------------------:|-----------:|-------:|--------------------:"
            "|---------------------:|-----------:|--------------------:|--------:|"]
    for name in names:
        v = VARIANTS[name]
        cfg = load_preset(v.preset)
        stats = FuzzStats()
        started = time.perf_counter()
        first_at = [None]

        def note_first(s: FuzzStats, first_at=first_at, started=started) -> None:
            if s.failures and first_at[0] is None:
                first_at[0] = time.perf_counter() - started

        stats.on_change = note_first
        result = fuzz(cfg, examples=VARIANT_EXAMPLES, steps=VARIANT_STEPS, seed=0, stats=stats)
        seconds = time.perf_counter() - started
        failure = result.failure
        if failure is None:
            rows.append(f"| {name} | {v.breaks} | not found in {VARIANT_EXAMPLES} | | | | | {seconds:.1f} "
                        f"| {stats.examples:,} | {stats.steps / seconds:,.0f} |")
            continue
        shortest = explore(KafkaModel(cfg), properties=[v.breaks], max_depth=failure.length).violation(v.breaks)
        wrong = "" if failure.prop == v.breaks else f" (found {failure.prop})"
        rows.append(f"| {name} | {v.breaks}{wrong} | {stats.first_example:,} | {stats.first} | {failure.length} "
                    f"| {shortest.trace_length if shortest else 'none'} | {first_at[0]:.1f} | {seconds:.1f} "
                    f"| {stats.examples:,} | {stats.steps / seconds:,.0f} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="tiny,default")
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--variants", default=",".join(sorted(VARIANTS)), help="comma-separated, or 'none'")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print("### kcm fuzz: lock-step steps per second\n")
    print(f"{datetime.date.today().isoformat()}; {platform.node() or 'unknown host'}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs, {platform.processor() or platform.system()}; Python {platform.python_version()}, "
          f"Hypothesis {hypothesis.__version__}; load average at start {_load()}.\n")
    rows = bench(args.presets.split(","), args.examples, args.steps, args.seed, max(1, args.repeat))
    print(f"Clean presets: {args.examples} examples × {args.steps} steps, seed {args.seed}, "
          f"median of {max(1, args.repeat)} run(s).\n")
    print("\n".join(rows))
    if args.variants != "none":
        vrows = bench_variants([v.strip().upper() for v in args.variants.split(",") if v.strip()])
        print(f"\nVariants (`kcm fuzz --variant V`: {VARIANT_EXAMPLES} examples × {VARIANT_STEPS} steps at most, "
              f"seed 0, the implementation compared), one run each.\n")
        print("\n".join(vrows))
    print(f"\nWall clock {time.perf_counter() - start:.1f} s in all; load average at the end {_load()}.")
    return 0


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
