"""Benchmark: one grid swept on the local engine and on Spark, in one run (`kcm sweep`).

    python bench/sweep.py [--grid gate | --grid-file FILE] [--jobs 2] [--master local[2]]

Runs `kcm sweep` on the grid twice, each into a fresh results folder and in a fresh process: the
local engine with `--jobs` processes, then Spark on `--master`. Prints each engine's wall seconds
and the ratio (Spark over local), then per scope its distinct states and each engine's seconds;
checks that both engines give every scope the same verdict and counts. Writes nothing else
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


def sweep(args: argparse.Namespace, engine: str, out: Path) -> tuple[float, dict]:
    """One `kcm sweep` in a fresh process: (wall seconds, its sweep.json)."""
    grid = ["--grid-file", args.grid_file] if args.grid_file else ["--grid", args.grid]
    engine_args = ["--jobs", str(args.jobs)] if engine == "local" else ["--engine", "spark", "--master", args.master]
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kcm.cli", "sweep", *grid, "--out", str(out), *engine_args],
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"kcm sweep --engine {engine} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return wall, json.loads((out / "sweep.json").read_text(encoding="utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="gate")
    parser.add_argument("--grid-file", default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    print(f"bench/sweep.py · {args.grid_file or args.grid} · {platform.processor() or platform.machine()} · "
          f"local --jobs {args.jobs} vs Spark {args.master}")
    with tempfile.TemporaryDirectory(prefix="kcm-bench-sweep-") as tmp:
        local_s, local = sweep(args, "local", Path(tmp) / "local")
        spark_s, spark = sweep(args, "spark", Path(tmp) / "spark")
    print(f"local: {local_s:.1f} s wall, {local['scopes_finished']} of {local['scopes_total']} scopes, "
          f"{local['distinct_states']:,} states, verdict {local['verdict']}")
    print(f"spark: {spark_s:.1f} s wall, {spark['scopes_finished']} of {spark['scopes_total']} scopes, "
          f"{spark['distinct_states']:,} states, verdict {spark['verdict']}")
    print(f"ratio spark/local: {spark_s / local_s:.2f}")
    by_scope = {s["scope"]: s for s in spark["scopes"]}
    print(f"{'scope':<44}{'states':>10}{'depth':>7}{'local s':>9}{'spark s':>9}  verdict")
    differ = []
    for s in local["scopes"]:
        other = by_scope.get(s["scope"], {})
        print(f"{s['scope']:<44}{s['distinct']:>10,}{s['depth']:>7}{s['seconds']:>9.1f}"
              f"{other.get('seconds', float('nan')):>9.1f}  {s['verdict']}"
              + (f" ({s['reason']})" if s["reason"] else ""))
        same = ("verdict", "reason", "distinct", "depth", "violations", "known")
        if any(s[k] != other.get(k) for k in same):
            differ.append(s["scope"])
    if differ:
        sys.exit(f"the engines disagree on: {', '.join(differ)}")


if __name__ == "__main__":
    main()
