"""`kcm variants`: the historical bugs the model can put back, and what each breaks."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from kcm.model.variants import SYNTHETIC_VARIANTS, VARIANTS


@click.command(name="variants")
def command() -> int:
    """List the bug variants: name, Kafka issue, what it changes, the invariant it breaks."""
    table = Table(title="Historical controller bugs (kcm check|explore|fuzz --variant NAME runs NAME on its preset)")
    # The names (the variant, its issue, the invariant it breaks, its preset) are never cut: they
    # are what a reader copies into the next command. The description wraps into the room left.
    for column in ("name", "Kafka issue", "fixed in", "breaks", "preset"):
        table.add_column(column, no_wrap=True)
    table.add_column("what it changes", ratio=1, overflow="fold")
    for v in VARIANTS.values():
        table.add_row(v.name, v.jira, v.fixed_in, v.breaks, v.preset, v.changes)
    for v in SYNTHETIC_VARIANTS.values():
        table.add_row(v.name, "(synthetic)", "-", f"{v.breaks} (--liveness)", v.preset, v.changes)
    Console(soft_wrap=False).print(table)
    return 0
