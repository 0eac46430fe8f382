"""`kcm trace`: work with counterexample traces written by the checker (`.itf.json`).

`kcm trace show FILE.itf.json` prints the trace as text: the initial state in full, then each
step's action and only the fields it changed. It reads the ITF file alone (no model is built), so
it also renders traces written by other ITF producers (Apalache, Quint). A missing or corrupt
file is one line on stderr and exit code 2.
"""

from __future__ import annotations

import click

from kcm.checker.itf import read_itf
from kcm.checker.traces import render_text


@click.group("trace")
def command() -> None:
    """Show counterexample traces (ITF files, .itf.json)."""


@command.command("show")
@click.argument("file", type=click.Path(dir_okay=False, path_type=str))
def show(file: str) -> int:
    """Print the trace in FILE: the initial state, then each action and what it changed."""
    click.echo(render_text(read_itf(file)), nl=False)
    return 0
