"""`kcm trace`: work with counterexample traces written by the checker (`.itf.json`).

`kcm trace show FILE.itf.json` prints the trace as text: the initial state in full, then each
step's action and only the fields it changed, then a legend (watches, budgets, stamps); with
`--html PAGE` it also writes the trace as one self-contained page (`kcm.checker.html_report`). It
reads the ITF file alone (no model is built), so it also renders traces written by other ITF
producers (Apalache, Quint). A missing or corrupt
file is one line on stderr and exit code 2.
"""

from __future__ import annotations

from pathlib import Path

import click

from kcm.checker import html_report
from kcm.checker.engine.errors import check_writable_file, write_or_fail
from kcm.checker.engine.itf import read_itf
from kcm.checker.engine.traces import render_text
from kcm.checker.sequence import TEXT_LEGEND


@click.group("trace")
def command() -> None:
    """Show counterexample traces (ITF files, .itf.json)."""


@command.command("show")
@click.argument("file", type=click.Path(dir_okay=False, path_type=str))
@click.option("--html", "html_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the trace as one self-contained page: a sequence diagram of the messages and "
                   "ZooKeeper writes, the state at each step, a legend.")
def show(file: str, html_file: Path | None) -> int:
    """Print the trace in FILE: the initial state, then each action and what it changed, then a legend."""
    trace = read_itf(file)
    check_writable_file(html_file, "--html")
    click.echo(render_text(trace), nl=False)
    if any(name == "zk" or name.startswith("zk.") for name in trace.vars):   # a trace of the Kafka model
        click.echo("\n" + TEXT_LEGEND, nl=False)
    if html_file is not None:
        write_or_fail(lambda: html_report.write(html_file, html_report.trace_page(trace, source=file)), html_file,
                      "--html")
        click.echo(f"wrote {html_file}")
    return 0
