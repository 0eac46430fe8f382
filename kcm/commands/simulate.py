"""`kcm simulate`: run the reference implementation with real threads through a scenario, and watch it.

A `ThreadedCluster` (the embedded ZooKeeper, or a real one at HOST:PORT) goes through a scenario's
steps (`kcm.impl.scenario`; two are shipped in `kcm/scenarios/`, `failover` is the default). After
each step the cluster is left to settle; then the step's story is printed as a timeline (elections
with their epochs, leader changes with leader epochs, ISR changes, requests queued and fenced,
state transitions) and the model's state invariants (`kcm.model.invariants`, the `always` ones) are
checked on the abstraction of a snapshot of the cluster. At the end, a table of the controller, its
epoch, and every partition's leader, ISR and leader epoch.

Exit codes: 0 every check held; 1 an invariant failed on the way; 2 bad usage (an unreadable or
malformed scenario, a ZooKeeper that cannot be reached within the connection timeout); 3 the cluster
did not settle after a step within `--timeout`.
"""

from __future__ import annotations

import random
from importlib import resources
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from kcm.config import parse_toml, read_toml_file
from kcm.errors import EXIT_INCOMPLETE, EXIT_PASS, EXIT_VIOLATION, UsageError
from kcm.impl.kafka_config import KafkaConfig
from kcm.impl.scenario import Scenario, ScenarioError, apply_step, describe
from kcm.impl.threaded_cluster import ThreadedCluster
from kcm.impl.timeline import Record
from kcm.impl.zk.protocol import ZooKeeperError, ZooKeeperUnavailable
from kcm.model.config import ModelConfig
from kcm.model.invariants import properties_for
from kcm.model.properties import Always
from kcm.model.variants import flags_for

DEFAULT_SCENARIO = "failover"
#: Record kinds shown with --brief (requests, deliveries and transitions are left out).
_BRIEF = {"election", "resignation", "leader", "isr", "fenced", "broker", "shutdown", "invalid transition",
          "broker change", "acted while inactive"}


def _load_scenario(path: Path | None) -> Scenario:
    if path is None:
        where = f"scenario '{DEFAULT_SCENARIO}'"
        values = parse_toml((resources.files("kcm") / "scenarios" / f"{DEFAULT_SCENARIO}.toml").read_text(encoding="utf-8"),
                            where)
    else:
        values, where = read_toml_file(path, "scenario file")
    try:
        return Scenario.from_mapping(values, where)
    except ScenarioError as exc:
        raise UsageError(str(exc)) from None


def _check_zk(value: str) -> str:
    if value == "memory":
        return value
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--zk {value!r}: give `memory` or HOST:PORT (e.g. 127.0.0.1:2181)")
    return value


def _line(record: Record) -> str:
    at = f"[dim]{record.at:7.3f}s[/dim]"
    where = f" {record.partition}" if record.partition else ""
    kind = record.kind
    if kind == "election":
        return f"{at} [bold green]⚑ {record.detail}[/bold green]"
    if kind == "resignation":
        return f"{at} [yellow]⚐ {record.detail}[/yellow]"
    if kind == "leader":
        return f"{at} [cyan]★{where}: {record.detail}[/cyan] [dim](controller epoch {record.epoch})[/dim]"
    if kind == "isr":
        return f"{at} [cyan]≈{where}: leader {record.broker} wrote {record.detail}[/cyan]"
    if kind == "fenced":
        return f"{at} [red]✗ broker {record.peer} rejected {record.detail}[/red]"
    if kind == "request":
        return f"{at} [dim]→ controller {record.broker} to broker {record.peer}: {record.detail}[/dim]"
    if kind == "delivered":
        return f"{at} [dim]✓ broker {record.peer} applied {record.detail}[/dim]"
    if kind in ("transition", "invalid transition"):
        style = "red" if kind == "invalid transition" else "dim"
        return f"{at} [{style}]{kind}{where}: {record.detail} (controller {record.broker})[/{style}]"
    return f"{at} [magenta]{kind}[/magenta] broker {record.broker}{where}: {record.detail}"


def _summary(cluster: ThreadedCluster) -> Table:
    controller = cluster.controller_id()
    epoch = cluster.admin.get_controller_epoch()
    table = Table(title=f"controller: broker {controller if controller >= 0 else '-'}, "
                        f"epoch {epoch[0] if epoch else 0}", title_justify="left")
    for column in ("partition", "replicas", "leader", "ISR", "leader epoch", "written at controller epoch"):
        table.add_column(column)
    for tp, (replicas, state) in cluster.partition_states().items():
        if state is None:
            table.add_row(str(tp), str(list(replicas)), "-", "-", "-", "-")
        else:
            lai = state.leader_and_isr
            table.add_row(str(tp), str(list(replicas)), str(lai.leader) if lai.leader >= 0 else "none",
                          str(list(lai.isr)), str(lai.leader_epoch), str(state.controller_epoch))
    return table


@click.command(name="simulate")
@click.option("--brokers", type=click.IntRange(1, 16), default=None,
              help="Number of brokers (default: the scenario's, else 3).")
@click.option("--zk", "zk", default="memory", show_default=True, metavar="memory|HOST:PORT",
              help="The embedded ZooKeeper, or a real one.")
@click.option("--scenario", "scenario_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help=f"A scenario TOML file (default: the shipped `{DEFAULT_SCENARIO}` scenario).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seeds the scenario's random choices.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(0.1, 600), default=30.0, show_default=True,
              help="Seconds to wait for the cluster to settle after each step.")
@click.option("--connect-timeout", "connect_timeout_s", type=click.FloatRange(0.1, 120), default=5.0,
              show_default=True, help="Seconds to wait for a ZooKeeper session.")
@click.option("--brief", is_flag=True, help="Leave requests, deliveries and state transitions out of the timeline.")
def command(brokers, zk, scenario_file, seed, timeout_s, connect_timeout_s, brief) -> int:
    """Run the implementation (real threads) through a scenario; print its timeline and a summary."""
    scenario = _load_scenario(scenario_file)
    zk = _check_zk(zk)
    n = brokers or scenario.brokers or 3
    console = Console(highlight=False, soft_wrap=True)
    config = KafkaConfig(unclean_leader_election_enable=scenario.unclean_leader_election_enable,
                         flags=flags_for(scenario.variant), replica_lag_time_max_ms=3000, replica_fetch_interval_ms=20,
                         isr_change_propagation_blackout_ms=50, isr_change_propagation_interval_ms=200,
                         controlled_shutdown_retry_backoff_ms=100, request_send_backoff_ms=20)
    try:
        cluster = ThreadedCluster(n, zookeeper=zk, config=config, connect_timeout_s=connect_timeout_s,
                                  session_timeout_s=0.5)
    except ZooKeeperUnavailable as exc:
        raise UsageError(str(exc)) from None
    invariants = [p for p in properties_for(ModelConfig(brokers=n), lambda s, a: []) if isinstance(p, Always)]
    rng = random.Random(seed)
    violations: list[tuple[int, str]] = []
    unsettled = 0
    console.print(f"kcm simulate · scenario [bold]{scenario.name}[/bold] · {n} brokers · ZooKeeper {zk}"
                  + (f" · variant {scenario.variant}" if scenario.variant else "") + f" · seed {seed}")
    if scenario.description:
        console.print(f"[dim]{scenario.description}[/dim]")
    shown = 0
    try:
        for i, step in enumerate(scenario.steps, 1):
            console.print(f"[bold]{i}. {describe(step)}[/bold]")
            try:
                apply_step(cluster, step, rng, f"step {i}")
            except ScenarioError as exc:
                raise UsageError(str(exc)) from None
            if not cluster.settle(timeout_s):
                unsettled += 1
                console.print(f"  [yellow]the cluster did not settle within {timeout_s:g} s[/yellow]")
            records = cluster.timeline.records
            for record in records[shown:]:
                if not brief or record.kind in _BRIEF:
                    console.print("  " + _line(record))
            shown = len(records)
            state = cluster.snapshot()
            failed = [p.name for p in invariants if not p.holds(state)]
            for name in failed:
                violations.append((i, name))
                console.print(f"  [bold red]invariant violated: {name}[/bold red]")
        console.print(_summary(cluster))
    except ZooKeeperError as exc:
        raise UsageError(f"ZooKeeper failed during the simulation: {exc}") from None
    finally:
        cluster.close()
    if violations:
        console.print(f"[bold red]VIOLATION[/bold red] · " + "; ".join(f"step {i}: {name}" for i, name in violations))
        return EXIT_VIOLATION
    if unsettled:
        console.print(f"[bold yellow]INCOMPLETE[/bold yellow] · {unsettled} step(s) did not settle")
        return EXIT_INCOMPLETE
    console.print(f"[bold green]PASS[/bold green] · {len(invariants)} state invariants held after each of "
                  f"{len(scenario.steps)} steps")
    return EXIT_PASS
