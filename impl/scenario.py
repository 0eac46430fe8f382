"""Scenarios for `kcm simulate`: a small TOML list of operator actions and failures for a `ThreadedCluster`.

A scenario file looks like this (the shipped ones are in `kcm/scenarios/`):

    name = "failover"
    description = "The controller dies; a broker's session expires; ..."
    brokers = 3                      # optional (`--brokers` overrides it)

    [config]                         # optional
    variant = "V6"                   # a historical bug to put back (`kcm variants`)
    unclean_leader_election_enable = false

    [[step]]
    do = "start"                     # brokers = [0, 1] (default: every broker)
    [[step]]
    do = "create_topic"
    topic = "orders"
    partitions = 3
    replication_factor = 3           # or an explicit assignment = [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    [[step]]
    do = "crash"
    broker = "controller"

Steps (`do`): `start`, `crash` (the process dies; ZooKeeper expires its session after the session
timeout), `restart`, `bounce` (crash and restart at once: a fast bounce), `expire_session`,
`controlled_shutdown` (then the broker stops), `create_topic`, `delete_topic`, `reassign` (`topic`,
`partition`, `replicas`), `preferred_election` (`topic`, `partition`), `move_controller` (delete
/controller), `sleep` (`seconds`). A `broker` is an id, `"controller"` (the current controller),
`"leader:<topic>-<partition>"` (that partition's current leader) or `"random"` (a running broker,
or for `restart` a stopped one, drawn with the `--seed`). Every problem is a `ScenarioError` naming
the step and the field.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kcm.impl.zk_data import TopicPartition
from kcm.model.variants import VARIANTS

ACTIONS = ("start", "crash", "restart", "bounce", "expire_session", "controlled_shutdown", "create_topic",
           "delete_topic", "reassign", "preferred_election", "move_controller", "sleep")
_FIELDS = {
    "start": {"brokers"}, "crash": {"broker"}, "restart": {"broker"}, "bounce": {"broker"},
    "expire_session": {"broker"}, "controlled_shutdown": {"broker"},
    "create_topic": {"topic", "partitions", "replication_factor", "assignment"}, "delete_topic": {"topic"},
    "reassign": {"topic", "partition", "replicas"}, "preferred_election": {"topic", "partition"},
    "move_controller": set(), "sleep": {"seconds"},
}
_REQUIRED = {"crash": {"broker"}, "restart": {"broker"}, "bounce": {"broker"}, "expire_session": {"broker"},
             "controlled_shutdown": {"broker"}, "create_topic": {"topic"}, "delete_topic": {"topic"},
             "reassign": {"topic", "partition", "replicas"}, "preferred_election": {"topic", "partition"},
             "sleep": {"seconds"}}
_CONFIG = {"variant", "unclean_leader_election_enable"}


class ScenarioError(ValueError):
    """A scenario is malformed, or a step cannot be carried out; the message names the step."""


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    brokers: int | None
    variant: str
    unclean_leader_election_enable: bool
    steps: tuple[Mapping[str, Any], ...] = field(default=())

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], where: str = "scenario") -> Scenario:
        known = {"name", "description", "brokers", "config", "step"}
        for key in values:
            if key not in known:
                raise ScenarioError(f"{where}: unknown key `{key}`; known keys are {', '.join(sorted(known))}")
        brokers = values.get("brokers")
        if brokers is not None and (isinstance(brokers, bool) or not isinstance(brokers, int)
                                    or not 1 <= brokers <= 16):
            raise ScenarioError(f"{where}: `brokers` = {brokers!r} must be a whole number in 1..16")
        config = values.get("config", {})
        if not isinstance(config, Mapping):
            raise ScenarioError(f"{where}: `config` must be a table")
        for key in config:
            if key not in _CONFIG:
                raise ScenarioError(f"{where}: unknown config key `{key}`; known keys are {', '.join(sorted(_CONFIG))}")
        variant = config.get("variant", "")
        if variant and variant not in VARIANTS:
            raise ScenarioError(f"{where}: config `variant` = {variant!r} is not one of {', '.join(VARIANTS)}")
        unclean = config.get("unclean_leader_election_enable", False)
        if not isinstance(unclean, bool):
            raise ScenarioError(f"{where}: config `unclean_leader_election_enable` must be true or false")
        steps = values.get("step", [])
        if not isinstance(steps, list) or not steps:
            raise ScenarioError(f"{where}: no steps; add `[[step]]` tables with `do = \"...\"`")
        for i, step in enumerate(steps, 1):
            _validate_step(step, f"{where}: step {i}")
        return cls(str(values.get("name", "scenario")), str(values.get("description", "")), brokers, variant, unclean,
                   tuple(steps))


def _validate_step(step: Any, where: str) -> None:
    if not isinstance(step, Mapping) or "do" not in step:
        raise ScenarioError(f"{where}: a step needs `do` = one of {', '.join(ACTIONS)}")
    action = step["do"]
    if action not in ACTIONS:
        raise ScenarioError(f"{where}: unknown action {action!r}; choose one of {', '.join(ACTIONS)}")
    for key in step:
        if key != "do" and key not in _FIELDS[action]:
            raise ScenarioError(f"{where} ({action}): unknown field `{key}`; allowed: "
                                f"{', '.join(sorted(_FIELDS[action])) or 'none'}")
    for key in _REQUIRED.get(action, ()):
        if key not in step:
            raise ScenarioError(f"{where} ({action}): missing field `{key}`")
    if action == "sleep":
        seconds = step["seconds"]
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= 600:
            raise ScenarioError(f"{where} (sleep): `seconds` = {seconds!r} must be a number of seconds in 0..600")


def describe(step: Mapping[str, Any]) -> str:
    """A step as one line, e.g. `crash broker=controller`."""
    rest = " ".join(f"{k}={v}" for k, v in step.items() if k != "do")
    return f"{step['do']} {rest}".strip()


def _broker(cluster, value: Any, rng: random.Random, where: str, running: bool = True) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < cluster.brokers:
            raise ScenarioError(f"{where}: broker {value} does not exist (brokers are 0..{cluster.brokers - 1})")
        return value
    if value == "controller":
        controller = cluster.controller_id()
        if controller < 0:
            raise ScenarioError(f"{where}: there is no controller right now")
        return controller
    if value == "random":
        candidates = [b for b in range(cluster.brokers) if cluster.is_up(b) == running]
        if not candidates:
            raise ScenarioError(f"{where}: no broker is {'running' if running else 'stopped'}")
        return rng.choice(candidates)
    if isinstance(value, str) and value.startswith("leader:"):
        topic, _, partition = value[len("leader:"):].rpartition("-")
        state = cluster.admin.get_topic_partition_state(TopicPartition(topic, int(partition or -1)))
        if state is None or state.leader_and_isr.leader < 0:
            raise ScenarioError(f"{where}: {value[len('leader:'):]} has no leader right now")
        return state.leader_and_isr.leader
    raise ScenarioError(f"{where}: broker {value!r} must be an id, \"controller\", \"leader:<topic>-<p>\" "
                        "or \"random\"")


def apply_step(cluster, step: Mapping[str, Any], rng: random.Random, where: str) -> None:
    """Carry out one step on a `ThreadedCluster`."""
    action = step["do"]
    if action == "start":
        brokers = step.get("brokers", list(range(cluster.brokers)))
        for b in brokers:
            cluster.start_broker(_broker(cluster, b, rng, where))
    elif action in ("crash", "restart", "bounce", "expire_session", "controlled_shutdown"):
        _apply_broker_step(cluster, action, _broker(cluster, step["broker"], rng, where, running=action != "restart"),
                           where)
    elif action == "create_topic":
        cluster.create_topic(step["topic"], _assignment(cluster, step, where))
    elif action == "delete_topic":
        _existing_topic(cluster, step["topic"], where)
        cluster.delete_topic(step["topic"])
    elif action == "reassign":
        replicas = tuple(step["replicas"])
        if not replicas or any(not isinstance(r, int) or not 0 <= r < cluster.brokers for r in replicas):
            raise ScenarioError(f"{where}: replicas {list(replicas)} must be broker ids 0..{cluster.brokers - 1}")
        cluster.reassign(_existing_partition(cluster, step, where), replicas)
    elif action == "preferred_election":
        cluster.preferred_election(_existing_partition(cluster, step, where))
    elif action == "move_controller":
        cluster.move_controller()
    elif action == "sleep":
        time.sleep(float(step["seconds"]))


def _apply_broker_step(cluster, action: str, b: int, where: str) -> None:
    """A step on one broker: a restart needs it stopped, the others need it running."""
    running = cluster.is_up(b)
    if action == "restart":
        if running:
            raise ScenarioError(f"{where}: broker {b} is running; crash or shut it down first")
        cluster.start_broker(b)
    elif not running:
        raise ScenarioError(f"{where}: broker {b} is not running")
    elif action == "crash":
        cluster.crash_broker(b)
    elif action == "bounce":
        cluster.bounce_broker(b)
    elif action == "expire_session":
        cluster.expire_session(b)
    else:
        cluster.controlled_shutdown(b)


def _existing_topic(cluster, topic: Any, where: str) -> set[int]:
    """The partitions of `topic`, which must exist: Kafka's admin tools refuse an operation on a
    topic that does not exist (`kafka-topics --delete` "Topic ... does not exist";
    kafka-reassign-partitions "does not exist"), where writing the admin znode would be a
    silent no-op for the controller, and a scenario that did nothing would pass."""
    partitions = {tp.partition for tp in cluster.partition_states() if tp.topic == topic}
    if not partitions:
        raise ScenarioError(f"{where}: topic {topic!r} does not exist")
    return partitions


def _existing_partition(cluster, step: Mapping[str, Any], where: str) -> TopicPartition:
    partitions = _existing_topic(cluster, step["topic"], where)
    partition = step["partition"]
    if isinstance(partition, bool) or not isinstance(partition, int) or partition not in partitions:
        raise ScenarioError(f"{where}: topic {step['topic']!r} has no partition {partition!r} "
                            f"(it has {', '.join(map(str, sorted(partitions)))})")
    return TopicPartition(step["topic"], partition)


def _assignment(cluster, step: Mapping[str, Any], where: str) -> dict[int, tuple[int, ...]]:
    if "assignment" in step:
        assignment = step["assignment"]
        if not isinstance(assignment, list) or not all(isinstance(r, list) and r for r in assignment):
            raise ScenarioError(f"{where}: `assignment` must be a list of replica lists, one per partition")
        return {p: tuple(replicas) for p, replicas in enumerate(assignment)}
    partitions = int(step.get("partitions", 1))
    rf = int(step.get("replication_factor", min(3, cluster.brokers)))
    if not 1 <= rf <= cluster.brokers:
        raise ScenarioError(f"{where}: replication_factor {rf} must be in 1..{cluster.brokers}")
    # Kafka's even spread without racks: partition p on brokers p, p+1, ... (AdminUtils, no offset).
    return {p: tuple((p + i) % cluster.brokers for i in range(rf)) for p in range(partitions)}
