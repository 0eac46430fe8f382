"""`kcm prove`: the Z3 proofs of the election rules (`kcm.checker.proofs`).

Every property is proved for every broker count from 1 to `--brokers`, over every assignment, ISR
(in any order), live set and shutting-down set. The table has one row per property: the broker
counts, the result and the time. A failure prints Z3's smallest counterexample (the fewest
brokers) as concrete lists. `--variant` runs a historical rule instead of Kafka 2.6's; a variant
that breaks a property exits 1, as any failure does.

Exit codes: 0 every property holds; 1 a property fails; 2 bad usage; 3 a query timed out.
"""

from __future__ import annotations

from collections.abc import Iterable

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kcm.checker import proofs
from kcm.checker.engine.errors import EXIT_INCOMPLETE, EXIT_PASS, EXIT_VIOLATION, UsageError


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
def command(brokers: int, variant: str | None) -> int:
    """Prove the election rules with Z3 for every input up to N brokers."""
    if not proofs.MIN_BROKERS <= brokers <= proofs.MAX_BROKERS:
        raise UsageError(f"--brokers {brokers} is out of range; allowed {proofs.MIN_BROKERS}..{proofs.MAX_BROKERS}")
    try:
        rules = proofs.rules_named(variant)
    except ValueError as exc:
        raise UsageError(str(exc)) from None

    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal:  # CI logs and pipes: wide enough for the longest property name
        console.width = max(console.width, 120)
    counts = range(proofs.MIN_BROKERS, brokers + 1)
    console.print(f"kcm prove · {rules.doc} · {len(proofs.PROPERTIES)} properties × broker counts {_counts(counts)}")
    if rules is not proofs.KAFKA_2_6 and not rules.changes_election:
        console.print(f"  ({rules.name} does not change the election rules: these are Kafka 2.6's)")

    total = len(proofs.PROPERTIES) * len(counts)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("proving", total=total)
        results = proofs.run(counts, variant=rules.name,
                             on_result=lambda r: progress.update(task, advance=1, description=r.property))

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

    failures = [rs for rs in by_property.values() if any(r.result == "failed" for r in rs)]
    for rs in failures:
        smallest = min((r for r in rs if r.result == "failed"), key=lambda r: r.brokers)
        example = smallest.counterexample or {}
        console.print(f"\n[red]✗[/red] [bold]{smallest.property}[/bold] fails with {smallest.brokers} broker(s)")
        console.print(f"  property: {smallest.statement}")
        console.print(f"  counterexample: {_fields(example.get('inputs', {}))}")
        console.print(f"  returned: {_fields(example.get('outputs', {}))}")

    seconds = sum(r.seconds for r in results)
    n_failed = sum(r.result == "failed" for r in results)
    n_unknown = sum(r.result == "unknown" for r in results)
    if n_failed:
        console.print(f"\n[bold red]FAIL[/bold red]: {len(failures)} of {len(by_property)} properties fail "
                      f"({n_failed} of {len(results)} proofs) in {seconds:.1f} s")
        return EXIT_VIOLATION
    if n_unknown:
        console.print(f"\n[bold yellow]INCOMPLETE[/bold yellow]: {n_unknown} of {len(results)} proofs timed out "
                      f"({seconds:.1f} s)")
        return EXIT_INCOMPLETE
    console.print(f"\n[bold green]PASS[/bold green]: all {len(results)} proofs hold ({seconds:.1f} s)")
    return EXIT_PASS
