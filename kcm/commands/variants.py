"""`kcm variants`: the historical bugs the model can put back, and what each breaks."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from kcm.model.variants import SYNTHETIC_VARIANTS, VARIANTS


@click.command(name="variants")
def command() -> int:
    """List the bug variants: name, Kafka issue, what it changes, the invariant it breaks."""
    rows = [(v.name, v.jira, v.fixed_in, v.breaks, v.preset, v.changes) for v in VARIANTS.values()]
    rows += [(v.name, "(synthetic)", "-", v.breaks, v.preset, f"{v.changes} (only `--liveness` sees it)")
             for v in SYNTHETIC_VARIANTS.values()]
    console = Console(soft_wrap=False)
    table = Table(title="Historical controller bugs (kcm check|explore|fuzz --variant NAME runs NAME on its preset)")
    # The names (the variant, its issue, the invariant it breaks, its preset) are never cut: they
    # are what a reader copies into the next command. What each changes is prose, printed below
    # the table where it can wrap at any width.
    for column in ("name", "Kafka issue", "fixed in", "breaks", "preset"):
        table.add_column(column, no_wrap=column != "fixed in", overflow="fold")
    for name, jira, fixed_in, breaks, preset, _ in rows:
        table.add_row(name, jira, fixed_in, breaks, preset)
    console.print(table)
    console.print("What each changes:")
    for name, *_, changes in rows:
        console.print(f"  {name}: {changes}")
    return 0
