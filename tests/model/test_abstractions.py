"""An abstraction the model makes where no test exercises it must at least be shown unreached.

The model's broker answers every deletion of a StopReplica(delete=true) as done (model/broker.py
`deliver`). Kafka 2.6 answers a partition whose request leader epoch is neither -2 nor -1 and not
above the replica's with FENCED_LEADER_EPOCH (kafka@2.6.x:core/src/main/scala/kafka/server/
ReplicaManager.scala `stopReplicas`, KIP-570), and the controller then fails that replica's
deletion (docs/model.md, "Abstractions and omissions"). The probe below finds every delivery of a
StopReplica that the broker's epochs let through but that fences a partition; on the configs that
reach deletions and reassignments it finds fenced delete=false requests (which change nothing, as in
Kafka) and never a fenced delete=true, so the abstraction changes no explored state there.
"""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path

import pytest
from kcm.checker.engine.bfs import CheckOptions, explore
from kcm.model.actions import NetworkDeliver
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.cluster import NO_REPLICA, RequestKind, put
from kcm.model.election import EPOCH_DURING_DELETE, NO_EPOCH

from kcm import config

MUTATION_CONFIGS = Path(__file__).resolve().parents[2] / "bench" / "mutation"


def fenced_stop_replicas(state, action, brokers: int) -> list[bool]:
    """For a delivery of a StopReplica that passes the broker and controller epoch checks, the
    delete flag of each partition its leader epoch fences (KIP-570); [] for any other step."""
    if type(action) is not NetworkDeliver:
        return []
    request = state.net[action.src * brokers + action.dst][0]
    broker = state.brokers[action.dst]
    if (request.kind is not RequestKind.StopReplica or request.broker_epoch < broker.epoch
            or request.controller_epoch < broker.controller_epoch):
        return []
    out = []
    for part in request.partitions:
        current = broker.replicas[part.partition]
        passes = (part.leader_epoch in (EPOCH_DURING_DELETE, NO_EPOCH) or part.leader_epoch > current.leader_epoch
                  or current == NO_REPLICA)
        if not passes:
            out.append(part.delete)
    return out


class Probe(KafkaModel):
    """The model, counting the fenced StopReplica partitions of every edge it generates and keeping
    the first state that delivers one."""

    def __init__(self, cfg) -> None:
        super().__init__(cfg)
        self.fenced: Counter = Counter()
        self.example = None

    def successors(self, state):
        out = super().successors(state)
        for action, _ in out:
            for delete in fenced_stop_replicas(state, action, self.cfg.brokers):
                self.fenced[delete] += 1
                if self.example is None:
                    self.example = (state, action)
        return out


@functools.cache
def probe(source: str) -> Probe:
    """The probe after exploring a preset or a mutation config (`m-*`) whole; once per session."""
    cfg = (config.load_preset(source) if not source.startswith("m-")
           else config.load_config_file(MUTATION_CONFIGS / f"{source}.toml"))
    model = Probe(cfg)
    result = explore(model, CheckOptions(stop_on_violation=False))
    assert result.verdict != "incomplete"
    return model


@pytest.mark.parametrize("source", ["zkfaults", "tiny", "m-delete", "m-delete-crash", "m-delete-reassign",
                                    "m-recreate", "m-reassign", "m-reassign2", "m-shutdown"])
def test_no_config_delivers_a_fenced_stop_replica_with_delete(source):
    model = probe(source)
    assert model.fenced[True] == 0
    if source in ("zkfaults", "m-shutdown"):  # the probe sees fenced partitions where there are some
        assert model.fenced[False] > 0


def test_the_probe_sees_a_fenced_deletion():
    """The same delivery as the first fenced delete=false of `zkfaults`, its request turned into a
    delete=true: the probe reports it (so the configs above would show one if they reached it)."""
    model = probe("zkfaults")
    state, action = model.example
    i = action.src * model.cfg.brokers + action.dst
    request = state.net[i][0]
    deleting = request._replace(partitions=tuple(p._replace(delete=True) for p in request.partitions))
    forged = state._replace(net=put(state.net, i, (deleting,) + state.net[i][1:]))
    assert fenced_stop_replicas(state, action, model.cfg.brokers) == [False] * len(request.partitions)
    assert True in fenced_stop_replicas(forged, action, model.cfg.brokers)
