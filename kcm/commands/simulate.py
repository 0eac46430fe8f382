"""`kcm simulate`: run the reference implementation with real threads through a scenario, and watch it.

A `ThreadedCluster` (the embedded ZooKeeper, or a real one at HOST:PORT) goes through a scenario's
steps (`kcm.impl.scenario`; two are shipped in `kcm/scenarios/`, `failover` is the default). After
each step the cluster is left to settle; then the step's story is printed as a timeline (elections
with their epochs, leader changes with leader epochs, ISR changes, requests queued and fenced,
state transitions) and the model's state invariants (`kcm.model.catalogue`, the `always` ones) are
checked on the abstraction of a snapshot of the cluster (on a real ZooKeeper, all but the ones
that read the armed watches, which a client cannot list). At the end, a table of the controller,
its epoch, and every partition's leader, ISR and leader epoch.

Exit codes: 0 every check held; 1 an invariant failed on the way; 2 bad usage (an unreadable or
malformed scenario, a ZooKeeper that cannot be reached within the connection timeout or stops
answering during the run); 3 the cluster did not settle after a step within `--timeout`.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from functools import partial
from importlib import resources
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from kcm.checker.engine.contract import Always
from kcm.checker.engine.errors import EXIT_INCOMPLETE, EXIT_PASS, EXIT_VIOLATION, Incomplete, UsageError
from kcm.config import parse_toml, read_toml_file
from kcm.impl.kafka_config import KafkaConfig
from kcm.impl.scenario import Scenario, ScenarioError, apply_step, describe
from kcm.impl.threaded_cluster import ThreadedCluster
from kcm.impl.timeline import Record
from kcm.impl.zk.protocol import ZooKeeperError, ZooKeeperUnavailable
from kcm.model.catalogue import READS_WATCHES, properties_for
from kcm.model.config import ModelConfig
from kcm.model.variants import flags_for
from kcm.net import refusal

DEFAULT_SCENARIO = "failover"
#: Record kinds shown with --brief (requests, deliveries and transitions are left out).
_BRIEF = {"election", "resignation", "leader", "isr", "fenced", "broker", "shutdown", "invalid transition",
          "broker change", "acted while inactive"}


def scenario_names() -> tuple[str, ...]:
    """The scenarios shipped in `kcm/scenarios/`, by name."""
    folder = resources.files("kcm") / "scenarios"
    return tuple(sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml")))


def _load_scenario(value: str | None) -> Scenario:
    """A shipped scenario by name (`failover`), or a TOML file by path."""
    value = value or DEFAULT_SCENARIO
    if value in scenario_names():
        where = f"scenario '{value}'"
        values = parse_toml((resources.files("kcm") / "scenarios" / f"{value}.toml").read_text(encoding="utf-8"),
                            where)
    elif value.endswith(".toml") or "/" in value or Path(value).exists():
        values, where = read_toml_file(Path(value), "scenario file")
    else:
        raise UsageError(f"unknown scenario '{value}'; choose one of {', '.join(scenario_names())} or give a TOML file")
    try:
        return Scenario.from_mapping(values, where)
    except ScenarioError as exc:
        raise UsageError(str(exc)) from None


def _check_zk(value: str) -> str:
    if value == "memory":
        return value
    for address in value.split(","):
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise UsageError(f"--zk {value!r}: give `memory` or HOST:PORT (e.g. 127.0.0.1:2181)")
        if not 0 < int(port) < 65536:
            raise UsageError(f"--zk {value!r}: port {port} is out of range (1..65535)")
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
    if kind == "delivered" and "STALE_CONTROLLER_EPOCH" in record.detail:
        # Kafka 2.6 answers a partition whose leader epoch is not newer than the broker's with
        # STALE_CONTROLLER_EPOCH even when the controller epoch is current
        # (kafka@2.6.0:core/src/main/scala/kafka/server/ReplicaManager.scala, becomeLeaderOrFollower):
        # a resend of what the broker already has, not a fenced controller.
        return (f"{at} [dim]✓ broker {record.peer} applied {record.detail} "
                f"(ignored: leader epoch not newer than the broker's, a resend; Kafka 2.6 names it so)[/dim]")
    if kind == "request":
        return f"{at} [dim]→ controller {record.broker} to broker {record.peer}: {record.detail}[/dim]"
    if kind == "delivered":
        return f"{at} [dim]✓ broker {record.peer} applied {record.detail}[/dim]"
    if kind in ("transition", "invalid transition"):
        style = "red" if kind == "invalid transition" else "dim"
        return f"{at} [{style}]{kind}{where}: {record.detail} (controller {record.broker})[/{style}]"
    who = f"broker {record.broker}" if kind == "broker" else f"{kind} · broker {record.broker}"
    return f"{at} [magenta]{who}[/magenta]{where}: {record.detail}"


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
              help="The embedded ZooKeeper, or a real one (the run works in a chroot /kcm-simulate-<hex>, "
                   "removed at the end unless --keep-chroot).")
@click.option("--scenario", "scenario", default=None, metavar="NAME|FILE",
              help=f"A shipped scenario ({', '.join(scenario_names())}) or a TOML file "
                   f"[default: {DEFAULT_SCENARIO}].")
@click.option("--seed", type=int, default=0, show_default=True, help="Seeds the scenario's random choices.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(0.1, 600), default=30.0, show_default=True,
              help="Seconds to wait for the cluster to settle after each step.")
@click.option("--connect-timeout", "connect_timeout_s", type=click.FloatRange(0.1, 120), default=5.0,
              show_default=True, help="Seconds to wait for a ZooKeeper session.")
@click.option("--keep-chroot", is_flag=True, help="With a real ZooKeeper: leave the run's chroot for inspection.")
@click.option("--brief", is_flag=True, help="Leave requests, deliveries and state transitions out of the timeline.")
def command(brokers, zk, scenario, seed, timeout_s, connect_timeout_s, keep_chroot, brief) -> int:
    """Run the implementation (real threads) through a scenario; print its timeline and a summary."""
    scenario = _load_scenario(scenario)
    zk = _check_zk(zk)
    # kazoo logs each reconnection attempt; a ZooKeeper gone for good is one line at the end.
    logging.getLogger("kazoo").setLevel(logging.CRITICAL)
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
    unjudged = []
    if zk != "memory":
        # A ZooKeeper client cannot list the armed watches: the abstraction of a real ZooKeeper
        # has none, and a property that reads them would fail on every state.
        unjudged = sorted(p.name for p in invariants if p.name in READS_WATCHES)
        invariants = [p for p in invariants if p.name not in READS_WATCHES]
    rng = random.Random(seed)
    violations: list[tuple[int, str]] = []
    unsettled = 0
    console.print(f"kcm simulate · scenario [bold]{scenario.name}[/bold] · {n} brokers · ZooKeeper {zk}"
                  + (f" · variant {scenario.variant}" if scenario.variant else "") + f" · seed {seed}")
    if scenario.description:
        console.print(f"[dim]{scenario.description}[/dim]")
    if unjudged:
        console.print("[dim]not checked on a real ZooKeeper (a client cannot list its watches): "
                      f"{', '.join(unjudged)}[/dim]")
    shown = 0
    # A step that cannot finish (ZooKeeper gone for good, a client retrying forever) must not hang
    # the run: each step runs on a worker thread within a deadline, and the main thread, waiting in
    # short joins, takes Ctrl-C at once.
    step_deadline_s = timeout_s + 2 * connect_timeout_s + 10.0
    try:
        for i, step in enumerate(scenario.steps, 1):
            console.print(f"[bold]{i}. {describe(step)}[/bold]")
            # bound now: a step past its deadline runs on while the loop goes to the next one
            run = partial(_run_step, cluster, step, rng, f"step {i}", timeout_s, invariants)
            settled, failed = _bounded(run, step_deadline_s, f"step {i} ({step['do']})", zk)
            if not settled:
                unsettled += 1
                console.print(f"  [yellow]the cluster did not settle within {timeout_s:g} s[/yellow]")
            records = cluster.timeline.records
            for record in records[shown:]:
                if not brief or record.kind in _BRIEF:
                    console.print("  " + _line(record))
            shown = len(records)
            for name in failed:
                violations.append((i, name))
                console.print(f"  [bold red]invariant violated: {name}[/bold red]")
        console.print(_bounded(lambda: _summary(cluster), step_deadline_s, "the summary", zk))
    finally:
        _finish(cluster, zk, keep_chroot, console)
    if violations:
        console.print("[bold red]VIOLATION[/bold red] · " + "; ".join(f"step {i}: {name}" for i, name in violations))
        return EXIT_VIOLATION
    if unsettled:
        console.print(f"[bold yellow]INCOMPLETE[/bold yellow] · {unsettled} step(s) did not settle")
        return EXIT_INCOMPLETE
    console.print(f"[bold green]PASS[/bold green] · {len(invariants)} state invariants held after each of "
                  f"{len(scenario.steps)} steps")
    return EXIT_PASS


def _run_step(cluster: ThreadedCluster, step, rng: random.Random, where: str, timeout_s: float,
              invariants) -> tuple[bool, list[str]]:
    """One step: apply it, let the cluster settle, check the invariants on a snapshot."""
    try:
        apply_step(cluster, step, rng, where)
    except ScenarioError as exc:
        raise UsageError(str(exc)) from None
    settled = cluster.settle(timeout_s)
    state = cluster.snapshot()
    return settled, [p.name for p in invariants if not p.holds(state)]


def _bounded(work, deadline_s: float, what: str, zk: str):
    """`work()` on a daemon thread, waited for at most `deadline_s`; its exception is re-raised here.
    A ZooKeeper failure is one line (exit 2); running out of time is incomplete (exit 3)."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the main thread as is
            outcome["error"] = exc

    worker = threading.Thread(target=run, name="kcm-simulate-step", daemon=True)
    worker.start()
    end = time.monotonic() + deadline_s
    while worker.is_alive() and time.monotonic() < end:
        worker.join(0.1)   # short joins: Ctrl-C reaches the main thread at once
    if worker.is_alive():
        if zk != "memory" and not _zookeeper_answers(zk):
            # A server that went away can hold a step in kazoo's retries rather than fail it; either
            # way the cause is ZooKeeper, which is bad input (exit 2), not an unsettled cluster.
            raise UsageError(f"ZooKeeper {zk} does not answer: {what} did not finish within {deadline_s:g} s")
        raise Incomplete(f"{what} did not finish within {deadline_s:g} s; is ZooKeeper {zk} still up?")
    error = outcome.get("error")
    if isinstance(error, ZooKeeperError):
        raise UsageError(f"ZooKeeper failed during the simulation ({what}): {error}") from None
    if error is not None:
        raise error
    return outcome["value"]


def _zookeeper_answers(zk: str, timeout_s: float = 2.0) -> bool:
    """Whether some server of the connect string `host:port[,host:port...][/chroot]` accepts a TCP
    connection within `timeout_s`."""
    for address in zk.split("/", 1)[0].split(","):
        host, _, port = address.rpartition(":")
        if port.isdigit() and refusal(host or "127.0.0.1", int(port), timeout_s) is None:
            return True
    return False


def _finish(cluster: ThreadedCluster, zk: str, keep_chroot: bool, console: Console) -> None:
    """Stop the cluster and, on a real ZooKeeper, remove the run's chroot; both bounded in time,
    so that a ZooKeeper that went away cannot hold the exit."""
    closer = threading.Thread(target=cluster.close, name="kcm-simulate-close", daemon=True)
    closer.start()
    closer.join(10.0)
    chroot = getattr(cluster, "chroot", None)
    if zk == "memory" or not chroot:
        return
    if keep_chroot:
        console.print(f"[dim]kept ZooKeeper chroot {chroot} (--keep-chroot)[/dim]")
        return
    remover = threading.Thread(target=_remove_chroot, args=(zk, chroot), name="kcm-simulate-chroot", daemon=True)
    remover.start()
    remover.join(10.0)
    if remover.is_alive():
        console.print(f"[yellow]could not remove ZooKeeper chroot {chroot} (ZooKeeper {zk} does not answer)[/yellow]")


def _remove_chroot(zk: str, chroot: str) -> None:
    from kazoo.client import KazooClient

    client = KazooClient(hosts=zk, timeout=5.0)
    try:
        client.start(timeout=5.0)
        client.delete(chroot, recursive=True)
    except Exception:  # best effort: the run's verdict stands without it
        pass
    finally:
        client.stop()
        client.close()
