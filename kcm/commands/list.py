"""`kcm list`: what kcm knows, from the code itself (`kcm.reference`).

`properties` lists every property the model registers for a config (name, meaning, kind, where it
is judged, the Finding that breaks it in 2.6, when, and what the violations it excuses look like);
`presets` the shipped presets; `known` the Findings (known Kafka 2.6 behaviours: the properties
each breaks, when, and what its violations look like, since it excuses only those); `variants`
the historical bugs (`kcm variants`); `config` every config key with its default, range and
meaning (`--markdown`: docs/config.md); `reach` what a config can reach at all, before any run:
its size class, the table edges and goals out of its reach and why (`kcm.model.checking.reach`);
`grids` the shipped grids of small scopes that `kcm sweep` explores (docs/sweep.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from kcm import config, reference
from kcm.commands import variants
from kcm.model.checking import reach as reach_of
from kcm.sweep import grid as grids_of


@click.group("list")
def command() -> None:
    """List what kcm knows: properties, presets, known 2.6 behaviours, variants, config keys, reach, grids."""


def _table(title: str, columns: tuple[str, ...], rows: Sequence[tuple[str, ...]], keep: tuple[int, ...] = (0,)) -> None:
    """A table whose columns `keep` (names and paths a reader copies into the next command) are
    never cut; the prose wraps. Into a file or a CI log it is 160 columns wide, not 80."""
    console = Console(soft_wrap=False)
    if not console.is_terminal:
        console.width = 160
    table = Table(title=title, show_lines=True)
    for i, column in enumerate(columns):
        table.add_column(column, no_wrap=i in keep, overflow="fold")
    for row in rows:
        table.add_row(*row)
    console.print(table)


@command.command("properties")
@click.option("--preset", default=None, help=f"Preset name (default: {config.DEFAULT_PRESET}).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML config file instead of a preset.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (a list of objects) instead of a table.")
def properties(preset: str | None, config_file: Path | None, as_json: bool) -> int:
    """Every property the model registers for the config, in the order the checkers list them."""
    name, cfg = config.load(preset, config_file)
    declarations = reference.registered(cfg)
    if as_json:
        click.echo(json.dumps([{
            "name": d.name, "meaning": d.meaning, "kind": d.kind.value, "judged": d.judged.value,
            **reference.known_here(d, cfg),
        } for d in declarations], indent=2))
        return 0
    _table(f"Properties registered for {name} ({len(declarations)})",
           ("name", "kind", "judged", "meaning", "known 2.6"),
           [(d.name, d.kind.value, d.judged.value, d.meaning,
             reference.known_line(d, cfg))
            for d in declarations])
    return 0


@command.command("presets")
def presets() -> int:
    """Every shipped preset: its size, its budgets and its description."""
    rows = []
    for name, cfg in reference.presets_loaded():
        size, budgets = reference.preset_line(cfg)
        rows.append((name, size + (f", variant {cfg.variant}" if cfg.variant else ""), budgets, cfg.description))
    _table("Presets (kcm check|explore --preset NAME)", ("name", "size", "budgets", "description"), rows)
    return 0


@command.command("known")
def known() -> int:
    """The known Kafka 2.6 behaviours: each Finding, the properties it breaks and when, what its
    violations look like (only those are excused), its trace."""
    rows = []
    for finding, declarations in reference.known():
        for when, names in reference.by_condition(declarations).items():
            rows.append((f"Findings {finding.number}", "\n".join(names), when,
                         f"{finding.title}.\nExcused only if {finding.looks_like}.", finding.trace))
    _table("Known Kafka 2.6 behaviours: a violation that looks like its Finding is reported as known, "
           "any other violation of the property fails the verdict (kcm trace show TRACE)",
           ("Finding", "breaks", "when", "what, and which violations are its own", "trace"), rows, keep=(0, 1, 4))
    return 0


command.add_command(variants.command)


@command.command("config")
@click.option("--markdown", is_flag=True, help="Print the Markdown reference that docs/config.md holds.")
def config_keys(markdown: bool) -> int:
    """Every config key: its default, its allowed range and its meaning."""
    if markdown:
        click.echo(reference.config_markdown(), nl=False)
        return 0
    _table("Config keys (a preset's TOML, or --config FILE)", ("key", "default", "range", "meaning"),
           [(k.name, k.default, k.range, k.meaning) for k in reference.config_keys()])
    return 0


@command.command("reach")
@click.option("--preset", default=None, help=f"Preset name (default: {config.DEFAULT_PRESET}).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML config file instead of a preset.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def reach(preset: str | None, config_file: Path | None, as_json: bool) -> int:
    """What a config can reach at all, said before any run: its size class, and the table edges
    and goals no run of it can reach, each with the reason (docs/checking.md, "Before the run:
    what a config can reach")."""
    name, cfg = config.load(preset, config_file)
    if as_json:
        click.echo(json.dumps({
            "config": name, "initial_states": reach_of.initial_states(cfg),
            "perturbations_per_run": list(reach_of.perturbations_per_run(cfg)),
            "table_edges": len(reach_of.edges()),
            "unreachable_edges": [{"edge": u.what, "reason": u.reason} for u in reach_of.unreachable_edges(cfg)],
            "unreachable_goals": [{"goal": u.what, "reason": u.reason} for u in reach_of.unreachable_goals(cfg)],
        }, indent=2))
        return 0
    click.echo(f"{name}:")
    for line in reach_of.reach_lines(cfg):
        click.echo(f"  {line}")
    return 0


def _budget_text(budget: grids_of.Budget) -> str:
    parts = ([f"{budget.max_states:,} states"] if budget.max_states else []) + (
        [f"{budget.seconds:g} s"] if budget.seconds else [])
    return " or ".join(parts) or "none"


@command.command("grids")
def grids() -> int:
    """Every shipped grid of `kcm sweep`: its version, how many scopes it expands to (and how many
    combinations it drops), the budget of one scope's run, and its description."""
    rows = []
    for name in grids_of.grid_names():
        g = grids_of.load(name)
        dropped = sum(g.dropped.values())
        rows.append((name, f"v{g.version}", f"{len(g.scopes)}" + (f" ({dropped} dropped)" if dropped else ""),
                     _budget_text(g.budget), g.description))
    _table("Grids (kcm sweep --grid NAME)", ("name", "version", "scopes", "budget per scope", "description"), rows)
    return 0
