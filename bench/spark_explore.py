"""Benchmark: the sequential explorer against the Spark explorer on `local[1]` and `local[2]`.

For each preset (tiny, default and large by default; `--presets` to choose, since the presets are
still being tuned and the big ones take long), each engine explores the whole state space once and
the table gives distinct and generated states per second. For Spark also: the candidates shuffled
(successors kept by their partition's expansion; `--owners` compares who owns a state), the bytes
shuffled, the visited set's bytes per state (16, the sorted fingerprint arrays), and the peak bytes
of cached level RDDs per distinct state (visited sets, frontiers, and the levels kept until the
next lineage cut), read from Spark's storage status after each level, and the CPU seconds of the
driver, the JVM and the Python workers (which, on two cores, compete with each other;
`bench/cores.py` measures what a second core gives this machine at best).

The fixed cost of a level (scheduling two stages, starting tasks, the JVM count, the status-store
read) is measured on `Chain`, a model whose states are small ints in a single line: seconds per
level with nothing to compute.

Prints a markdown table with the date and the machine; docs/benchmarks.md is written by hand from it.

    .venv/bin/python bench/spark_explore.py --presets tiny
    .venv/bin/python bench/spark_explore.py --presets tiny default --masters 'local[1]' 'local[2]'
    .venv/bin/python bench/spark_explore.py --presets default --max-depth 8   # a prefix of a big one
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import platform
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # executors import `bench.spark_explore:Chain` from here too
    sys.path.insert(0, str(REPO_ROOT))

from kcm.checker.engine.contract import Model  # noqa: E402


class Chain(Model):
    """States 0 .. length, one step each: a level with nothing in it but Spark's own cost."""

    name = "chain"

    def __init__(self, length: int) -> None:
        self.length = length

    def init_states(self):
        return (0,)

    def enabled_actions(self, s):
        return ("next",) if s < self.length else ()

    def step(self, s, a):
        return s + 1

    def action_name(self, a):
        return "Next"

    def is_terminal(self, s):
        return s == self.length


def fingerprint_owned_kafka(cfg, symmetry: bool = True):
    """The Kafka model with no locality: its states owned by their fingerprint, as before
    `KafkaModel.locality` (`--owners fingerprint`), to measure what the locality saves in one run."""
    from kcm.model.checking.kafka_model import KafkaModel

    class FingerprintOwnedKafka(KafkaModel):
        locality = Model.locality

    return FingerprintOwnedKafka(cfg, symmetry=symmetry)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = ""
    with contextlib.suppress(OSError, ValueError, IndexError):
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kib / 2**20:.0f} GiB"
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    import pyspark

    return (f"{cpu}, {os.cpu_count()} cores{memory}; Python {platform.python_version()}, "
            f"PySpark {pyspark.__version__}, {java[0] if java else 'java ?'}")


def _proc_stat(pid: int) -> tuple[int, str, float]:
    """(parent pid, command name, CPU seconds of the process and of its reaped children)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    name = text[text.index("(") + 1:text.rindex(")")]
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), name, sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def cpu_by_process() -> dict[str, float]:
    """CPU seconds so far of this driver, of the JVM it started, and of the Python workers under
    the JVM (PySpark's daemon and the workers it forked: a worker's time reaches the daemon's
    children's time when it exits). On two cores these compete with each other, so they say where
    Spark's CPU goes beyond the sequential explorer's."""
    procs: dict[int, tuple[int, str, float]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError):  # gone since the listing
                procs[int(entry.name)] = _proc_stat(int(entry.name))
    me = os.getpid()
    totals = {"driver": procs.get(me, (0, "", 0.0))[2], "jvm": 0.0, "workers": 0.0}
    children: dict[int, list[int]] = {}
    for pid, (ppid, _name, _seconds) in procs.items():
        children.setdefault(ppid, []).append(pid)
    for jvm in (pid for pid in children.get(me, ()) if procs[pid][1] == "java"):
        totals["jvm"] += procs[jvm][2]
        below = list(children.get(jvm, ()))
        while below:
            pid = below.pop()
            totals["workers"] += procs[pid][2]
            below += children.get(pid, ())
    return totals


def cached_bytes(sc) -> int:
    return sum(info.memSize() + info.diskSize() for info in sc._jsc.sc().getRDDStorageInfo())


def run_sequential(preset: str, symmetry: bool, max_depth: int | None) -> dict:
    from kcm.checker.engine.bfs import explore
    from kcm.model.checking.kafka_model import KafkaModel

    from kcm.config import load_preset

    load = os.getloadavg()[0]
    started, cpu = time.perf_counter(), time.process_time()
    result = explore(KafkaModel(load_preset(preset), symmetry=symmetry), max_depth=max_depth)
    return {"result": result, "seconds": time.perf_counter() - started,
            "cpu": {"driver": time.process_time() - cpu}, "load": (load, os.getloadavg()[0])}


def run_spark(spark, spec, partitions: int | None, max_depth: int | None = None) -> dict:
    from kcm.spark_explore.bfs import explore_spark

    peak = [0]

    def sample(_figures) -> None:
        peak[0] = max(peak[0], cached_bytes(spark.sparkContext))

    load = os.getloadavg()[0]
    cpu = cpu_by_process()
    started = time.perf_counter()
    result = explore_spark(spark, spec, partitions=partitions, max_depth=max_depth, on_level=sample)
    seconds = time.perf_counter() - started
    cpu = {k: v - cpu[k] for k, v in cpu_by_process().items()}
    return {"result": result, "seconds": seconds, "peak_cached": peak[0], "cpu": cpu,
            "load": (load, os.getloadavg()[0])}


def row(preset: str, engine: str, run: dict) -> str:
    r, seconds = run["result"], run["seconds"]
    s = r.stats
    cells = [preset, engine, f"{s.distinct:,}", f"{s.generated:,}", str(s.depth), f"{seconds:.1f}",
             f"{s.distinct / seconds:,.0f}", f"{s.generated / seconds:,.0f}"]
    levels = r.extra.get("spark", {}).get("levels")
    if levels:
        shuffled = sum(lv["shuffle_write_bytes"] for lv in levels)
        cells += [f"{sum(lv['candidates'] for lv in levels):,}", f"{shuffled / 2**20:.1f}",
                  f"{levels[-1]['visited_bytes'] / max(s.distinct, 1):.0f}",
                  f"{run['peak_cached'] / max(s.distinct, 1):.0f}"]
    else:
        cells += ["", "", "", ""]
    cpu = run["cpu"]
    cells.append(" / ".join(f"{cpu[k]:.1f}" for k in ("driver", "jvm", "workers") if k in cpu))
    cells.append("{:.1f}-{:.1f}".format(*run["load"]))
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presets", nargs="*", default=["tiny", "default", "large"],
                        help="presets to explore (none: only the fixed cost per level)")
    parser.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"])
    parser.add_argument("--no-sequential", action="store_true")
    parser.add_argument("--no-symmetry", action="store_true")
    parser.add_argument("--partitions", type=int, default=None, help="P (default: the cores, as explore_spark)")
    parser.add_argument("--repeat", type=int, default=1, help="run every engine this many times, alternating")
    parser.add_argument("--chain", type=int, default=20, help="levels of the fixed-cost chain")
    parser.add_argument("--owners", nargs="+", choices=("locality", "fingerprint"), default=["locality"],
                        help="who owns a Kafka state on Spark: its ZooKeeper record (the model's locality, "
                             "as kcm runs) or its fingerprint (as before); several alternate")
    parser.add_argument("--max-depth", type=int, default=None,
                        help="explore only this many levels (a prefix of a big preset; verdict incomplete)")
    args = parser.parse_args(argv)

    from kcm.spark_explore.session import spark_session
    from kcm.spark_explore.spec import ModelSpec

    from kcm.config import load_preset

    symmetry = not args.no_symmetry
    rows: list[str] = []
    fixed: list[str] = []
    results: dict[tuple[str, str], object] = {}
    # Each engine in a fresh state, as a user runs it: the sequential explorer in its own spawned
    # process (a driver that has just run it holds its heap and caches, which slow the Spark run
    # after it), and a new Spark session per repetition (reused workers
    # would start with the previous run's caches warm). Repetitions alternate the engines, so a
    # drift in the machine's speed shows in both.
    for _ in range(args.repeat):
        if not args.no_sequential:
            for preset in args.presets:
                with multiprocessing.get_context("spawn").Pool(1) as pool:
                    run = pool.apply(run_sequential, (preset, symmetry, args.max_depth))
                results[(preset, "sequential")] = run["result"]
                rows.append(row(preset, "sequential", run))
                print(rows[-1], flush=True)
        for master in args.masters:
            spark = spark_session(master, app_name="kcm-bench", python_path=(REPO_ROOT,))
            try:
                chain = ModelSpec.of("bench.spark_explore:Chain", args.chain)
                run_spark(spark, chain, args.partitions)  # warm-up: Python workers, JIT
                run = run_spark(spark, chain, args.partitions)
                fixed.append(f"| {master} | {run['result'].stats.depth} | "
                             f"{run['seconds'] / run['result'].stats.depth:.2f} | "
                             "{:.1f}-{:.1f} |".format(*run["load"]))
                print(fixed[-1], flush=True)
                for preset in args.presets:
                    for owners in args.owners:
                        if owners == "locality":
                            spec = ModelSpec.kafka(load_preset(preset), symmetry=symmetry)
                        else:
                            spec = ModelSpec.of("bench.spark_explore:fingerprint_owned_kafka",
                                                load_preset(preset), symmetry=symmetry)
                        run = run_spark(spark, spec, args.partitions, args.max_depth)
                        engine = f"spark {master}" + (f", owned by {owners}" if len(args.owners) > 1 else "")
                        results[(preset, engine)] = run["result"]
                        rows.append(row(preset, engine, run))
                        print(rows[-1], flush=True)
            finally:
                spark.stop()

    for preset in args.presets:  # every engine must agree, or the numbers mean nothing
        counts = {engine: (r.stats.distinct, r.stats.generated, r.verdict)
                  for (p, engine), r in results.items() if p == preset}
        if len(set(counts.values())) > 1:
            print(f"WARNING: engines disagree on {preset}: {counts}", file=sys.stderr)

    print()
    depth = f", levels limited to {args.max_depth}" if args.max_depth is not None else ""
    print(f"Spark explorer benchmark, {date.today().isoformat()}, symmetry {'on' if symmetry else 'off'}{depth}")
    print(f"Machine: {machine()}")
    print()
    print("Load: the 1-minute load average before and after each run (other jobs share the machine).")
    print()
    print("| preset | engine | distinct | generated | depth | seconds | distinct/s | generated/s "
          "| candidates | shuffled MiB | visited B/state | peak cached B/state "
          "| CPU s: driver / JVM / workers | load |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    print("\n".join(rows))
    print()
    print("Fixed cost per level (the `Chain` model, trivial states):")
    print()
    print("| master | levels | seconds/level | load |")
    print("|---|---:|---:|---|")
    print("\n".join(fixed))


if __name__ == "__main__":
    main()
