"""Benchmark: a preset's disjoint runs explored in one process and in several (`kcm.checker.engine.runs`).

    python bench/runs.py [--presets default] [--jobs 2] [--repeat 2]

For each preset, alternately (so that a change in the machine's speed touches both alike): the
sequential explorer in one process, then the same with the preset's runs spread over `--jobs`
processes, each measurement in a fresh process. Prints wall seconds, the CPU seconds of every
process involved, the ratio of the wall times (what a user waits for), the rate of generated
states per CPU second (per core), and each run's size and time; checks that both give the same
verdict and counts. Writes nothing (docs/benchmarks.md is updated by hand from it).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import resource
import time

from kcm.checker.engine.runs import explore_runs
from kcm.model.checking.kafka_model import KafkaModel

from kcm import config


def measure(preset: str, jobs: int) -> dict:
    """One exploration of `preset` in this (fresh) process, its runs in `jobs` processes."""
    model = KafkaModel(config.load_preset(preset))
    started = time.perf_counter()
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    result = explore_runs(model, jobs=jobs)
    seconds = time.perf_counter() - started
    own_after, children_after = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = sum(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
              for before, after in ((own, own_after), (children, children_after)))
    s = result.stats
    return {"verdict": result.verdict, "distinct": s.distinct, "generated": s.generated, "depth": s.depth,
            "seconds": seconds, "cpu": cpu, "runs": result.extra.get("runs", [])}


def _measured(preset: str, jobs: int, out) -> None:
    out.put(measure(preset, jobs))


def in_fresh_process(preset: str, jobs: int) -> dict:
    """`measure` in a new process (spawned, not a pool's daemonic worker: it starts processes)."""
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=_measured, args=(preset, jobs, out))
    proc.start()
    result = out.get()
    proc.join()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="default")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    print(f"Disjoint runs, {time.strftime('%Y-%m-%d %H:%M')}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}\n")
    print("| preset | processes | verdict | distinct | generated | depth | wall s | CPU s | generated/s per CPU s "
          "| wall: 1 process / these |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    spread = []
    for preset in args.presets.split(","):
        for _ in range(args.repeat):
            pair = {}
            for jobs in (1, args.jobs):
                r = pair[jobs] = in_fresh_process(preset, jobs)
                ratio = f"{pair[1]['seconds'] / r['seconds']:.2f}x" if jobs != 1 else ""
                print(f"| {preset} | {jobs} | {r['verdict']} | {r['distinct']:,} | {r['generated']:,} | {r['depth']} "
                      f"| {r['seconds']:.1f} | {r['cpu']:.1f} | {r['generated'] / r['cpu']:,.0f} | {ratio} |",
                      flush=True)
            one, many = pair[1], pair[args.jobs]
            assert (one["verdict"], one["distinct"], one["generated"], one["depth"]) == \
                   (many["verdict"], many["distinct"], many["generated"], many["depth"]), (one, many)
            spread.append((preset, many["runs"]))
    print("\nEach run of the last spread exploration (run: distinct states, seconds in its worker):")
    for preset, runs in spread[-1:]:
        print(f"- {preset}: " + "; ".join(f"run {r['run']}: {r['distinct']:,}, {r['seconds']:.1f} s" for r in runs))
    print(f"\nLoad average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
