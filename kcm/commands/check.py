"""`kcm check`: the main job and the CI gate.

Stages, in order, each printed as it finishes: the state tables (validated at import: every state
reachable, every edge labelled), the diagrams drawn from them, the Z3 proofs of the election
rules, then the exhaustive exploration of the preset, and with `--grid NAME` a sweep of that grid's
small scopes (`kcm sweep`, docs/sweep.md; its own `sweep.json` and `junit.xml` go to
OUT/sweep-NAME). One verdict at the end, the JSON report
(`docs/report-schema.json`) and JUnit XML, a short summary, and the exit code: 0 everything holds,
1 a violation or a failed proof, 2 bad usage, 3 a stage could not finish.

An interruption (Ctrl-C, or SIGTERM as a CI timeout sends it) in any stage ends the run there:
what finished is reported, with the verdict "incomplete" and the reason "interrupted", and the
reports are written all the same (exit 3).
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from kcm import KAFKA_VERSION, VERSIONS, compiled, config
from kcm.checker import diagrams, proofs
from kcm.checker.engine import report
from kcm.checker.engine.errors import EXIT_INCOMPLETE, EXIT_PASS, EXIT_VIOLATION, UsageError, check_writable_dir
from kcm.checker.engine.result import CheckResult
from kcm.commands.sweep import run_grid
from kcm.exploration import (
    ENGINES,
    QUIET_HELP,
    VARIANT_HELP,
    check_engine_options,
    check_outputs,
    load_config,
    print_summary,
    quiet_console,
    run_exploration,
    summary_lines,
    write_reports,
)
from kcm.model.tables import PARTITION_TABLE, REPLICA_TABLE, REPLICA_TABLE_PRE_2_3
from kcm.sweep import grid
from kcm.sweep import report as sweep_report


def _table_lines() -> list[str]:
    return [f"{t.name} table {t.version}: {len(t.states)} states, {len(t)} edges, all reachable from {t.initial.name}"
            for t in (REPLICA_TABLE, REPLICA_TABLE_PRE_2_3, PARTITION_TABLE)]


@click.command(name="check")
@click.option("--preset", default=None, help=f"Preset name (default: {config.DEFAULT_PRESET}).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML config file instead of a preset.")
@click.option("--variant", default=None, metavar="NAME", help=VARIANT_HELP)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("kcm-out"), show_default=True,
              help="Where reports and counterexamples go.")
@click.option("--diagrams", "diagram_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where to write the diagrams (default: OUT/diagrams).")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The JSON report (default: OUT/report.json).")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JUnit XML (default: OUT/junit.xml).")
@click.option("--proof-brokers", type=click.IntRange(1, proofs.MAX_BROKERS), default=proofs.DEFAULT_BROKERS,
              show_default=True, help="Prove the election rules for every broker count up to this.")
@click.option("--engine", type=click.Choice(ENGINES), default="spark", show_default=True,
              help="Explore on Spark (embedded local[*] unless --master) or with the sequential explorer.")
@click.option("--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Sequential engine: explore the preset's disjoint runs (the cold start and each overlapping "
                   "run) in up to N processes at once [default: one per core].")
@click.option("--master", default=None, metavar="URL", help="Spark master (default local[*]).")
@click.option("--no-explore", is_flag=True, help="Skip the exploration (tables, diagrams and proofs only).")
@click.option("--liveness", is_flag=True,
              help="Also check liveness on the explored graph (the preset: needs --engine local; see kcm explore "
                   "--liveness) and in every scope of --grid.")
@click.option("--grid", "grid_name", default=None, metavar="NAME|FILE.toml",
              help="Also sweep this grid of small scopes as a last stage (kcm sweep: a shipped grid such as gate, or a "
                   "grid file), on the same engine; its reports go to OUT/sweep-NAME.")
@click.option("--quiet", is_flag=True, help=QUIET_HELP)
def command(preset, config_file, variant, out, diagram_dir, json_file, junit_file, proof_brokers, engine, jobs, master,
            no_explore, liveness, grid_name, quiet) -> int:
    """Check everything for a preset: tables, diagrams, proofs, exhaustive exploration; one verdict."""
    started = time.perf_counter()
    console = quiet_console(quiet)
    name, label, cfg = load_config(preset, config_file, variant)
    swept = None if not grid_name else (
        grid.load(None, grid_name) if grid_name.endswith(".toml") else grid.load(grid_name))
    if swept is not None and cfg.variant:   # the gate sweeps the model being checked, its bug included
        swept = grid.with_variant(swept, cfg.variant)
    check_outputs(out, json_file, junit_file, cfg)
    if liveness and engine == "spark" and not no_explore:
        raise UsageError("--liveness runs on the sequential explorer only; add --engine local")
    if not no_explore or swept is not None:   # the exploration and the sweep run on the same engine
        check_engine_options(engine, master, jobs=jobs)
    if diagram_dir is not None:
        check_writable_dir(diagram_dir, "--diagrams")
    if swept is not None:
        check_writable_dir(out / f"sweep-{swept.name}", "--out")
    sweep_doc: dict | None = None
    console.print(f"kcm check · Kafka {KAFKA_VERSION} controller · {label} "
                  f"({cfg.brokers} brokers, {cfg.topics} topic(s) × {cfg.partitions} partition(s), "
                  f"RF {cfg.replication_factor}){' · variant ' + cfg.variant if cfg.variant else ''} · "
                  f"{compiled.status()}")
    proof_results: list[proofs.ProofResult] = []
    result: CheckResult | None = None
    files: dict[str, str] = {}
    reason = ""
    try:
        console.print("[bold]1. State tables[/bold]")
        for line in _table_lines():
            console.print(f"  [green]✓[/green] {line}")
        console.print("[bold]2. Diagrams[/bold]")
        formats = ("dot", "svg") if diagrams.dot_available() else ("dot",)
        written = diagrams.write(diagrams.table_diagrams(), diagram_dir or out / "diagrams", formats)
        console.print(f"  [green]✓[/green] {', '.join(str(p) for p in written)}")
        console.print(f"[bold]3. Proofs of the election rules (1..{proof_brokers} brokers)[/bold]")
        proofs.run(range(1, proof_brokers + 1), variant=cfg.variant or None, on_result=proof_results.append)
        failed = [p for p in proof_results if p.result != "proved"]
        console.print(f"  {'[green]✓[/green]' if not failed else '[red]✗[/red]'} "
                      f"{len(proof_results) - len(failed)} of {len(proof_results)} proved "
                      f"in {sum(p.seconds for p in proof_results):.1f} s"
                      + "".join(f"\n    {p.result}: {p.property} [{p.brokers} brokers] {p.counterexample}"
                                for p in failed))
        if not no_explore:
            console.print(f"[bold]4. Exhaustive exploration of {name}[/bold]")
            result, files = run_exploration(console, name, cfg, out=out, engine=engine, master=master,
                                            liveness=liveness, jobs=jobs, quiet=quiet)
        if swept is not None:
            console.print(f"[bold]5. Sweep of the grid {swept.name} ({len(swept.scopes)} small scopes)[/bold]")
            sweep_doc, sweep_json, _ = run_grid(swept, list(swept.scopes), out / f"sweep-{swept.name}", resume=False,
                                               engine=engine, jobs=jobs, master=master, console=console,
                                               liveness=liveness)
            console.print(f"  {sweep_report.summary(sweep_doc, [str(sweep_json)])[0]}", markup=False)
    except KeyboardInterrupt:   # the explorers end an interrupted search themselves; this is any other stage
        reason = "interrupted"
        console.print("[yellow]Interrupted[/yellow]: the stages not finished are not judged.")
    doc = report.build(result, proof_results, preset=name, variant=cfg.variant, trace_files=files,
                       duration_s=time.perf_counter() - started, versions=VERSIONS, reason=reason)
    json_path, junit_path = write_reports(doc, result, proof_results, name=name, out=out, json_file=json_file,
                                          junit_file=junit_file, cfg=cfg, trace_files=files)
    sweep_line = () if sweep_doc is None else (
        f"sweep {sweep_doc['grid']}: {sweep_doc['verdict']}, {sweep_doc['scopes_finished']} of "
        f"{sweep_doc['scopes_total']} scopes finished; reports in {out / ('sweep-' + sweep_doc['grid'])}",)
    print_summary(summary_lines(doc, "check", label, [json_path, junit_path, json_path.parent / "report.html"],
                                extra=(*sweep_line, f"finished in {time.perf_counter() - started:.1f} s")),
                  quiet=quiet)
    codes = [{"pass": EXIT_PASS, "violation": EXIT_VIOLATION}.get(doc["verdict"], EXIT_INCOMPLETE)]
    if sweep_doc is not None:
        codes.append(sweep_report.exit_code(sweep_doc))
    # a violation anywhere fails the gate; otherwise any stage not finished makes it incomplete
    return EXIT_VIOLATION if EXIT_VIOLATION in codes else max(codes)
