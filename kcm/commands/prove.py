"""`kcm prove`: the Z3 proofs of the election rules (`kcm.checker.proofs`).

Every property is proved for every broker count from 1 to `--brokers`, over every assignment, ISR
(in any order), live set and shutting-down set. The table has one row per property: the broker
counts, the result and the time. A failure prints Z3's smallest counterexample (the fewest
brokers) as concrete lists. `--variant` runs a historical rule instead of Kafka 2.6's; a variant
that breaks a property exits 1, as any failure does.

Like `kcm check` it writes a JSON report (`docs/prove-schema.json`; default OUT/report.json) and
JUnit XML (one case per property and broker count; default OUT/junit.xml), checked writable before
any proof starts, and ends with a short summary (all it prints with `--quiet`). An interruption
(Ctrl-C, SIGTERM) keeps the proofs finished, reports them with the verdict "incomplete" and exits 3.

Exit codes: 0 every property holds; 1 a property fails; 2 bad usage; 3 a query timed out or the run
was interrupted.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kcm import VERSIONS
from kcm.checker import proofs
from kcm.checker.engine import report
from kcm.checker.engine.errors import EXIT_INCOMPLETE, EXIT_PASS, EXIT_VIOLATION, UsageError
from kcm.exploration import QUIET_HELP, check_outputs, print_summary, quiet_console, summary_lines, write_reports


def _counts(ns: Iterable[int]) -> str:
    """Broker counts as ranges: [1, 2, 3, 5] -> "1–3, 5"."""
    ranges: list[list[int]] = []
    for n in sorted(ns):
        if ranges and n == ranges[-1][1] + 1:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in ranges)


def _show(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "none"
    if isinstance(value, dict):
        return "(" + ", ".join(f"{k}={_show(v)}" for k, v in value.items()) + ")"
    return str(value)


def _fields(values: dict[str, object]) -> str:
    return "  ".join(f"{k} = {_show(v)}" for k, v in values.items())


@click.command(name="prove")
@click.option("--brokers", type=int, default=proofs.DEFAULT_BROKERS, show_default=True,
              help=f"Prove for every broker count from 1 to N ({proofs.MIN_BROKERS}..{proofs.MAX_BROKERS}).")
@click.option("--variant", default=None, metavar="NAME",
              help=f"Prove a historical variant's rules instead of Kafka 2.6's: {', '.join(proofs.variant_names())}.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("kcm-out"), show_default=True,
              help="Where the reports go.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The JSON report (default: OUT/report.json).")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JUnit XML (default: OUT/junit.xml).")
@click.option("--quiet", is_flag=True, help=QUIET_HELP)
def command(brokers: int, variant: str | None, out: Path, json_file: Path | None, junit_file: Path | None,
            quiet: bool) -> int:
    """Prove the election rules with Z3 for every input up to N brokers."""
    if not proofs.MIN_BROKERS <= brokers <= proofs.MAX_BROKERS:
        raise UsageError(f"--brokers {brokers} is out of range; allowed {proofs.MIN_BROKERS}..{proofs.MAX_BROKERS}")
    try:
        rules = proofs.rules_named(variant)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    check_outputs(out, json_file, junit_file, page=False)

    started = time.perf_counter()
    console = quiet_console(quiet)
    if not console.is_terminal:  # CI logs and pipes: wide enough for the longest property name
        console.width = max(console.width, 120)
    counts = range(proofs.MIN_BROKERS, brokers + 1)
    console.print(f"kcm prove · {rules.doc} · {len(proofs.PROPERTIES)} properties × broker counts {_counts(counts)}")
    if rules is not proofs.KAFKA_2_6 and not rules.changes_election:
        console.print(f"  ({rules.name} does not change the election rules: these are Kafka 2.6's)")

    total = len(proofs.PROPERTIES) * len(counts)
    results: list[proofs.ProofResult] = []
    reason = ""
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True, disable=quiet) as progress:
        task = progress.add_task("proving", total=total)

        def done(r: proofs.ProofResult) -> None:
            results.append(r)
            progress.update(task, advance=1, description=r.property)

        try:
            proofs.run(counts, variant=rules.name, on_result=done)
        except KeyboardInterrupt:
            reason = "interrupted"
    _print_table(console, rules, results)

    doc = prove_report(results, rules=rules.name, brokers=brokers, reason=reason,
                       duration_s=time.perf_counter() - started)
    json_path, junit_path = write_reports(doc, None, results, name=rules.name, out=out, json_file=json_file,
                                          junit_file=junit_file,
                                          junit_xml=report.junit(None, results, preset=rules.name, title="kcm prove"))
    print_summary(summary_lines(doc, "prove", f"rules {rules.name} · 1..{brokers} brokers", [json_path, junit_path]),
                  quiet=quiet)
    return {"pass": EXIT_PASS, "violation": EXIT_VIOLATION}.get(doc["verdict"], EXIT_INCOMPLETE)


def prove_report(results: list[proofs.ProofResult], *, rules: str, brokers: int, reason: str,
                 duration_s: float) -> dict[str, Any]:
    """The JSON report of `kcm prove` (`docs/prove-schema.json`): every proof, with Z3's
    counterexample for a failure, and the verdict."""
    verdict = report.verdict_of(None, results, reason)
    n_failed = sum(r.result == "failed" for r in results)
    n_unknown = sum(r.result == "unknown" for r in results)
    words = [f"{len(results) - n_failed - n_unknown} of {len(results)} proofs proved"]
    properties = {r.property for r in results}
    failing = {r.property for r in results if r.result == "failed"}
    words += [f"{n_failed} failed ({len(failing)} of {len(properties)} properties)"] * bool(n_failed)
    words += [f"{n_unknown} timed out"] * bool(n_unknown)
    return {
        "schema_version": report.SCHEMA_VERSION, **VERSIONS, "command": "prove", "verdict": verdict,
        "reason": reason or ("a proof timed out" if verdict == "incomplete" else ""),
        "rules": rules, "brokers": brokers, "duration_s": round(duration_s, 3),
        "proofs": [{"property": r.property, "brokers": r.brokers, "result": r.result, "seconds": round(r.seconds, 4),
                    **({"statement": r.statement, "counterexample": r.counterexample} if r.result == "failed" else {})}
                   for r in results],
        "summary": ", ".join(words),
    }


def _print_table(console: Console, rules: proofs.Rules, results: list[proofs.ProofResult]) -> None:
    """One row per property (broker counts, result, time), then the smallest counterexample of each failure."""
    table = Table(title=f"Election proofs ({rules.name})", title_justify="left")
    table.add_column("Property", overflow="fold")
    table.add_column("Brokers", justify="right", no_wrap=True)
    table.add_column("Result", no_wrap=True)
    table.add_column("Time", justify="right", no_wrap=True)
    by_property: dict[str, list[proofs.ProofResult]] = {}
    for r in results:
        by_property.setdefault(r.property, []).append(r)
    for name, rs in by_property.items():
        failed = [r.brokers for r in rs if r.result == "failed"]
        unknown = [r.brokers for r in rs if r.result == "unknown"]
        if failed:
            verdict = f"[red]failed[/red] (n = {_counts(failed)})"
        elif unknown:
            verdict = f"[yellow]unknown[/yellow] (n = {_counts(unknown)})"
        else:
            verdict = "[green]proved[/green]"
        table.add_row(name, _counts(r.brokers for r in rs), verdict, f"{sum(r.seconds for r in rs):.2f} s")
    console.print(table)
    for rs in by_property.values():
        if not any(r.result == "failed" for r in rs):
            continue
        smallest = min((r for r in rs if r.result == "failed"), key=lambda r: r.brokers)
        example = smallest.counterexample or {}
        console.print(f"\n[red]✗[/red] [bold]{smallest.property}[/bold] fails with {smallest.brokers} broker(s)")
        console.print(f"  property: {smallest.statement}")
        console.print(f"  counterexample: {_fields(example.get('inputs', {}))}")
        console.print(f"  returned: {_fields(example.get('outputs', {}))}")
