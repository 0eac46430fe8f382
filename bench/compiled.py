"""Benchmark: the explorer compiled with Cython against the same source run by the interpreter.

Each run is a fresh process (`KCM_PURE=1` for the pure one), the two alternating, so that both see
the same machine; the CPU seconds of the search (`time.process_time`, after the imports and the
initial states) are compared as a ratio per pair. Counts must be equal, or the bench fails.

    .venv/bin/python bench/compiled.py                          # default, first 12 levels, 2 pairs
    .venv/bin/python bench/compiled.py --preset default --max-depth 0 --pairs 1   # the whole preset
    .venv/bin/python bench/compiled.py --preset deep --max-depth 7

Prints a markdown table with the date and the machine; docs/benchmarks.md is written by hand from it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from datetime import date

RUN = """
import json, sys, time
from kcm import compiled
from kcm.checker.engine.bfs import explore
from kcm.config import load_preset
from kcm.model.checking.kafka_model import KafkaModel
preset, depth = sys.argv[1], int(sys.argv[2]) or None
model = KafkaModel(load_preset(preset))
model.init_states()
started = time.process_time()
r = explore(model, max_depth=depth)
cpu = time.process_time() - started
print(json.dumps({"status": compiled.status(), "cpu": cpu, "distinct": r.stats.distinct,
                  "generated": r.stats.generated, "depth": r.stats.depth, "verdict": r.verdict}))
"""


def run(preset: str, depth: int, pure: bool) -> dict:
    env = dict(os.environ)
    env.pop("KCM_PURE", None)
    if pure:
        env["KCM_PURE"] = "1"
    done = subprocess.run([sys.executable, "-c", RUN, preset, str(depth)], env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="default")
    parser.add_argument("--max-depth", type=int, default=12, help="levels to expand (0: the whole preset)")
    parser.add_argument("--pairs", type=int, default=2)
    args = parser.parse_args()
    print(f"{date.today()} · {platform.processor() or platform.machine()} · {os.cpu_count()} cores · "
          f"Python {platform.python_version()} · load {os.getloadavg()[0]:.1f}")
    print(f"\n`{args.preset}`, {'whole' if not args.max_depth else f'first {args.max_depth} levels'}\n")
    print("| pair | distinct | generated | pure CPU s | compiled CPU s | ratio | compiled generated/s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for pair in range(1, args.pairs + 1):
        pure, fast = run(args.preset, args.max_depth, True), run(args.preset, args.max_depth, False)
        if pure["status"] != "pure Python" or fast["status"] != "compiled":
            print(f"not a fair pair: {pure['status']} / {fast['status']} (run `make` to build)", file=sys.stderr)
            return 2
        same = ("distinct", "generated", "depth", "verdict")
        if any(pure[k] != fast[k] for k in same):
            print(f"the two explored differently: {pure} / {fast}", file=sys.stderr)
            return 1
        print(f"| {pair} | {pure['distinct']:,} | {pure['generated']:,} | {pure['cpu']:.1f} | {fast['cpu']:.1f} "
              f"| {pure['cpu'] / fast['cpu']:.2f}x | {fast['generated'] / fast['cpu']:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
