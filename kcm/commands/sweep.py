"""`kcm sweep`: explore every scope of a grid completely, one run per process or Spark task, and
report per property which scopes break it (kcm.sweep; docs/sweep.md)."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import click
from rich.console import Console

from kcm import compiled
from kcm.checker.engine.errors import UsageError, check_writable_dir, write_or_fail
from kcm.checker.engine.report import write_json, write_junit
from kcm.checker.engine.runs import usable_cores
from kcm.exploration import ENGINES, check_engine_options, print_summary, start_spark, variant_name
from kcm.sweep import farm, grid, report, results
from kcm.sweep.grid import Scope
from kcm.sweep.run import ScopeOutcome


@click.command(name="sweep")
@click.option("--grid", "grid_name", default=None, metavar="NAME",
              help="A shipped grid (kcm/grids: gate, nightly, deep) [default: gate].")
@click.option("--grid-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A grid TOML file instead of a shipped grid.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The results folder [default: kcm-out/sweep-GRID].")
@click.option("--resume", is_flag=True,
              help="Skip the scopes the results folder already holds for this grid, version, config, budget and "
                   "--liveness.")
@click.option("--engine", type=click.Choice(ENGINES), default="local", show_default=True,
              help="Local processes (one scope each) or one Spark task per scope.")
@click.option("--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Local engine: scopes explored at once [default: one per core].")
@click.option("--master", default=None, metavar="URL", help="Spark master (default local[*]).")
@click.option("--variant", default=None, metavar="NAME",
              help="Put a historical bug back in every scope (a name or JIRA key from 'kcm variants').")
@click.option("--scope", "only", multiple=True, metavar="NAME", help="Run only this scope (repeatable).")
@click.option("--fail-fast", is_flag=True,
              help="Stop at the first scope with a violation (settled scopes first): report what ran, the rest as "
                   "not run.")
@click.option("--liveness", is_flag=True,
              help="Also judge each scope by liveness, as kcm explore --liveness does (its graph explored again "
                   "modulo controller epochs, symmetry off).")
@click.option("--list", "list_only", is_flag=True, help="List the grid's scopes and exit.")
def command(grid_name, grid_file, out, resume, engine, jobs, master, variant, only, fail_fast, liveness,
            list_only) -> int:
    """Explore every scope of a grid completely and report, per property, the scopes that break it.

    Exit codes: 0 every property holds in every scope; 1 a violation; 2 bad usage or grid;
    3 incomplete (a scope cut by its budget, or an interruption)."""
    console = Console(highlight=False, soft_wrap=True)
    if grid_name and grid_file:
        raise UsageError("give either --grid or --grid-file, not both")
    g = grid.load(None, grid_file) if grid_file else grid.load(grid_name or "gate")
    if variant:
        g = grid.with_variant(g, variant_name(variant))
    scopes = _selected(g, only)
    if list_only:
        for s in scopes:
            console.print(s.name, markup=False)
        return 0
    check_engine_options(engine, master, jobs=jobs)
    out = out or results.default_out(g.name)
    check_writable_dir(out)
    doc, json_path, junit_path = run_grid(g, scopes, out, resume=resume, engine=engine, jobs=jobs, master=master,
                                          console=console, fail_fast=fail_fast, liveness=liveness)
    print_summary(report.summary(doc, [str(json_path), str(junit_path)]))
    return report.exit_code(doc)


def _selected(g: grid.Grid, only: tuple[str, ...]) -> list[Scope]:
    names = {s.name for s in g.scopes}
    missing = [n for n in only if n not in names]
    if missing:
        raise UsageError(f"--scope: grid '{g.name}' has no scope '{missing[0]}' "
                         f"(see 'kcm sweep --grid {g.name} --list')")
    return [s for s in g.scopes if not only or s.name in only]


def _verdict(o: ScopeOutcome) -> str:
    text = o.verdict if not o.reason else f"{o.verdict} ({o.reason})"
    broken = [b.name for b in o.violations]
    known = [b.known_loop or b.name for b in o.known]
    return (text + (f": {', '.join(broken)}" if broken else "")
            + (f"; known: {', '.join(known)}" if known else ""))


def _liveness(o: ScopeOutcome) -> str:
    """The end of a scope's line when liveness was judged: its verdict and its graph's size."""
    if o.liveness is None:
        return ""
    if o.liveness.verdict == "not checked":
        return " · liveness not judged"
    return (f" · liveness {'violated' if o.liveness.violations else 'held'} on {o.liveness.nodes:,} states "
            "modulo controller epochs")


def run_grid(g: grid.Grid, scopes: list[Scope], out: Path, *, resume: bool, engine: str, jobs: int | None,
             master: str | None, console: Console, fail_fast: bool = False,
             liveness: bool = False) -> tuple[dict, Path, Path]:
    """Explore `scopes` of `g` into the results folder `out` (checked writable by the caller) and
    write `sweep.json` and `junit.xml` there; returns the report and the two paths. Progress per
    scope goes to stderr; `kcm check --grid` calls this as its last stage.

    `fail_fast`: stop at the first scope that breaks a property (a known behaviour does not count):
    the scopes in flight are stopped and, with those not started, listed as not run. The scopes
    then run in the order `fail_fast_order` gives, so that a bug is met as cheaply as it can be.

    `liveness`: each scope is judged by liveness too (`kcm.sweep.run`), and only records made so
    are resumed."""
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    kept = results.finished(out, g, liveness) if resume else {}
    todo = [s for s in scopes if s.name not in kept]
    if fail_fast:
        todo = fail_fast_order(todo)
    width = jobs or usable_cores()
    dropped = sum(g.dropped.values())
    console.print(f"kcm sweep · grid {g.name} v{g.version} · {len(scopes)} scopes"
                  + (f" ({dropped} combinations dropped as impossible)" if dropped else "")
                  + (f", {len(scopes) - len(todo)} already finished" if resume else "")
                  + f" · engine {engine}" + (f", {width} process{'es' * (width > 1)}" if engine == "local" else "")
                  + (" · liveness (modulo controller epochs, symmetry off)" if liveness else "")
                  + f" · {compiled.status()}")
    records = {name: kept[name] for name in (s.name for s in scopes) if name in kept}
    failed: dict[str, str] = {}
    # a resumed record that breaks a property stops a fail-fast sweep before it starts
    broken = [any(r["violations"] for r in records.values())]
    started = time.perf_counter()
    count = [len(records)]

    def on_start(scope: Scope) -> None:
        err.print(f"start {scope.name}", markup=False)

    def on_done(scope: Scope, outcome: ScopeOutcome | None, error: str) -> None:
        if outcome is None:
            failed[scope.name] = error
            err.print(f"  {scope.name}: failed: {error}", markup=False)
            return
        if not farm.is_kept(outcome):
            err.print(f"  {scope.name}: interrupted after {outcome.distinct:,} states", markup=False)
            return
        records[scope.name] = write_or_fail(lambda: results.save(out, g, scope, outcome), out, "--out")
        count[0] += 1
        broken[0] = broken[0] or bool(outcome.violations)
        err.print(f"[{count[0]}/{len(scopes)}] {scope.name}: {_verdict(outcome)} · {outcome.distinct:,} states, "
                  f"depth {outcome.depth}, {outcome.seconds:.1f} s{_liveness(outcome)}", markup=False)

    scoped = replace(g, scopes=tuple(scopes))   # --scope: the report covers the scopes asked for
    halt = (lambda: broken[0]) if fail_fast else None
    if fail_fast and broken[0]:
        complete = True
    elif engine == "spark":
        spark = start_spark(master)
        try:
            complete = farm.run_spark(spark, todo, g.budget, on_start, on_done, halt=halt, liveness=liveness)
        finally:
            spark.stop()
    else:
        complete = farm.run_local(todo, g.budget, width, on_start, on_done, halt=halt, liveness=liveness)
    doc = report.build(scoped, records, engine=engine, interrupted=not complete,
                       duration_s=time.perf_counter() - started, failed=failed,
                       stopped_early=fail_fast and broken[0], liveness=liveness)
    json_path, junit_path = out / "sweep.json", out / "junit.xml"
    write_or_fail(lambda: write_json(doc, json_path), json_path, "--out")
    write_or_fail(lambda: write_junit(report.junit(doc), junit_path), junit_path, "--out")
    return doc, json_path, junit_path


def fail_fast_order(scopes: list[Scope]) -> list[Scope]:
    """The order a fail-fast sweep runs `scopes` in: the scopes from the settled cluster first, then
    those from the cold start, each group in the grid's order. A settled scope is one overlapping
    run from one settled state, much smaller than the cold start's interleavings of the startup
    with its perturbations, and it catches most bugs that need a perturbation (the grid's order,
    replication factor first, is kept inside each group). A fixed order, so that a fail-fast
    sweep stops at the same scope on every machine with one process."""
    return sorted(scopes, key=lambda s: "overlapping" not in s.fields)
