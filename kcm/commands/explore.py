"""`kcm explore`: exhaustive breadth-first exploration of one config, with shortest counterexamples."""

from __future__ import annotations

import time
from pathlib import Path

import click
from click.core import ParameterSource

from kcm import VERSIONS, compiled, config
from kcm.checker.engine import report
from kcm.checker.engine.errors import EXIT_INCOMPLETE, EXIT_PASS, EXIT_VIOLATION, UsageError
from kcm.checker.engine.result import CheckResult
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
    run_simulation,
    summary_lines,
    symmetry_text,
    write_reports,
)


@click.command(name="explore")
@click.option("--preset", default=None, help=f"Preset name (default: {config.DEFAULT_PRESET}); see kcm/presets.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML config file instead of a preset.")
@click.option("--variant", default=None, metavar="NAME", help=VARIANT_HELP)
@click.option("--invariant", "invariants", multiple=True, metavar="NAME",
              help="Check only this property (repeatable; 'deadlock' included).")
@click.option("--symmetry/--no-symmetry", default=True, show_default=True, help="Reduce by broker-id symmetry.")
@click.option("--por/--no-por", default=False, show_default=True,
              help="Partial-order reduction: expand ample sets only (sequential engine; traces may be "
                   "longer than the shortest).")
@click.option("--max-depth", type=click.IntRange(min=1), default=None, help="Stop after this many steps (incomplete).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("kcm-out"), show_default=True,
              help="Where counterexamples and reports go.")
@click.option("--engine", type=click.Choice(ENGINES), default="local", show_default=True,
              help="The sequential explorer, or distributed BFS on Spark.")
@click.option("--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Sequential engine: explore the preset's disjoint runs (the cold start and each overlapping "
                   "run) in up to N processes at once [default: one per core].")
@click.option("--master", default=None, metavar="URL", help="Spark master (default local[*]; spark://…, yarn, k8s://…).")
@click.option("--checkpoint", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Spark: write level snapshots here, to resume an interrupted run.")
@click.option("--resume", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Spark: continue the run whose snapshots are in this folder.")
@click.option("--simulate", is_flag=True, help="Random walks instead of exhaustive search (TLC -simulate), on Spark.")
@click.option("--runs", type=click.IntRange(min=1), default=1000, show_default=True, help="With --simulate: walks.")
@click.option("--depth", type=click.IntRange(min=1), default=100, show_default=True,
              help="With --simulate: steps per walk.")
@click.option("--seed", type=int, default=0, show_default=True, help="With --simulate: the seed.")
@click.option("--liveness", is_flag=True,
              help="Also check that every fair run of healing actions settles (cycles on the kept graph; "
                   "sequential engine, symmetry off).")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The JSON report (default: OUT/report.json).")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JUnit XML (default: OUT/junit.xml).")
@click.option("--quiet", is_flag=True, help=QUIET_HELP)
def command(preset, config_file, variant, invariants, symmetry, por, max_depth, out, engine, jobs, master, checkpoint,
            resume, simulate, runs, depth, seed, liveness, json_file, junit_file, quiet) -> int:
    """Explore every reachable state of a config and check every property on the way.

    Exit codes: 0 all properties hold and every goal is met; 1 a violation (with --liveness, a
    livelock too); 2 bad usage; 3 incomplete (--max-depth or an interruption)."""
    console = quiet_console(quiet)
    if liveness and engine == "spark":
        raise UsageError("--liveness runs on the sequential explorer only; drop --engine spark")
    if liveness and simulate:
        raise UsageError("--liveness needs the whole graph; it does not combine with --simulate")
    if por and (engine == "spark" or liveness or simulate):
        raise UsageError("--por runs on the sequential explorer only, without --liveness or --simulate")
    _check_simulate_options(simulate, max_depth)
    name, label, cfg = load_config(preset, config_file, variant)
    check_outputs(out, json_file, junit_file, cfg)
    check_engine_options(engine, master, checkpoint, resume, simulate, jobs)
    sym_text = ("symmetry off (liveness: cycles and fairness need real states)" if liveness
                else symmetry_text(cfg, symmetry))
    console.print(f"kcm explore · {label}{' · variant ' + cfg.variant if cfg.variant else ''} · "
                  f"{sym_text}{' · partial-order reduction on (traces may be longer than the shortest)' if por else ''}"
                  f" · {compiled.status()}")
    if simulate:   # its output is its summary already: the walks' counts and the first violation
        return run_simulation(quiet_console(False), name, cfg, runs=runs, depth=depth, seed=seed, master=master,
                              invariants=tuple(invariants), out=out)
    started = time.perf_counter()
    result: CheckResult | None = None
    files: dict[str, str] = {}
    reason = ""
    try:
        result, files = run_exploration(console, name, cfg, symmetry=symmetry, invariants=tuple(invariants),
                                        max_depth=max_depth, out=out, engine=engine, master=master,
                                        checkpoint=checkpoint, resume=resume, liveness=liveness, por=por, jobs=jobs,
                                        quiet=quiet)
    except KeyboardInterrupt:   # the explorers end an interrupted search themselves: this is before or after it
        reason = "interrupted"
    doc = report.build(result, [], preset=name, variant=cfg.variant, trace_files=files, versions=VERSIONS,
                       reason=reason, duration_s=time.perf_counter() - started)
    json_path, junit_path = write_reports(doc, result, [], name=name, out=out, json_file=json_file,
                                          junit_file=junit_file, cfg=cfg, trace_files=files)
    print_summary(summary_lines(doc, "explore", label, [json_path, junit_path, json_path.parent / "report.html"]),
                  quiet=quiet)
    return {"pass": EXIT_PASS, "violation": EXIT_VIOLATION}.get(doc["verdict"], EXIT_INCOMPLETE)


def _check_simulate_options(simulate: bool, max_depth: int | None) -> None:
    """The options of one search mode given to the other are refused, not silently dropped."""
    ctx = click.get_current_context()
    given = [name for name in ("runs", "depth", "seed", "engine")
             if ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT)]
    if simulate:
        if max_depth is not None:
            raise UsageError("--max-depth bounds an exhaustive search; with --simulate, --depth bounds each walk")
        if "engine" in given and ctx.params["engine"] != "spark":
            raise UsageError("--simulate runs on Spark only; drop --engine local")
        return
    if "depth" in given:
        raise UsageError("--depth needs --simulate (the length of each walk); --max-depth bounds an exhaustive search")
    for name in ("runs", "seed"):
        if name in given:
            raise UsageError(f"--{name} needs --simulate")
