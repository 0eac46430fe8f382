"""Benchmark: one grid swept twice in one run (`kcm sweep`): on the local engine and on Spark, or
without and with liveness.

    python bench/sweep.py [--grid gate | --grid-file FILE] [--jobs 2] [--master local[2]] [--against spark|liveness]

Runs `kcm sweep` on the grid twice, each into a fresh results folder and in a fresh process: the
local engine with `--jobs` processes, then (`--against spark`, the default) Spark on `--master`, or
(`--against liveness`) the local engine again with `--liveness`, each scope's graph explored again
for the liveness pass. Prints each run's wall seconds and the CPU seconds its scopes' runs spent,
and the ratios (second over first), then per scope its distinct states and each run's seconds;
checks that both runs give every scope the same safety verdict and counts. Writes nothing else
(docs/benchmarks.md is updated by hand from it).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def sweep(args: argparse.Namespace, engine: str, out: Path, *, liveness: bool = False) -> tuple[float, dict]:
    """One `kcm sweep` in a fresh process: (wall seconds, its sweep.json)."""
    grid = ["--grid-file", args.grid_file] if args.grid_file else ["--grid", args.grid]
    engine_args = ["--jobs", str(args.jobs)] if engine == "local" else ["--engine", "spark", "--master", args.master]
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kcm.cli", "sweep", *grid, "--out", str(out), *engine_args,
                           *(["--liveness"] if liveness else [])], capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"kcm sweep --engine {engine}{' --liveness' if liveness else ''} exited {done.returncode}:\n"
                 f"{done.stderr[-2000:]}")
    return wall, json.loads((out / "sweep.json").read_text(encoding="utf-8"))


def cpu_seconds(doc: dict) -> float:
    """The CPU seconds a sweep's scopes spent in their runs (sweep.json's `cpu_s`)."""
    return float(doc["cpu_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="gate")
    parser.add_argument("--grid-file", default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--against", choices=("spark", "liveness"), default="spark",
                        help="The second run: Spark on --master, or the local engine with --liveness.")
    args = parser.parse_args()
    second = f"Spark {args.master}" if args.against == "spark" else f"local --jobs {args.jobs} --liveness"
    print(f"bench/sweep.py · {args.grid_file or args.grid} · {platform.processor() or platform.machine()} · "
          f"local --jobs {args.jobs} vs {second}")
    name = "spark" if args.against == "spark" else "liveness"
    with tempfile.TemporaryDirectory(prefix="kcm-bench-sweep-") as tmp:
        first_s, first = sweep(args, "local", Path(tmp) / "local")
        if args.against == "spark":
            second_s, other_doc = sweep(args, "spark", Path(tmp) / name)
        else:
            second_s, other_doc = sweep(args, "local", Path(tmp) / name, liveness=True)
    for label, wall, doc in (("local", first_s, first), (name, second_s, other_doc)):
        print(f"{label}: {wall:.1f} s wall, {cpu_seconds(doc):.0f} CPU s in the scopes' runs, "
              f"{doc['scopes_finished']} of {doc['scopes_total']} scopes, {doc['distinct_states']:,} states, "
              f"verdict {doc['verdict']}")
    print(f"ratio {name}/local: {second_s / first_s:.2f} wall, "
          f"{cpu_seconds(other_doc) / max(cpu_seconds(first), 1e-9):.2f} CPU")
    by_scope = {s["scope"]: s for s in other_doc["scopes"]}
    print(f"{'scope':<44}{'states':>10}{'depth':>7}{'local s':>9}{name + ' s':>11}  verdict")
    differ = []
    for s in first["scopes"]:
        other = by_scope.get(s["scope"], {})
        print(f"{s['scope']:<44}{s['distinct']:>10,}{s['depth']:>7}{s['seconds']:>9.1f}"
              f"{other.get('seconds', float('nan')):>11.1f}  {s['verdict']}"
              + (f" ({s['reason']})" if s["reason"] else ""))
        same = ("verdict", "reason", "distinct", "depth", "violations", "known")
        if any(s[k] != other.get(k) for k in same):
            differ.append(s["scope"])
    if differ:
        sys.exit(f"the two runs disagree on: {', '.join(differ)}")


if __name__ == "__main__":
    main()
