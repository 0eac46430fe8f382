"""`kcm diagram`: draw the state machines from the tables (DOT always; SVG and PNG with graphviz)."""

from __future__ import annotations

from pathlib import Path

import click

from kcm.checker import diagrams


@click.group(name="diagram")
def command() -> None:
    """Draw diagrams: the two state machines, straight from the tables."""


@command.command(name="tables")
@click.option("--format", "formats", multiple=True, type=click.Choice(diagrams.FORMATS),
              help="Output format; repeat for several. Default: all (SVG and PNG need graphviz's `dot`).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("docs/diagrams"),
              show_default=True, help="Folder to write into.")
def tables(formats: tuple[str, ...], out: Path) -> None:
    """The replica and partition state machines, one edge per valid transition, labelled with the
    Kafka action that takes it; the replica diagram marks the pre-2.3 table difference."""
    written = diagrams.write(diagrams.table_diagrams(), out, formats or diagrams.FORMATS)
    for path in written:
        click.echo(f"wrote {path}")
    if not formats and not diagrams.dot_available():
        click.echo("note: graphviz's `dot` is not installed; only DOT files were written")
