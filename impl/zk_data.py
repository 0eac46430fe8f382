"""Kafka's ZooKeeper layout: the znode paths the controller uses and their JSON formats.

One class per znode family, named after its object in kafka@2.6.x:core/src/main/scala/kafka/zk/ZkData.scala,
each with `path` and `encode`/`decode`. The formats are Kafka 2.6's:

    /controller
        {"version":1,"brokerid":1,"timestamp":"1600000000000"}
    /controller_epoch
        5   (a plain integer, not JSON)
    /brokers/ids/<id>
        broker registration, version 4; czxid = broker epoch
    /brokers/topics/<t>
        {"version":2,"partitions":{"0":[1,2]},"adding_replicas":{},"removing_replicas":{}}
    /brokers/topics/<t>/partitions/<p>/state
        {"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}
    /admin/reassign_partitions
        {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}
    /admin/preferred_replica_election
        {"version":1,"partitions":[{"topic":"t","partition":0}]}
    /admin/delete_topics/<t>
        (no data)
    /isr_change_notification/isr_change_<seq>
        {"version":1,"partitions":[{"topic":"t","partition":0}]}

Kafka writes JSON with Jackson from Scala maps, so the key order of the larger objects is a hash
order; the orders above are the ones seen on real clusters, and readers must not depend on them.
Output is compact (no spaces), as Jackson's. Partition-level keys are written in partition order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from kcm.model.election import LeaderAndIsr


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _loads(data: bytes) -> Any:
    return json.loads(data.decode()) if data else None


# --------------------------------------------------------------------------------------------------
# Values stored in znodes


@dataclass(frozen=True, slots=True, order=True)
class TopicPartition:
    """Kafka's `TopicPartition`."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True, slots=True)
class LeaderIsrAndControllerEpoch:
    """A partition state znode: the leadership plus the epoch of the controller that decided it
    (kafka@2.6.x:core/src/main/scala/kafka/controller/LeaderIsrAndControllerEpoch.scala)."""

    leader_and_isr: LeaderAndIsr
    controller_epoch: int


@dataclass(frozen=True, slots=True)
class ReplicaAssignment:
    """Kafka's `ReplicaAssignment` (2.4+, KIP-455): the replicas and those being added or removed."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Broker:
    """A registered broker: id and its single PLAINTEXT endpoint (the controller needs no more)."""

    id: int
    host: str = "localhost"
    port: int = 9092
    rack: str | None = None


def _partitions_json(partitions: Iterable[TopicPartition]) -> list[dict[str, Any]]:
    return [{"topic": tp.topic, "partition": tp.partition} for tp in sorted(partitions)]


def _partitions_from(js: Any) -> list[TopicPartition]:
    return [TopicPartition(p["topic"], int(p["partition"])) for p in (js or {}).get("partitions", [])]


# --------------------------------------------------------------------------------------------------
# Znodes


class ControllerZNode:
    """/controller: ephemeral, names the active controller."""

    path = "/controller"

    @staticmethod
    def encode(broker_id: int, timestamp_ms: int) -> bytes:
        return _dumps({"version": 1, "brokerid": broker_id, "timestamp": str(timestamp_ms)})

    @staticmethod
    def decode(data: bytes) -> int | None:
        js = _loads(data)
        return None if js is None else int(js["brokerid"])


class ControllerEpochZNode:
    """/controller_epoch: the epoch as a plain integer; its zkVersion fences every controller write."""

    path = "/controller_epoch"

    @staticmethod
    def encode(epoch: int) -> bytes:
        return str(epoch).encode()

    @staticmethod
    def decode(data: bytes) -> int:
        return int(data.decode())


class BrokerIdsZNode:
    path = "/brokers/ids"


class BrokerIdZNode:
    """/brokers/ids/<id>: ephemeral broker registration (version 4 in 2.6; `features` came in 2.7)."""

    version = 4

    @staticmethod
    def path(broker_id: int) -> str:
        return f"{BrokerIdsZNode.path}/{broker_id}"

    @staticmethod
    def encode(broker: Broker, timestamp_ms: int, jmx_port: int = -1) -> bytes:
        js: dict[str, Any] = {
            "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
            "endpoints": [f"PLAINTEXT://{broker.host}:{broker.port}"],
        }
        if broker.rack is not None:
            js["rack"] = broker.rack
        js |= {"jmx_port": jmx_port, "host": broker.host, "timestamp": str(timestamp_ms),
               "port": broker.port, "version": BrokerIdZNode.version}
        return _dumps(js)

    @staticmethod
    def decode(broker_id: int, data: bytes) -> Broker:
        js = _loads(data)
        return Broker(broker_id, js.get("host", "localhost"), int(js.get("port", -1)), js.get("rack"))


class TopicsZNode:
    path = "/brokers/topics"


class TopicZNode:
    """/brokers/topics/<t>: the replica assignment (version 2, with the KIP-455 reassignment fields)."""

    @staticmethod
    def path(topic: str) -> str:
        return f"{TopicsZNode.path}/{topic}"

    @staticmethod
    def encode(assignment: Mapping[TopicPartition, ReplicaAssignment]) -> bytes:
        ordered = sorted(assignment.items())
        return _dumps({
            "version": 2,
            "partitions": {str(tp.partition): list(ra.replicas) for tp, ra in ordered},
            "adding_replicas": {str(tp.partition): list(ra.adding_replicas) for tp, ra in ordered
                                if ra.adding_replicas},
            "removing_replicas": {str(tp.partition): list(ra.removing_replicas) for tp, ra in ordered
                                  if ra.removing_replicas},
        })

    @staticmethod
    def decode(topic: str, data: bytes) -> dict[TopicPartition, ReplicaAssignment]:
        js = _loads(data) or {}
        adding, removing = js.get("adding_replicas") or {}, js.get("removing_replicas") or {}
        return {TopicPartition(topic, int(p)): ReplicaAssignment(
                    tuple(replicas), tuple(adding.get(p, ())), tuple(removing.get(p, ())))
                for p, replicas in (js.get("partitions") or {}).items()}


class TopicPartitionsZNode:
    @staticmethod
    def path(topic: str) -> str:
        return f"{TopicZNode.path(topic)}/partitions"


class TopicPartitionZNode:
    @staticmethod
    def path(tp: TopicPartition) -> str:
        return f"{TopicPartitionsZNode.path(tp.topic)}/{tp.partition}"


class TopicPartitionStateZNode:
    """/brokers/topics/<t>/partitions/<p>/state: leader, leader epoch, ISR, deciding controller's epoch.
    Its zkVersion is the partition's `zk_version` in `LeaderAndIsr`."""

    @staticmethod
    def path(tp: TopicPartition) -> str:
        return f"{TopicPartitionZNode.path(tp)}/state"

    @staticmethod
    def encode(state: LeaderIsrAndControllerEpoch) -> bytes:
        lai = state.leader_and_isr
        return _dumps({"controller_epoch": state.controller_epoch, "leader": lai.leader, "version": 1,
                       "leader_epoch": lai.leader_epoch, "isr": list(lai.isr)})

    @staticmethod
    def decode(data: bytes, zk_version: int) -> LeaderIsrAndControllerEpoch | None:
        js = _loads(data)
        if js is None:
            return None
        return LeaderIsrAndControllerEpoch(
            LeaderAndIsr(int(js["leader"]), int(js["leader_epoch"]), tuple(js["isr"]), zk_version),
            int(js["controller_epoch"]))


class AdminZNode:
    path = "/admin"


class DeleteTopicsZNode:
    path = f"{AdminZNode.path}/delete_topics"


class DeleteTopicsTopicZNode:
    """/admin/delete_topics/<t>: a topic queued for deletion (no data)."""

    @staticmethod
    def path(topic: str) -> str:
        return f"{DeleteTopicsZNode.path}/{topic}"


class ReassignPartitionsZNode:
    """/admin/reassign_partitions: the legacy (pre-KIP-455 API) reassignment request."""

    path = f"{AdminZNode.path}/reassign_partitions"

    @staticmethod
    def encode(reassignment: Mapping[TopicPartition, Sequence[int]]) -> bytes:
        return _dumps({"version": 1, "partitions": [
            {"topic": tp.topic, "partition": tp.partition, "replicas": list(replicas)}
            for tp, replicas in sorted(reassignment.items())]})

    @staticmethod
    def decode(data: bytes) -> dict[TopicPartition, list[int]]:
        js = _loads(data) or {}
        return {TopicPartition(p["topic"], int(p["partition"])): list(p["replicas"])
                for p in js.get("partitions", [])}


class PreferredReplicaElectionZNode:
    """/admin/preferred_replica_election: partitions an admin asked to move back to their preferred leader."""

    path = f"{AdminZNode.path}/preferred_replica_election"

    @staticmethod
    def encode(partitions: Iterable[TopicPartition]) -> bytes:
        return _dumps({"version": 1, "partitions": _partitions_json(partitions)})

    @staticmethod
    def decode(data: bytes) -> set[TopicPartition]:
        return set(_partitions_from(_loads(data)))


class IsrChangeNotificationZNode:
    path = "/isr_change_notification"


class LogDirEventNotificationZNode:
    path = "/log_dir_event_notification"


class SequenceZNode:
    """A persistent sequential znode: a child of `parent` named `prefix` and the sequence number
    ZooKeeper appends (the notifications of kafka@2.6.x:core/src/main/scala/kafka/zk/ZkData.scala)."""

    parent: ClassVar[str]
    prefix: ClassVar[str]

    @classmethod
    def path(cls, sequence_number: str = "") -> str:
        return f"{cls.parent}/{cls.prefix}{sequence_number}"

    @classmethod
    def sequence_number(cls, path: str) -> str:
        return path[path.rindex(cls.prefix) + len(cls.prefix):]


class LogDirEventNotificationSequenceZNode(SequenceZNode):
    """/log_dir_event_notification/log_dir_event_<seq>: persistent sequential, written by a broker
    that lost a log directory (kafka@2.6.x:core/src/main/scala/kafka/zk/ZkData.scala
    `LogDirEventNotificationSequenceZNode`: `{"version":1,"broker":id,"event":1}`)."""

    parent = LogDirEventNotificationZNode.path
    prefix = "log_dir_event_"
    LOG_DIR_FAILURE = 1

    @staticmethod
    def encode(broker_id: int) -> bytes:
        event = LogDirEventNotificationSequenceZNode.LOG_DIR_FAILURE
        return _dumps({"version": 1, "broker": broker_id, "event": event})

    @staticmethod
    def decode(data: bytes) -> int:
        return int(_loads(data)["broker"])


class IsrChangeNotificationSequenceZNode(SequenceZNode):
    """/isr_change_notification/isr_change_<seq>: persistent sequential, written by partition leaders."""

    parent = IsrChangeNotificationZNode.path
    prefix = "isr_change_"

    @staticmethod
    def encode(partitions: Iterable[TopicPartition]) -> bytes:
        return _dumps({"version": 1, "partitions": _partitions_json(partitions)})

    @staticmethod
    def decode(data: bytes) -> list[TopicPartition]:
        return _partitions_from(_loads(data))


class ConfigZNode:
    path = "/config"


class ConfigEntityZNode:
    """/config/<entity type>/<entity>: an entity's dynamic config overrides, written by the admin
    (`AdminZkClient.changeTopicConfig`: `{"version":1,"config":{...}}`;
    kafka@2.6.x:core/src/main/scala/kafka/zk/ZkData.scala `ConfigEntityZNode`)."""

    @staticmethod
    def path(entity_type: str, entity: str) -> str:
        return f"{ConfigZNode.path}/{entity_type}/{entity}"

    @staticmethod
    def encode(config: Mapping[str, str]) -> bytes:
        return _dumps({"version": 1, "config": dict(config)})

    @staticmethod
    def decode(data: bytes) -> dict[str, str]:
        return dict(_loads(data).get("config", {})) if data else {}


class ConfigEntityChangeNotificationZNode:
    path = f"{ConfigZNode.path}/changes"


class ConfigEntityChangeNotificationSequenceZNode(SequenceZNode):
    """/config/changes/config_change_<seq>: one per config change, naming the entity
    (`{"version":2,"entity_path":"topics/<t>"}`), which every broker's config-change listener
    processes (kafka@2.6.x:core/src/main/scala/kafka/zk/ZkData.scala)."""

    parent = ConfigEntityChangeNotificationZNode.path
    prefix = "config_change_"

    @staticmethod
    def encode(entity_path: str) -> bytes:
        return _dumps({"version": 2, "entity_path": entity_path})

    @staticmethod
    def decode(data: bytes) -> str:
        return str(_loads(data)["entity_path"])


#: The topic config that switches unclean leader election on (`KafkaConfig.UncleanLeaderElectionEnableProp`).
UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"


PERSISTENT_ZK_PATHS = (
    BrokerIdsZNode.path,
    TopicsZNode.path,
    DeleteTopicsZNode.path,
    IsrChangeNotificationZNode.path,
    LogDirEventNotificationZNode.path,
)
"""The top-level paths the controller needs, created at startup (a subset of `ZkData.PersistentZkPaths`:
consumer, config, sequence-id and producer-id paths are outside the model)."""
