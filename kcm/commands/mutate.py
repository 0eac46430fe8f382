"""`kcm mutate`: seed faults into the model's controller and brokers, explore each mutant, and grade
the properties by the mutants they kill (kcm.checker.mutation; Spark: kcm.spark_explore.mutate)."""

from __future__ import annotations

import dataclasses
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
from kcm.sweep import grid as grids


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
@click.option("--grid", "grid_name", default=None, metavar="NAME",
              help="Explore each mutant on a grid's scopes instead (kcm/grids: gate, nightly, deep), config by config "
                   "in the grid's order, each scope's budget the per-scope state bound unless --max-states.")
@click.option("--grid-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A grid TOML file instead of a shipped grid.")
@click.option("--scope", "scope_names", multiple=True, metavar="NAME",
              help="With a grid: only this scope (repeatable), the scopes met in the order given.")
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
              help="Seconds a mutant may take over all configs, or with --grid on each scope (beyond: timed out).")
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
def command(presets, config_files, grid_name, grid_file, scope_names, engine, master, files, operators, ids, sample,
            seed, max_states, timeout, walks, depth, liveness, triage_dir, min_score, list_only, json_file, junit_file,
            out) -> int:
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
    g = _grid(grid_name, grid_file, presets, config_files, scope_names)
    configs = [(s.name, s.config()) for s in g.scopes] if g else _configs(presets, config_files)
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
    budget = _budget(g, max_states, timeout, walks, depth, seed, liveness)
    names = [n for n, _ in configs]
    where = f"grid {g.name} ({len(g.scopes)} scopes, config by config)" if g else f"configs {', '.join(names)}"
    console.print(f"kcm mutate · {len(mutants)} of {len(generated)} mutants · {where} · engine {engine}")
    started = time.perf_counter()
    done = [0]

    def progress(o: M.Outcome) -> None:
        done[0] += 1
        err.print(f"[{done[0]}/{len(mutants)}] {o.id}: {_outcome_text(o)} · {o.seconds:.1f} s")

    bases = [] if g else M.baselines(configs, budget)  # a grid's: one scope at a time
    for b in bases:
        console.print(_baseline_line(b, liveness))
    run, interrupted = _explore(g, mutants, configs, bases, budget, engine, master, sources, files, operators,
                                progress, lambda b, live: console.print(
                                    _baseline_line(b, liveness) + f"; reaches {sum(map(b.reaches, mutants))} of "
                                    f"{len(mutants)} mutants, {live} alive"))
    outcomes, bases = run.outcomes, run.bases
    complete = not interrupted and not any(o.status == M.TIMED_OUT for o in outcomes)
    grid_doc = None if g is None else {"name": g.name, "version": g.version, "scopes": len(g.scopes),
                                       "skipped": run.skipped}
    doc = mutation_report.build(mutants, outcomes, configs=names, bases=bases, engine=engine, seed=seed,
                                sample=sample, budget=budget, generated=generated_count,
                                duration_s=time.perf_counter() - started, complete=complete,
                                interrupted=interrupted, versions=VERSIONS, grid=grid_doc)
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


def _budget(g, max_states, timeout, walks, depth, seed, liveness) -> M.Budget:
    if walks and max_states:
        raise UsageError("--max-states bounds an exhaustive search; with --walks give --depth instead")
    if g is not None and max_states is None and not walks:
        max_states = g.budget.max_states  # the grid's per-scope bound
    # A grid's scopes are small on purpose and meet only some goals each: a mutant must meet the
    # ones the clean model meets on the scope (as `kcm sweep` reports goals, not requires them).
    return M.Budget(max_states, timeout, walks, depth, seed, liveness, goals_required=g is None)


def _explore(g, mutants, configs, bases, budget, engine, master, sources, files, operators, progress,
             on_config) -> tuple[M.ByConfig, bool]:
    """Every mutant explored on the configs (with their `bases`) or, config by config, on the
    grid `g`'s scopes: what ran, and whether an interruption cut the run short."""
    run = M.ByConfig([], [] if g else bases, [])
    spark = start_spark(master) if engine == "spark" else None
    try:
        if g is not None:
            _run_grid(g, mutants, configs, budget, spark, sources, files, operators, progress, run, on_config)
        elif spark is not None:
            run.outcomes = _run_on_spark(spark, mutants, configs, bases, budget, sources, files, operators, progress)
        else:
            M.run_local(mutants, configs, bases, budget, sources, progress, collect=run.outcomes)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (kcm.cli): report what ran, exit 3
        return run, True
    finally:
        if spark is not None:
            spark.stop()
    return run, False


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


def _run_on_spark(spark, mutants, configs, bases, budget, sources, files, operators, progress) -> list[M.Outcome]:
    from kcm.spark_explore.mutate import run_spark  # pyspark is imported only for a Spark run

    return run_spark(spark, mutants, configs, bases, budget, sources, files, operators, progress)


def _run_grid(g, mutants, configs, budget, spark, sources, files, operators, progress, run, on_config) -> None:
    """The mutants on the grid's scopes, config by config (`run_by_config`), into `run`."""
    M.run_by_config(mutants, configs, budget, _config_runner(spark, budget, sources, files, operators), sources,
                    on_config=on_config, on_done=progress, result=run)
    if run.skipped and not run.bases and mutants:
        raise UsageError(f"no scope of grid {g.name} is ground for mutants: {run.skipped[0][1]}")


def _config_runner(spark, budget, sources, files, operators):
    """How `run_by_config` runs the live mutants on one scope: one after the other, or one Spark
    task each (the scope and its baseline broadcast)."""
    if spark is None:
        return None  # run_mutant, one after the other

    def on_spark(mutants, config, base):
        return _run_on_spark(spark, mutants, [config], [base], budget, sources, files, operators, None)
    return on_spark


def _grid(grid_name, grid_file, presets, config_files, scope_names=()) -> grids.Grid | None:
    """The grid `--grid` or `--grid-file` names, if any; it replaces the presets and config files.
    With `--scope`, only the scopes named, in the order named: a mutant is run on the next scope
    only while it lives, so the order decides the cost of a run (never its verdict)."""
    if grid_name and grid_file:
        raise UsageError("give either --grid or --grid-file, not both")
    if not (grid_name or grid_file):
        if scope_names:
            raise UsageError("--scope names scopes of a grid: give --grid or --grid-file")
        return None
    if presets or config_files:
        raise UsageError("--grid and --grid-file replace --preset and --config: give the one or the others")
    g = grids.load(None, grid_file) if grid_file else grids.load(grid_name)
    if not scope_names:
        return g
    by_name = {s.name: s for s in g.scopes}
    missing = [n for n in scope_names if n not in by_name]
    if missing:
        raise UsageError(f"--scope: grid '{g.name}' has no scope '{missing[0]}' "
                         f"(see 'kcm sweep --grid {g.name} --list')")
    return dataclasses.replace(g, scopes=tuple(by_name[n] for n in dict.fromkeys(scope_names)))


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
