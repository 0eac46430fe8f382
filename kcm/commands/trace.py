"""`kcm trace`: work with counterexample traces written by the checker (`.itf.json`).

`kcm trace show FILE.itf.json` prints the trace as text: the initial state in full, then each
step's action and only the fields it changed, then a legend (watches, budgets, stamps); with
`--html PAGE` it also writes the trace as one self-contained page (`kcm.checker.html_report`).
`--step N` prints one step instead: its action, what it changed, and then the whole state after
it, every field to its leaves (`kcm.serve.fields`), as `kcm serve` shows it. It reads the ITF
file alone (no model is built), so it also renders traces written by other ITF
producers (Apalache, Quint). A missing or corrupt
file is one line on stderr and exit code 2.
"""

from __future__ import annotations

from pathlib import Path

import click

from kcm.checker import html_report
from kcm.checker.engine.errors import UsageError, check_writable_file, write_or_fail
from kcm.checker.engine.itf import ItfTrace, read_itf
from kcm.checker.engine.traces import diff_values, format_change, format_value, render_text, title
from kcm.checker.sequence import TEXT_LEGEND
from kcm.serve.fields import all_leaves


@click.group("trace")
def command() -> None:
    """Show counterexample traces (ITF files, .itf.json)."""


@command.command("show")
@click.argument("file", type=click.Path(dir_okay=False, path_type=str))
@click.option("--html", "html_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the trace as one self-contained page: a sequence diagram of the messages and "
                   "ZooKeeper writes, the state at each step, a legend.")
@click.option("--step", type=click.IntRange(min=0), default=None, metavar="N",
              help="Print step N only: its action, what it changed, and the whole state after it (every field).")
def show(file: str, html_file: Path | None, step: int | None) -> int:
    """Print the trace in FILE: the initial state, then each action and what it changed, then a
    legend; with --step N, the full state at step N instead."""
    trace = read_itf(file)
    check_writable_file(html_file, "--html")
    last = len(trace.states) - 1
    if step is not None and step > last:
        raise UsageError(f"--step {step}: the trace in {file} has {last} step{'s' * (last != 1)} (0 to {last})")
    click.echo(render_text(trace) if step is None else step_text(trace, step), nl=False)
    if any(name == "zk" or name.startswith("zk.") for name in trace.vars):   # a trace of the Kafka model
        click.echo("\n" + TEXT_LEGEND, nl=False)
    if html_file is not None:
        write_or_fail(lambda: html_report.write(html_file, html_report.trace_page(trace, source=file)), html_file,
                      "--html")
        click.echo(f"wrote {html_file}")
    return 0


def step_text(trace: ItfTrace, step: int) -> str:
    """Step `step` of a trace: its action and changes (as the whole trace lists them), then every
    leaf of the state after it, by the dotted paths the changes use."""
    lines = [title(trace), ""]
    if step == 0:
        lines.append("State 0 (initial)")
    else:
        mark = (f"   <-- violates '{trace.invariant}'" if step == len(trace.states) - 1 and trace.invariant
                and trace.kind not in ("sometimes", None) and trace.loop is None else "")
        action = trace.described(step) or "(action not recorded)"
        lines.append(f"Step {step} of {len(trace.states) - 1}: {action}{mark}")
        changes = [c for name in trace.vars
                   for c in diff_values(trace.states[step - 1][name], trace.states[step][name], name)]
        lines += [format_change(*c) for c in changes] or ["  (no change)"]
        lines += ["", f"State after step {step}"]
    lines += [f"  {path} = {format_value(value)}" for path, value in all_leaves(trace.states[step]).items()]
    return "\n".join(lines) + "\n"
