"""Benchmark: how soon the gate grid catches each historical bug (`kcm sweep --fail-fast`).

    python bench/gate_variants.py [V1 V2 ...] [--grid gate] [--jobs 2]

For each variant (`kcm variants`; by default V1..V13, not the synthetic livelock L1, which only
`--liveness` sees) runs `kcm sweep --grid gate --variant V --fail-fast --jobs 2` in a fresh
process, into a fresh results folder, and records the scope it stopped at (the first to break a
property, settled scopes first), the properties broken there with their shortest traces, whether
the variant's own property is among them, how many scopes ran, and the sweep's wall and CPU
seconds (its processes included). Prints one Markdown row per variant for docs/benchmarks.md;
writes nothing else. A variant the gate does not catch is a row that says so.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kcm.model.variants import VARIANTS


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(variant: str, args: argparse.Namespace, out: Path) -> dict:
    """One fail-fast sweep of `variant`: the figures of its row."""
    cpu, started = children_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kcm.cli", "sweep", "--grid", args.grid, "--variant", variant,
                           "--fail-fast", "--jobs", str(args.jobs), "--out", str(out)],
                          capture_output=True, text=True)
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu
    if done.returncode not in (0, 1, 3):
        sys.exit(f"kcm sweep --variant {variant} exited {done.returncode}:\n{done.stderr[-2000:]}")
    doc = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    breaks = VARIANTS[variant].breaks
    broken = sorted(((e["steps"], row["property"], e["scope"]) for row in doc["properties"]
                     for e in row["broken_in"]), key=lambda t: (t[0] is None, t[0] or 0, t[1]))
    own = next((b for b in broken if b[1] == breaks), None)
    return {"variant": variant, "breaks": breaks, "verdict": doc["verdict"], "scope": broken[0][2] if broken else None,
            "broken": [(name, steps) for steps, name, _ in broken], "own_steps": own[0] if own else None,
            "scopes_run": doc["scopes_finished"], "scopes_total": doc["scopes_total"],
            "wall_s": wall, "cpu_s": cpu}


def row(r: dict) -> str:
    if r["scope"] is None:
        return (f"| {r['variant']} | {r['breaks']} | not caught ({r['verdict']}) | - | - | "
                f"{r['scopes_run']} of {r['scopes_total']} | {r['wall_s']:.0f} s | {r['cpu_s']:.0f} s |")
    own = f"{r['own_steps']} steps" if r["own_steps"] is not None else "not in this scope"
    others = ", ".join(f"{name} ({steps})" for name, steps in r["broken"] if name != r["breaks"])
    return (f"| {r['variant']} | {r['breaks']} | `{r['scope']}` | {own} | {others or '-'} | "
            f"{r['scopes_run']} of {r['scopes_total']} | {r['wall_s']:.0f} s | {r['cpu_s']:.0f} s |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="*", metavar="V",
                        help="variants to run [default: V1..V13]")
    parser.add_argument("--grid", default="gate")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    names = args.variants or [f"V{n}" for n in range(1, 14)]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant {unknown[0]}; choose from {', '.join(VARIANTS)}")
    print(f"bench/gate_variants.py · grid {args.grid} · --fail-fast --jobs {args.jobs} · "
          f"{platform.processor() or platform.machine()}")
    print("| variant | its property | stopped at (first scope with a violation) | its property there "
          "| other properties broken there (steps) | scopes run | wall | CPU |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        with tempfile.TemporaryDirectory(prefix="kcm-bench-gate-variants-") as tmp:
            print(row(run(name, args, Path(tmp) / "sweep")), flush=True)


if __name__ == "__main__":
    main()
