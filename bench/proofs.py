"""Benchmark: the Z3 proofs of the election rules, timed per broker count.

    python bench/proofs.py [--brokers 8] [--variant NAME] [--repeat 3]

Prints a markdown table: for each broker count, how many properties were proved or failed, the
total time (the median over `--repeat` runs; building the terms and solving) and the slowest
property. It writes nothing: the numbers go into docs/benchmarks.md by hand.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time

import z3
from kcm.checker import proofs


def bench(max_brokers: int, variant: str | None, repeat: int) -> list[str]:
    rows = ["| Brokers | Properties | Proved | Failed | Time (s) | Slowest property (s) |",
            "|--------:|-----------:|-------:|-------:|---------:|:---------------------|"]
    grand = 0.0
    for n in range(1, max_brokers + 1):
        runs = [proofs.run([n], variant=variant) for _ in range(repeat)]
        totals = [sum(r.seconds for r in results) for results in runs]
        median = statistics.median(totals)
        results = runs[totals.index(median)] if median in totals else runs[0]
        slowest = max(results, key=lambda r: r.seconds)
        grand += median
        rows.append(f"| {n} | {len(results)} | {sum(r.result == 'proved' for r in results)} "
                    f"| {sum(r.result == 'failed' for r in results)} | {median:.2f} "
                    f"| `{slowest.property}` ({slowest.seconds:.2f}) |")
    rows.append(f"| **1–{max_brokers}** | | | | **{grand:.2f}** | |")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brokers", type=int, default=proofs.DEFAULT_BROKERS)
    parser.add_argument("--variant", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    rules = proofs.rules_named(args.variant)
    start = time.perf_counter()
    rows = bench(args.brokers, args.variant, max(1, args.repeat))
    print(f"### Z3 proofs of the election rules ({rules.name})\n")
    print(f"Python {platform.python_version()}, z3 {z3.get_version_string()}, {platform.machine()}; "
          f"median of {max(1, args.repeat)} run(s); wall clock {time.perf_counter() - start:.1f} s in all.\n")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
