"""`kcm mutate`: seed faults into the model's controller and brokers, explore each mutant, and grade
the properties by the mutants they kill (kcm.checker.mutate; Spark: kcm.spark_explore.mutate)."""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.console import Console

from kcm import config
from kcm.checker import mutate as M
from kcm.checker import mutation_report, mutation_triage
from kcm.checker.engine.errors import EXIT_INCOMPLETE, EXIT_PASS, EXIT_VIOLATION, UsageError, check_writable_dir
from kcm.checker.engine.report import write_json, write_junit
from kcm.exploration import ENGINES, start_spark


def _configs(presets, config_files) -> list[tuple[str, object]]:
    out = [config.load(p, None) for p in presets]
    for f in config_files:
        _, cfg = config.load(None, f)
        out.append((Path(f).stem, cfg))  # the file's stem names it in the report
    return out or [config.load("tiny", None)]


@click.command(name="mutate")
@click.option("--preset", "presets", multiple=True, metavar="NAME",
              help="Explore each mutant on this preset (repeatable; default: tiny).")
@click.option("--config", "config_files", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="A TOML config file (repeatable); a mutant is explored on each config in turn until one kills it.")
@click.option("--engine", type=click.Choice(ENGINES), default="local", show_default=True,
              help="One mutant after the other, or one mutant per Spark task.")
@click.option("--master", default=None, metavar="URL", help="Spark master (default local[*]).")
@click.option("--files", "files", multiple=True, metavar="FILE",
              help=f"Mutate only these model files (repeatable; default: {', '.join(M.MUTABLE_FILES)}).")
@click.option("--operators", "operators", multiple=True, metavar="OP",
              help=f"Use only these operators (repeatable; default: {', '.join(M.OPERATORS)}).")
@click.option("--mutant", "ids", multiple=True, metavar="ID",
              help="Only the mutant with this id (repeatable; see --list).")
@click.option("--sample", type=click.IntRange(min=1), default=None, help="Run this many mutants, picked with --seed.")
@click.option("--seed", type=int, default=0, show_default=True, help="The seed of --sample and --walks.")
@click.option("--max-states", type=click.IntRange(min=1), default=None,
              help="Distinct states per config a mutant may explore (beyond: timed out).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds a mutant may take over all configs (beyond: timed out).")
@click.option("--walks", type=click.IntRange(min=1), default=None,
              help="Random walks per config instead of exhaustive search (big presets; finds, never proves).")
@click.option("--depth", type=click.IntRange(min=1), default=50, show_default=True, help="With --walks: steps per walk.")
@click.option("--liveness", is_flag=True,
              help="Also judge a mutant that survives the safety search by liveness (EventuallyQuiescent, "
                   "EventuallySettled, QuiescenceAlwaysReachable, as `kcm explore --liveness`) where its states differ.")
@click.option("--triage", "triage_dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="Join the hand-written triage of survivors in DIR/*.toml (bench/mutation/triage for the suite).")
@click.option("--min-score", type=click.FloatRange(0, 1), default=None,
              help="Exit 1 when the mutation score is below this (0..1).")
@click.option("--list", "list_only", is_flag=True, help="List the mutants (id and description) and exit.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON report here.")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write JUnit XML here (one test case per mutant).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the report (mutation.json, mutation.txt) and each survivor's diff here.")
def command(presets, config_files, engine, master, files, operators, ids, sample, seed, max_states, timeout, walks, depth,
            liveness, triage_dir, min_score, list_only, json_file, junit_file, out) -> int:
    """Grade the properties by mutation: seed one small fault at a time into the model's
    controller and brokers, explore each mutant like `kcm explore`, and report which the
    properties kill and which survive (with their diffs).

    Exit codes: 0 the run completed (the score is information; --min-score makes it a gate: 1
    below it); 2 bad usage; 3 incomplete (an interruption, or a mutant timed out)."""
    console = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    unknown = [f for f in files if f not in M.MUTABLE_FILES]
    if unknown:
        raise UsageError(f"--files: '{unknown[0]}' is not a mutable model file; choose from {', '.join(M.MUTABLE_FILES)}")
    bad_ops = [o for o in operators if o not in M.OPERATORS]
    if bad_ops:
        raise UsageError(f"--operators: unknown operator '{bad_ops[0]}'; choose from {', '.join(M.OPERATORS)}")
    if walks and liveness:
        raise UsageError("--liveness needs the whole graph of each config; it cannot judge --walks")
    if out is not None:
        check_writable_dir(out)
    configs = _configs(presets, config_files)
    sources = M.read_sources()
    generated = M.generate(sources, files or None, operators or None)
    generated_count, every_mutant = len(generated), generated
    triage = mutation_triage.load(triage_dir) if triage_dir is not None else None
    if ids:
        known = {m.id for m in generated}
        missing = [i for i in ids if i not in known]
        if missing:
            raise UsageError(f"--mutant: no mutant '{missing[0]}' in the current sources (see 'kcm mutate --list')")
        generated = [m for m in generated if m.id in set(ids)]
    mutants = M.sample(generated, sample, seed)
    if list_only:
        for m in mutants:
            console.print(f"{m.id}  {m.description}")
        return EXIT_PASS
    if walks and max_states:
        raise UsageError("--max-states bounds an exhaustive search; with --walks give --depth instead")
    budget = M.Budget(max_states, timeout, walks, depth, seed, liveness)
    names = [n for n, _ in configs]
    console.print(f"kcm mutate · {len(mutants)} of {len(generated)} mutants · configs {', '.join(names)} · "
                  f"engine {engine}")
    started = time.perf_counter()
    bases = M.baselines(configs, budget)
    for b in bases:
        console.print(f"  clean model on {b.config}: {b.distinct:,} distinct states"
                      + ("" if b.digest else " (cut by the budget: equivalence is not judged)")
                      + ("" if not liveness else "; liveness " + (
                          "undecided: not judged here" if b.live is None else
                          ", ".join(sorted(b.live)) + " broken by the clean model: not a kill" if b.live else "holds")))
    done = [0]

    def progress(o: M.Outcome) -> None:
        done[0] += 1
        what = {M.KILLED: f"killed by {o.property} on {o.config}" + (f" ({o.trace_length} steps)" if o.trace_length is not None else ""),
                M.CRASHED: f"crashed on {o.config}: {o.error}", M.SURVIVED: "SURVIVED",
                M.EQUIVALENT: "equivalent suspect" + (" (never reached)" if o.note else ""),
                M.TIMED_OUT: "timed out"}[o.status]
        err.print(f"[{done[0]}/{len(mutants)}] {o.id}: {what} · {o.seconds:.1f} s")

    complete = True
    outcomes: list[M.Outcome] = []
    try:
        if engine == "spark":
            from kcm.spark_explore.mutate import run_spark

            spark = start_spark(master)
            try:
                outcomes = run_spark(spark, mutants, configs, bases, budget, sources, files, operators, progress)
            finally:
                spark.stop()
        else:
            outcomes = M.run_local(mutants, configs, bases, budget, sources, progress, collect=outcomes)
    except KeyboardInterrupt:
        complete = False
    if any(o.status == M.TIMED_OUT for o in outcomes):
        complete = False
    doc = mutation_report.build(mutants, outcomes, configs=names, bases=bases, engine=engine, seed=seed,
                                sample=sample, budget=budget, generated=generated_count,
                                duration_s=time.perf_counter() - started, complete=complete)
    if triage is not None:
        mutation_triage.apply(doc, triage, every_mutant)
    lines = mutation_report.text(doc)
    for line in lines:
        console.print(line, markup=False)
    if json_file:
        write_json(doc, json_file)
    if junit_file:
        write_junit(mutation_report.junit(doc), junit_file)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_json(doc, out / "mutation.json")
        (out / "mutation.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        survivors = out / "survivors"
        for e in doc["mutants"]:
            if "diff" in e:
                survivors.mkdir(exist_ok=True)
                (survivors / f"{e['id'].replace(':', '_')}.diff").write_text(e["diff"], encoding="utf-8")
    console.print(f"Mutated and explored in {time.perf_counter() - started:.1f} s.")
    if not complete:
        return EXIT_INCOMPLETE
    if min_score is not None and (doc["score"] is None or doc["score"] < min_score):
        console.print(f"Mutation score below --min-score {min_score:.0%}.")
        return EXIT_VIOLATION
    return EXIT_PASS
