"""Benchmark: a full `kcm mutate` on the mutation suite, on Spark `local[2]` by default.

The suite (`bench/mutation/*.toml` plus the `tiny` preset) is the smallest set of configs that
between them reach every feature the mutated files implement: faults and ISR shrinks (tiny), a
controller move and a preferred election (m-move), a controlled shutdown then an auto rebalance
(m-shutdown), a reassignment (m-reassign), a topic deletion and creation (m-delete), and
perturbations overlapping before the cluster settles (m-overlap); and, from the triage of the
full run's survivors, what needs two operations in one run: two reassignments, the second on the
watch the first re-armed (m-reassign2), a topic deleted then created again (m-recreate), a
deletion while a replica's broker is down (m-delete-crash), a reassignment refused for a topic
being deleted (m-delete-reassign); a partition added to a topic (m-addparts); and an ElectLeaders
request, alone or after an ISR shrink and a crash, beside unclean election switched on for a topic
(m-elect); and a log-directory failure, alone or before a crash (m-logdir). Each is one to fifteen
thousand states, so that a mutant that survives (and must be explored on all of them) costs
seconds, not minutes. A mutant is explored on each config in turn, cheapest first, until one kills
it, and only on the configs where its lines run at all; a config where its successors equal the
clean model's on every clean state where its lines run is decided without a search.
A mutant the safety search does not kill is judged by liveness (`kcm mutate --liveness`) on the
configs where its states differ from the clean model's.

Prints the wall time, the CPU time (the driver's, plus every mutant's as its process measured it:
on Spark the tasks run in worker processes), the score and the tables, then the same as Markdown
rows that paste into docs/benchmarks.md; writes the report to --out (default kcm-out/mutation).
The triage of the survivors is written by hand, one TOML file per mutated source file, in
`bench/mutation/triage/` (checker/mutation/triage.py), and joined to the report.

    .venv/bin/python bench/mutate.py                       # Spark local[2], every mutant
    .venv/bin/python bench/mutate.py --engine local --sample 100
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
#: Cheapest first: a mutant stops at the first config that kills it.
SUITE = ("m-addparts", "m-logdir", "m-delete-reassign", "m-recreate", "m-reassign", "m-delete-crash", "m-delete",
         "m-overlap", "m-move", "m-reassign2", "tiny", "m-elect", "m-shutdown")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", default="spark", choices=("local", "spark"))
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--sample", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    # A mutant stuck inside one step (a loop the mutation made endless) is cut by --timeout: it
    # times out however long it is given. The default stays well above the longest mutant a full
    # run killed, crashed or kept, a margin for a loaded machine (docs/benchmarks.md, "Mutation
    # testing after the full triage").
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds per mutant")
    # A mutant whose state space outgrows the clean one many times over is cut deterministically
    # at this bound instead of after --timeout seconds, for the same outcome sooner. The bound
    # stays above the states any mutant of a full run was killed or crashed within
    # (docs/benchmarks.md, "Mutation testing after the full triage").
    ap.add_argument("--max-states", type=int, default=100_000, help="distinct states per config and mutant")
    ap.add_argument("--out", default="kcm-out/mutation")
    # The survivors of the safety search are judged by liveness too: a controller that re-puts an
    # event forever never reaches a state any other property judges (docs/checking.md).
    ap.add_argument("--no-liveness", dest="liveness", action="store_false",
                    help="judge survivors by safety only (as the runs before liveness judging)")
    args = ap.parse_args()
    if os.environ.get("KCM_PURE") != "1":
        # Mutation testing traces the model's source lines, which compiled modules do not report
        # (kcm/compiled.py): start again from source, as the `kcm mutate` command does.
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "KCM_PURE": "1"})
    from kcm.cli import main as kcm

    argv = ["mutate"]
    for name in SUITE:
        folder = REPO_ROOT / ("kcm/presets" if name == "tiny" else "bench/mutation")
        argv += ["--config", str(folder / f"{name}.toml")]
    argv += ["--triage", str(REPO_ROOT / "bench/mutation/triage")]
    code, doc, cpu, mutant_cpu, total_cpu = timed_mutate(kcm, argv, args)
    print(f"CPU {total_cpu:.0f} s in all (driver {cpu:.0f} s, mutants {mutant_cpu:.0f} s: "
          f"{mutant_cpu / max(1, len(doc['mutants'])):.2f} s per mutant); "
          f"searched {sum(e.get('searched', 0) for e in doc['mutants'])} mutant-configs, "
          f"decided {sum(e.get('compared', 0) for e in doc['mutants'])} without a search")
    print()
    print("\n".join(markdown_table(doc)))
    if "triage" in doc:
        t = doc["triage"]
        # No score after triage when nothing was judged (a sample of equivalents, say).
        after = t["score_after_triage"]
        print(f"\nTriage: {sum(t['explained'].values())} explained {t['explained']}, "
              f"{len(t['unexplained'])} unexplained, {len(t['stale'])} stale; "
              f"score after triage {'-' if after is None else f'{after:.1%}'}")
    return code


def timed_mutate(kcm, argv: list[str], args: argparse.Namespace) -> tuple[int, dict, float, float, float]:
    """Run `kcm mutate` with `argv` and the options both benchmarks share (engine, seed, timeout,
    budget, liveness, sample, out); print the run's first line (load, wall time, exit code) and
    return (exit code, its report, the driver's CPU, the mutants' CPU, the CPU in all)."""
    argv = [*argv, "--engine", args.engine, "--seed", str(args.seed), "--timeout", str(args.timeout),
            "--out", args.out]
    if args.max_states:
        argv += ["--max-states", str(args.max_states)]
    if args.liveness:
        argv += ["--liveness"]
    if args.engine == "spark":
        argv += ["--master", args.master]
    if args.sample:
        argv += ["--sample", str(args.sample)]
    load = os.getloadavg()
    started, cpu = time.perf_counter(), time.process_time()
    code = kcm(argv)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    if code == 2:  # refused before any work (its one line is on stderr): nothing to measure
        sys.exit(2)
    doc = json.loads((Path(args.out) / "mutation.json").read_text(encoding="utf-8"))
    mutant_cpu = sum(e.get("cpu_seconds", 0.0) for e in doc["mutants"])
    # Sequentially the driver ran the mutants itself; on Spark they ran in worker processes.
    total_cpu = cpu + (mutant_cpu if args.engine == "spark" else 0.0)
    print(f"\n{time.strftime('%Y-%m-%d %H:%M')} · {platform.node()} · {os.cpu_count()} cores · "
          f"load before {load[0]:.1f}, after {os.getloadavg()[0]:.1f} · engine {args.engine}"
          f"{' ' + args.master if args.engine == 'spark' else ''} · wall {wall:.0f} s · exit {code}")
    return code, doc, cpu, mutant_cpu, total_cpu


def markdown_table(doc: dict) -> list[str]:
    """The score table of a report as Markdown rows: all, by file, by operator."""
    out = ["| | total | killed | crashed | survived | equivalent (unreached) | timed out | score |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    c = doc["counts"]
    judged = doc["total"] - c["equivalent"]
    killed = c["killed"] + c["crashed"]
    score = f"**{killed / judged:.1%}** ({killed} / {judged})" if judged else "-"
    out.append(f"| all | {doc['total']} | {c['killed']} | {c['crashed']} | {c['survived']} | "
               f"{c['equivalent']} ({doc['unreached']}) | {c['timed_out']} | {score} |")
    for table in ("by_file", "by_operator"):
        for name, r in doc[table].items():
            judged = r["total"] - r["equivalent"]
            sc = f"{(r['killed'] + r['crashed']) / judged:.0%}" if judged else "-"
            out.append(f"| {name} | {r['total']} | {r['killed']} | {r['crashed']} | {r['survived']} | "
                       f"{r['equivalent']} | {r['timed_out']} | {sc} |")
    return out


if __name__ == "__main__":
    sys.exit(main())
