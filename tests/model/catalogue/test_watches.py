"""ControllerWatchesArmed (model/catalogue/watches.py): fails on a settled cluster whose controller
lost one watch, holds on the clean model's settled states (the mutation suite's configs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model.catalogue.watches import ACTIVE_CONTROLLER_WATCHES, controller_watches_armed
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.cluster import Event, EventKind, Watch, put
from kcm.model.config import ModelConfig
from kcm.model.spec import init_states, settle

from kcm import config

SMALL = ModelConfig.from_mapping({"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1,
                                  "max_session_expiries": 0})
SUITE = Path(__file__).parents[3] / "bench" / "mutation"


@pytest.fixture(scope="module")
def calm():
    s = settle(SMALL, init_states(SMALL)[0])
    assert s.zk.controller == 0 and s.brokers[0].active
    return s


def without_watch(s, b: int, bit: int):
    return s._replace(zk=s.zk._replace(watches=put(s.zk.watches, b, s.zk.watches[b] & ~bit)))


def test_settled_controller_holds_every_watch(calm) -> None:
    assert calm.zk.watches[0] & ACTIVE_CONTROLLER_WATCHES == ACTIVE_CONTROLLER_WATCHES
    assert controller_watches_armed(calm)


@pytest.mark.parametrize("bit", list(Watch))
def test_a_lost_controller_watch_fails(calm, bit) -> None:
    # e.g. controller:485 (ReplicaLeaderElection does not re-read the znode: PREFERRED lost after
    # the first election), controller:217 (failover registers no PREFERRED / REASSIGN handler)
    assert not controller_watches_armed(without_watch(calm, 0, bit))


def test_a_follower_without_the_controller_watch_fails(calm) -> None:
    assert not controller_watches_armed(without_watch(calm, 1, Watch.CONTROLLER))
    # the follower's other watches are none of its business
    assert controller_watches_armed(without_watch(calm, 1, Watch.TOPICS))


def test_not_judged_before_settling(calm) -> None:
    # an active controller that lost a watch, with an event still queued: the handler will re-read
    lost = without_watch(calm, 0, Watch.TOPICS)
    busy = lost._replace(brokers=put(lost.brokers, 0, lost.brokers[0]._replace(queue=(Event(EventKind.TopicChange),))))
    assert not controller_watches_armed(lost) and controller_watches_armed(busy)


@pytest.mark.parametrize("name", ["m-reassign", "m-delete", "m-overlap", "m-move", "m-shutdown", "tiny"])
def test_holds_on_the_mutation_suite(name) -> None:
    cfg = config.load_preset("tiny") if name == "tiny" else config.load_config_file(SUITE / f"{name}.toml")
    result = explore(KafkaModel(cfg), properties=["ControllerWatchesArmed"], goals_required=False)
    assert result.verdict == "pass" and not result.violations, result.summary_lines()
