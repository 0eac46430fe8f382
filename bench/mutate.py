"""Benchmark: a full `kcm mutate` on the mutation suite, on Spark `local[2]` by default.

The suite (`bench/mutation/*.toml` plus the `tiny` preset) is the smallest set of configs that
between them reach every feature the mutated files implement: faults and ISR shrinks (tiny), a
controller move and a preferred election (m-move), a controlled shutdown then an auto rebalance
(m-shutdown), a reassignment (m-reassign), a topic deletion and creation (m-delete), and
perturbations overlapping before the cluster settles (m-overlap). Each is a few thousand to
fifteen thousand states, so that a mutant that survives (and must be explored on all of them)
costs seconds, not minutes. A mutant is explored on each config in turn, cheapest first, until
one kills it, and only on the configs where its lines run at all.

Prints the wall time, the score and the tables, and writes the report to --out (default
kcm-out/mutation); docs/benchmarks.md and the triage in docs/checking.md are written by hand from it.

    .venv/bin/python bench/mutate.py                       # Spark local[2], every mutant
    .venv/bin/python bench/mutate.py --engine local --sample 100
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
#: Cheapest first: a mutant stops at the first config that kills it.
SUITE = ("m-reassign", "m-delete", "m-overlap", "m-move", "tiny", "m-shutdown")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", default="spark", choices=("local", "spark"))
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--sample", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per mutant")
    # A mutant whose state space outgrows the clean one many times over (the largest clean config
    # has 14,187 states) is cut deterministically at this bound instead of after --timeout seconds:
    # in the sample of 150 the two timeouts took a fifth of the run's task time.
    ap.add_argument("--max-states", type=int, default=200_000, help="distinct states per config and mutant")
    ap.add_argument("--out", default="kcm-out/mutation")
    args = ap.parse_args()
    from kcm.cli import main as kcm

    argv = ["mutate"]
    for name in SUITE:
        folder = REPO_ROOT / ("kcm/presets" if name == "tiny" else "bench/mutation")
        argv += ["--config", str(folder / f"{name}.toml")]
    argv += ["--engine", args.engine, "--seed", str(args.seed), "--timeout", str(args.timeout), "--out", args.out]
    if args.max_states:
        argv += ["--max-states", str(args.max_states)]
    if args.engine == "spark":
        argv += ["--master", args.master]
    if args.sample:
        argv += ["--sample", str(args.sample)]
    load = os.getloadavg()
    started = time.perf_counter()
    code = kcm(argv)
    wall = time.perf_counter() - started
    print(f"\n{time.strftime('%Y-%m-%d %H:%M')} · {platform.node()} · {os.cpu_count()} cores · "
          f"load before {load[0]:.1f}, after {os.getloadavg()[0]:.1f} · engine {args.engine}"
          f"{' ' + args.master if args.engine == 'spark' else ''} · wall {wall:.0f} s · exit {code}")
    return code


if __name__ == "__main__":
    sys.exit(main())
