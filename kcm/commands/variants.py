"""`kcm variants`: the historical bugs the model can put back, and what each breaks."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from kcm.model.variants import SYNTHETIC_VARIANTS, VARIANTS


@click.command(name="variants")
def command() -> int:
    """List the bug variants: name, Kafka issue, what it changes, the invariant it breaks."""
    table = Table(title="Historical controller bugs (kcm explore --variant NAME)")
    for column in ("name", "Kafka issue", "fixed in", "what it changes", "breaks", "preset"):
        table.add_column(column)
    for v in VARIANTS.values():
        table.add_row(v.name, v.jira, v.fixed_in, v.changes, v.breaks, v.preset)
    for v in SYNTHETIC_VARIANTS.values():
        table.add_row(v.name, "(synthetic)", "-", v.changes, f"{v.breaks} (--liveness)", v.preset)
    Console(soft_wrap=False).print(table)
    return 0
