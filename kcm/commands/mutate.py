"""`kcm mutate`: seed faults into the model's controller and brokers, explore each mutant, and grade
the properties by the mutants they kill (kcm.checker.mutation; Spark: kcm.spark_explore.mutate)."""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.console import Console

from kcm import VERSIONS, config
from kcm.checker import mutation as M
from kcm.checker.engine.errors import EXIT_INCOMPLETE, EXIT_PASS, EXIT_VIOLATION, UsageError, check_writable_dir
from kcm.checker.engine.report import write_json, write_junit
from kcm.checker.mutation import report as mutation_report
from kcm.checker.mutation import triage as mutation_triage
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
@click.option("--depth", type=click.IntRange(min=1), default=50, show_default=True,
              help="With --walks: steps per walk.")
@click.option("--liveness", is_flag=True,
              help="Also judge a mutant that survives the safety search by liveness (EventuallyQuiescent, "
                   "EventuallySettled, QuiescenceAlwaysReachable, as `kcm explore --liveness`) "
                   "where its states differ.")
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
def command(presets, config_files, engine, master, files, operators, ids, sample, seed, max_states, timeout, walks,
            depth, liveness, triage_dir, min_score, list_only, json_file, junit_file, out) -> int:
    """Grade the properties by mutation: seed one small fault at a time into the model's
    controller and brokers, explore each mutant like `kcm explore`, and report which the
    properties kill and which survive (with their diffs).

    Exit codes: 0 the run completed (the score is information; --min-score makes it a gate: 1
    below it); 2 bad usage; 3 incomplete (an interruption, or a mutant timed out)."""
    console = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    _check_choices(files, operators, walks, liveness)
    if out is not None:
        check_writable_dir(out)
    configs = _configs(presets, config_files)
    sources = M.read_sources()
    generated = M.generate(sources, files or None, operators or None)
    generated_count, every_mutant = len(generated), generated
    triage = mutation_triage.load(triage_dir) if triage_dir is not None else None
    if ids:
        generated = _only(generated, ids)
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
        console.print(_baseline_line(b, liveness))
    done = [0]

    def progress(o: M.Outcome) -> None:
        done[0] += 1
        err.print(f"[{done[0]}/{len(mutants)}] {o.id}: {_outcome_text(o)} · {o.seconds:.1f} s")

    interrupted = False
    outcomes: list[M.Outcome] = []
    try:
        if engine == "spark":
            outcomes = _run_on_spark(master, mutants, configs, bases, budget, sources, files, operators, progress)
        else:
            outcomes = M.run_local(mutants, configs, bases, budget, sources, progress, collect=outcomes)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (kcm.cli): report what ran, exit 3
        interrupted = True
    complete = not interrupted and not any(o.status == M.TIMED_OUT for o in outcomes)
    doc = mutation_report.build(mutants, outcomes, configs=names, bases=bases, engine=engine, seed=seed,
                                sample=sample, budget=budget, generated=generated_count,
                                duration_s=time.perf_counter() - started, complete=complete,
                                interrupted=interrupted, versions=VERSIONS)
    if triage is not None:
        mutation_triage.apply(doc, triage, every_mutant)
    lines = mutation_report.text(doc)
    for line in lines:
        console.print(line, markup=False)
    _write_reports(doc, lines, json_file, junit_file, out)
    console.print(f"Mutated and explored in {time.perf_counter() - started:.1f} s.")
    if not complete:
        return EXIT_INCOMPLETE
    if min_score is not None and (doc["score"] is None or doc["score"] < min_score):
        console.print(f"Mutation score below --min-score {min_score:.0%}.")
        return EXIT_VIOLATION
    return EXIT_PASS


def _check_choices(files, operators, walks, liveness) -> None:
    unknown = [f for f in files if f not in M.MUTABLE_FILES]
    if unknown:
        raise UsageError(f"--files: '{unknown[0]}' is not a mutable model file; "
                         f"choose from {', '.join(M.MUTABLE_FILES)}")
    bad_ops = [o for o in operators if o not in M.OPERATORS]
    if bad_ops:
        raise UsageError(f"--operators: unknown operator '{bad_ops[0]}'; choose from {', '.join(M.OPERATORS)}")
    if walks and liveness:
        raise UsageError("--liveness needs the whole graph of each config; it cannot judge --walks")


def _only(generated: list[M.Mutant], ids) -> list[M.Mutant]:
    """The mutants `--mutant` names; one it does not find is a usage error."""
    known = {m.id for m in generated}
    missing = [i for i in ids if i not in known]
    if missing:
        raise UsageError(f"--mutant: no mutant '{missing[0]}' in the current sources (see 'kcm mutate --list')")
    return [m for m in generated if m.id in set(ids)]


def _baseline_line(b: M.Baseline, liveness: bool) -> str:
    line = f"  clean model on {b.config}: {b.distinct:,} distinct states"
    if not b.digest:
        line += " (cut by the budget: equivalence is not judged)"
    if liveness:
        line += "; liveness " + ("undecided: not judged here" if b.live is None else
                                 ", ".join(sorted(b.live)) + " broken by the clean model: not a kill" if b.live
                                 else "holds")
    return line


def _outcome_text(o: M.Outcome) -> str:
    if o.status == M.KILLED:
        return f"killed by {o.property} on {o.config}" + (
            f" ({o.trace_length} steps)" if o.trace_length is not None else "")
    return {M.CRASHED: f"crashed on {o.config}: {o.error}", M.SURVIVED: "SURVIVED",
            M.EQUIVALENT: "equivalent suspect" + (" (never reached)" if o.note else ""),
            M.TIMED_OUT: "timed out"}[o.status]


def _run_on_spark(master, mutants, configs, bases, budget, sources, files, operators, progress) -> list[M.Outcome]:
    from kcm.spark_explore.mutate import run_spark  # pyspark is imported only for a Spark run

    spark = start_spark(master)
    try:
        return run_spark(spark, mutants, configs, bases, budget, sources, files, operators, progress)
    finally:
        spark.stop()


def _write_reports(doc: dict, lines: list[str], json_file: Path | None, junit_file: Path | None,
                   out: Path | None) -> None:
    """The JSON report, JUnit XML, and in `out` the report (mutation.json, mutation.txt) and each
    survivor's diff, as asked."""
    if json_file:
        write_json(doc, json_file)
    if junit_file:
        write_junit(mutation_report.junit(doc), junit_file)
    if out is None:
        return
    out.mkdir(parents=True, exist_ok=True)
    write_json(doc, out / "mutation.json")
    (out / "mutation.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    survivors = out / "survivors"
    for e in doc["mutants"]:
        if "diff" in e:
            survivors.mkdir(exist_ok=True)
            (survivors / f"{e['id'].replace(':', '_')}.diff").write_text(e["diff"], encoding="utf-8")
