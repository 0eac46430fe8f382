"""`kcm diagram`: draw the state machines from the tables (DOT always; SVG and PNG with graphviz)."""

from __future__ import annotations

from pathlib import Path

import click

from kcm.checker import diagrams
from kcm.checker.engine.errors import check_writable_dir

#: Where diagrams go unless `--out` says: beside every other command's output, never over a
#: checkout's committed docs/diagrams.
DEFAULT_OUT = Path("kcm-out") / "diagrams"


@click.group(name="diagram")
def command() -> None:
    """Draw diagrams: the two state machines, straight from the tables, and the reachable graph."""


@command.command(name="tables")
@click.option("--format", "formats", multiple=True, type=click.Choice(diagrams.FORMATS),
              help="Output format; repeat for several. Default: all (SVG and PNG need graphviz's `dot`).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_OUT,
              show_default=True, help="Folder to write into (`make diagrams` redraws docs/diagrams with --out).")
def tables(formats: tuple[str, ...], out: Path) -> None:
    """The replica and partition state machines, one edge per valid transition, labelled with the
    Kafka action that takes it; the replica diagram marks the pre-2.3 table difference."""
    check_writable_dir(out)
    written = diagrams.write(diagrams.table_diagrams(), out, formats or diagrams.FORMATS)
    for path in written:
        click.echo(f"wrote {path}")
    if not formats and not diagrams.dot_available():
        click.echo("note: graphviz's `dot` is not installed; only DOT files were written")


@command.command(name="reachable")
@click.option("--preset", default=None, help="Preset name (default: the default preset); see kcm/presets.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML config file instead of a preset.")
@click.option("--partition", type=click.IntRange(min=0), default=0, show_default=True,
              help="The partition whose view is drawn (flat index: topic * partitions + partition).")
@click.option("--format", "formats", multiple=True, type=click.Choice(diagrams.FORMATS),
              help="Output format; repeat for several. Default: all (SVG and PNG need graphviz's `dot`).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_OUT,
              show_default=True, help="Folder to write into (`make diagrams` redraws docs/diagrams with --out).")
def reachable(preset: str | None, config_file: Path | None, partition: int, formats: tuple[str, ...],
              out: Path) -> None:
    """The explored graph seen from one partition: the controller's partition and replica states,
    the leader's role and the ISR size; nodes count the states they stand for, edges the actions,
    refused (table-invalid) requests in red. Explores the whole preset first (symmetry off)."""
    from kcm import config
    from kcm.checker.engine.bfs import explore
    from kcm.checker.engine.errors import UsageError
    from kcm.checker.reachable import kafka_reachable
    from kcm.model.checking.kafka_model import KafkaModel

    name, cfg = config.load(preset, config_file)
    check_writable_dir(out)  # before the exploration, not after it
    partitions = cfg.topics * cfg.partitions
    if partition >= partitions:
        raise UsageError(f"--partition {partition}: preset '{name}' has {partitions} partition(s), "
                         f"0 to {partitions - 1}")
    model = KafkaModel(cfg, symmetry=False, initial_orbits=True)  # as the liveness graph
    result = explore(model, keep_graph=True, symmetry=False, stop_on_violation=False)
    if result.verdict == "incomplete":
        raise UsageError(f"the exploration of '{name}' did not finish; nothing drawn")
    diagram, projection = kafka_reachable(model, result.extra["graph"], preset=name, partition=partition)
    written = diagrams.write([diagram], out, formats or diagrams.FORMATS)
    click.echo(f"{result.stats.distinct:,} states in {len(projection.nodes)} views of partition {partition}")
    for path in written:
        click.echo(f"wrote {path}")
