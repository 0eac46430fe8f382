"""Benchmark: does the gate grid kill what the mutation suite kills?

Takes the mutants a recorded run of the suite killed (`bench/mutation/full-run.json`, status
`killed`; a crash is no property's kill and is left out) and explores each on the gate grid's
scopes with `kcm mutate --grid gate` (config by config, in the grid's order, until a scope kills
it; checker/mutation/by_config.py). The suite's survivors are judged by liveness too, so this run
is (`--no-liveness` to judge by safety and goals only); the kills the recorded run owes to a
liveness property (`LIVENESS`) are counted apart, since only a liveness pass can repeat them.

Prints, per mutant, the suite's kill (config, property, steps) beside the gate's (scope,
property, steps); then **the mutants the suite kills and the gate does not**, with their status;
the mutants each scope reaches (its clean run executes their lines); the wall and CPU time (the
driver's, plus every mutant's as its process measured it: on Spark the tasks run in worker
processes); and Markdown rows that paste into docs/benchmarks.md. Writes the `kcm mutate` report
to --out (default kcm-out/mutate-gate).

The order of the scopes decides what a run costs, never its verdict (a kill on any scope is the
gate's): a mutant meets the next scope only while it lives, so a surviving mutant costs a run on
every scope. The scopes go in the order `home_first` gives: first those whose perturbation kinds
are all among the kinds of a suite config that killed one of the mutants (where each mutant is
likeliest to die), then the rest, each group in the grid's order. `--grid-order` keeps the grid's.

    .venv/bin/python bench/mutate_gate.py --engine local --sample 20   # a sample, one process
    .venv/bin/python bench/mutate_gate.py                              # every killed mutant, Spark local[2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The liveness properties (`kcm explore --liveness`): a kill by one needs the liveness pass.
LIVENESS = ("EventuallyQuiescent", "EventuallySettled", "QuiescenceAlwaysReachable")
KILLS = ("killed", "crashed")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", default=str(REPO_ROOT / "bench/mutation/full-run.json"),
                    help="the recorded suite run whose killed mutants are explored")
    ap.add_argument("--grid", default="gate")
    ap.add_argument("--engine", default="spark", choices=("local", "spark"))
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--sample", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    # Per scope and mutant (with a grid, --timeout bounds each scope's run): as bench/mutate.py.
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds per mutant and scope")
    ap.add_argument("--max-states", type=int, default=None, help="distinct states per scope (default: the grid's)")
    ap.add_argument("--no-liveness", dest="liveness", action="store_false")
    ap.add_argument("--out", default="kcm-out/mutate-gate")
    ap.add_argument("--grid-order", action="store_true", help="the grid's own order of scopes, not home_first's")
    args = ap.parse_args()
    if os.environ.get("KCM_PURE") != "1":
        # The baselines trace the model's source lines (kcm/compiled.py): run from source.
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "KCM_PURE": "1"})
    from kcm.checker import mutation as M
    from mutate import timed_mutate  # bench/mutate.py, beside this script: the shared runner

    from kcm.cli import main as kcm

    recorded = json.loads(Path(args.run).read_text(encoding="utf-8"))
    current = {m.id: m for m in M.generate()}
    killed = {e["id"]: e for e in recorded["mutants"] if e["status"] == "killed"}
    # An id names a line: an edit since the recording moves it (bench/carry_triage.py's rule).
    stale = sorted(i for i, e in killed.items()
                   if i not in current or current[i].description != e["description"])
    killed = {i: e for i, e in killed.items() if i not in stale}
    argv = ["mutate", "--grid", args.grid, *(a for i in killed for a in ("--mutant", i))]
    if not args.grid_order:
        argv += [a for s in home_first(args.grid, {e["config"] for e in killed.values()}) for a in ("--scope", s)]
    code, doc, cpu, mutant_cpu, total_cpu = timed_mutate(kcm, argv, args)
    print(f"CPU {total_cpu:.0f} s in all (driver {cpu:.0f} s, mutants {mutant_cpu:.0f} s); "
          f"{len(killed)} killed mutants in {Path(args.run).name} ({len(stale)} stale ids left out), "
          f"{doc['planned']} planned, {doc['total']} judged"
          + (" (interrupted)" if doc.get("interrupted") else ""))
    print()
    planned = M.sample([m for m in M.generate() if m.id in killed], args.sample, args.seed)  # as kcm mutate picks
    print("\n".join(rows(doc, killed, [m.id for m in planned])))
    return code


def kinds_of(cfg) -> set[str]:
    """The perturbation kinds a config may take: a budget above 0, or a kind in an overlapping run."""
    from kcm.model.actions import OVERLAP_KINDS

    return ({kind for kind, budget in OVERLAP_KINDS.items() if getattr(cfg, budget)}
            | {kind for run in cfg.overlapping for kind in run})


def home_first(grid_name: str, suite_configs: set[str]) -> list[str]:
    """The grid's scope names, those whose kinds are all among some suite config's first (see the
    module docstring). `suite_configs` are config names of a suite run (bench/mutation/NAME.toml, or
    a preset)."""
    from kcm import config
    from kcm.sweep import grid

    homes = []
    for name in sorted(suite_configs):
        path = REPO_ROOT / "bench" / "mutation" / f"{name}.toml"
        homes.append(kinds_of(config.load(None, path)[1] if path.exists() else config.load_preset(name)))
    scopes = grid.load(grid_name).scopes
    first = [s.name for s in scopes if any(kinds_of(s.config()) <= home for home in homes)]
    return first + [s.name for s in scopes if s.name not in first]


def rows(doc: dict, killed: dict, planned: list[str]) -> list[str]:
    """Markdown: per mutant the suite's kill and the gate's, the misses, the mutants an
    interruption left unjudged, and the reach per scope."""
    out = ["| mutant | suite: config, property, steps | gate: scope, property, steps |", "|---|---|---|"]
    missed, live_only = [], 0
    for e in doc["mutants"]:
        s = killed[e["id"]]
        live = s["property"] in LIVENESS
        live_only += live
        gate = (f"{e['config']}, {e['property'] or e['error']}, {e['trace_length'] or '-'}"
                if e["status"] in KILLS else f"**{e['status']}**")
        out.append(f"| `{e['id']}` | {s['config']}, {s['property']}{' (liveness)' if live else ''}, "
                   f"{s['trace_length'] or '-'} | {gate} |")
        if e["status"] not in KILLS:
            missed.append(e)
    n = len(doc["mutants"])
    out += ["", f"The gate kills {n - len(missed)} of the {n} judged ({live_only} killed by liveness in the "
                f"suite). Killed by the suite, not by the gate: {len(missed)}"
                + ("" if missed else " (none)") + "."]
    out += [f"- `{e['id']}` ({e['status']}): {e['description']}" for e in missed]
    judged = {e["id"] for e in doc["mutants"]}
    unjudged = [i for i in planned if i not in judged]
    if unjudged:
        scopes = f"{len(doc['configs'])} of {doc['grid']['scopes']} scopes"
        out.append(f"Not judged (the run was interrupted after {scopes}): {len(unjudged)}.")
        out += [f"- `{i}` (suite: {killed[i]['config']}, {killed[i]['property']}, {killed[i]['trace_length'] or '-'})"
                for i in unjudged]
    explored = doc["configs"]
    out += ["", "| scope | clean states | mutants reached |", "|---|---:|---:|"]
    out += [f"| {c['name']} | {c['distinct_states']:,} | {c.get('reaches')} of {doc['planned']} |" for c in explored]
    return out


if __name__ == "__main__":
    sys.exit(main())
