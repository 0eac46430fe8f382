"""Benchmark: the reach presets (`four`, `deep`) explored by the sequential explorer, with a time
limit, and where their states come from.

    python bench/reach.py [--presets four,deep] [--minutes 10] [--no-symmetry] [--from-settled]

For each preset: the verdict (or "incomplete" at the time limit), distinct and generated states,
the depth reached, the distinct states per BFS level, and the distinct states by origin: which
perturbations the run has spent (none: the cold start's interleavings) and the controller epoch
(how many elections happened). The origin is counted once per distinct state (the benchmark keeps
its own set of fingerprints, so it costs memory beside the explorer's). `--from-settled` starts each
run from the settled cluster (`spec.settle` of each initial state: startup done, nothing in
flight) instead of the cold start, with the preset's own budgets: how much of a preset's size the
startup's interleavings with its perturbations make. Prints markdown with the
date, machine and load; it writes nothing (docs/benchmarks.md is updated by hand from it).
"""

from __future__ import annotations

import argparse
import collections
import os
import platform
import time

from kcm.checker.engine.bfs import explore
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.checking.reduced_runs import one_per_orbit
from kcm.model.cluster import Budget
from kcm.model.spec import init_states, settle

from kcm import config


class Counted(KafkaModel):
    """The model, counting each distinct (representative) state's origin as it is fingerprinted."""

    def __init__(self, cfg, **kw) -> None:
        super().__init__(cfg, **kw)
        self.seen: set = set()
        self.origins: collections.Counter = collections.Counter()

    def fingerprint(self, state):
        fp = super().fingerprint(state)
        if fp not in self.seen:
            self.seen.add(fp)
            spent = "+".join(b.name.lower() for b in Budget if state.spent[b]) or "none (cold start)"
            self.origins[(spent, state.zk.controller_epoch)] += 1
        return fp


class CountedFromSettled(Counted):
    """`Counted`, its runs starting from the settled cluster: one initial state per orbit of the
    preset's initial states, settled."""

    def starts(self):
        return tuple(one_per_orbit([settle(self.cfg, s) for s in init_states(self.cfg)]))


def run(preset: str, minutes: float, symmetry: bool, from_settled: bool = False) -> None:
    cfg = config.load_preset(preset)
    model = (CountedFromSettled if from_settled else Counted)(cfg, symmetry=symmetry)
    deadline = time.monotonic() + minutes * 60

    def progress(p) -> None:
        if p.phase != "final" and time.monotonic() > deadline:
            raise KeyboardInterrupt  # the explorer ends the run as "incomplete" with what it has
    started, cpu = time.perf_counter(), time.process_time()
    result = explore(model, symmetry=symmetry, progress=progress, progress_interval=5.0,
                     stop_on_violation=False)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    s = result.stats
    levels = list(s.frontier_sizes)
    start = "from the settled cluster" if from_settled else "from a cold start"
    print(f"### {preset} (symmetry {'on' if model.has_symmetry and symmetry else 'off'}, {start})\n")
    print(f"verdict {result.verdict}{' (' + result.reason + ')' if result.reason else ''}; "
          f"{s.distinct:,} distinct, {s.generated:,} generated, depth {s.depth}; {wall:.0f} s wall, "
          f"{cpu:.0f} s CPU ({s.generated / max(cpu, 1e-9):,.0f} generated/s CPU); "
          f"load average at the end {os.getloadavg()[0]:.1f}; {len(model.init_states())} initial states")
    if result.goals:
        print("goals: " + ", ".join(f"{n} {'met (' + str(g.trace_length) + ')' if g.met else 'not met'}"
                                    for n, g in result.goals.items()))
    if result.violations:
        print("violations: " + ", ".join(f"{v.name} ({v.trace_length})" for v in result.violations))
    if result.known_violations:
        print("known 2.6 violations: " + ", ".join(f"{v.name} ({v.trace_length})" for v in result.known_violations))
    if levels:
        print("distinct per level: " + ", ".join(f"{n:,}" for n in levels))
    print("\n| spent | controller epoch | distinct states |\n|---|---:|---:|")
    for (spent, epoch), n in sorted(model.origins.items(), key=lambda kv: -kv[1])[:25]:
        print(f"| {spent} | {epoch} | {n:,} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="four,deep")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--no-symmetry", action="store_true")
    parser.add_argument("--from-settled", action="store_true",
                        help="start from the settled cluster instead of the cold start")
    args = parser.parse_args()
    print(f"Reach presets, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f} at the start\n")
    for preset in args.presets.split(","):
        run(preset, args.minutes, not args.no_symmetry, args.from_settled)


if __name__ == "__main__":
    main()
