"""Benchmark: what `kcm explore --liveness` costs over a plain exploration, one core.

    python bench/liveness.py [--presets tiny,default]

For each preset, in a fresh process each (the peak resident memory only grows within a process):
the plain exploration (symmetry off, as liveness needs) and the exploration that keeps the graph,
with the wall and CPU seconds and the peak resident memory growth per distinct state; then the
liveness pass (both properties) on the kept graph, and the graph's own size: the compact arrays'
bytes per edge and per state (`ExploredGraph.nbytes`), the explorer's node-id map per state, and
what a networkx DiGraph of the healing subgraph costs per edge (built and measured with
tracemalloc, on presets up to `--nx-max-edges` edges). Prints a markdown table with the date,
machine and load average; docs/benchmarks.md is updated by hand from it.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import resource
import sys
import time
import tracemalloc

from kcm.checker.engine.bfs import explore
from kcm.checker.engine.graph import to_networkx
from kcm.checker.engine.liveness import check_liveness
from kcm.model.checking.epoch_quotient import EpochQuotientModel
from kcm.model.checking.kafka_model import KafkaModel

from kcm import config


def _rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run(preset: str, keep: bool, nx_max_edges: int, quotient: bool = False) -> dict:
    # `quotient`: as `kcm explore --liveness` runs it, modulo controller epochs (model/checking/epoch_quotient.py)
    model = (EpochQuotientModel(config.load_preset(preset)) if quotient
             else KafkaModel(config.load_preset(preset), symmetry=False, initial_orbits=True))
    rss = _rss()
    started, cpu = time.perf_counter(), time.process_time()
    result = explore(model, symmetry=False, keep_graph=keep, stop_on_violation=not keep)
    out = {"distinct": result.stats.distinct, "generated": result.stats.generated,
           "seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu,
           "rss_per_state": (_rss() - rss) / max(result.stats.distinct, 1)}
    if keep:
        graph = result.extra["graph"]
        started = time.perf_counter()
        live = check_liveness(model, graph)
        out.update(live_seconds=time.perf_counter() - started, backend=live.backend, verdict=live.verdict,
                   edges=graph.edges, nodes=graph.nodes, array_bytes=graph.nbytes(),
                   healing_edges=live.healing_edges)
        if live.healing_edges <= nx_max_edges:
            tracemalloc.start()
            g = to_networkx(graph, bytearray(1 - q for q in graph.quiescent), graph.healing_mask())
            out["nx_bytes_per_edge"] = tracemalloc.get_traced_memory()[0] / max(g.number_of_edges(), 1)
            tracemalloc.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="tiny,default")
    parser.add_argument("--nx-max-edges", type=int, default=2_000_000)
    parser.add_argument("--quotient", action="store_true",
                        help="also a row per preset modulo controller epochs, as kcm explore --liveness runs it")
    args = parser.parse_args()
    print(f"Liveness, {time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}\n")
    print("| preset | distinct | edges | plain explore s (CPU) | keeping the graph s (CPU) | liveness pass s "
          "| backend | verdict | peak RSS/state plain | peak RSS/state with graph | arrays B/edge | arrays B/state "
          "| networkx B/edge |")
    print("|---|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|")
    ctx = multiprocessing.get_context("spawn")
    rows = [(p, False) for p in args.presets.split(",")]
    if args.quotient:
        rows += [(p, True) for p in args.presets.split(",")]
    for preset, quotient in rows:
        with ctx.Pool(1) as pool:
            plain = pool.apply(run, (preset, False, args.nx_max_edges, quotient))
        with ctx.Pool(1) as pool:
            kept = pool.apply(run, (preset, True, args.nx_max_edges, quotient))
        if quotient:
            preset += " (modulo controller epochs)"
        per_edge = 6
        per_state = (kept["array_bytes"] - per_edge * kept["edges"]) / kept["nodes"]
        nx_cell = f"{kept['nx_bytes_per_edge']:.0f}" if "nx_bytes_per_edge" in kept else "(not built)"
        print(f"| {preset} | {kept['distinct']:,} | {kept['edges']:,} | {plain['seconds']:.1f} ({plain['cpu']:.1f}) "
              f"| {kept['seconds']:.1f} ({kept['cpu']:.1f}) | {kept['live_seconds']:.1f} | {kept['backend']} "
              f"| {kept['verdict']} | {plain['rss_per_state']:.0f} | {kept['rss_per_state']:.0f} | {per_edge} "
              f"| {per_state:.0f} | {nx_cell} |", flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
