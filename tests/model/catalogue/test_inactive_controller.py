"""NoControllerWatchesWhenInactive (model/catalogue/watches.py) and NoQueuedRequestsWhenInactive
(model/catalogue/controller.py): what a controller module that is not active may still hold. Each
fails on a hand-made state that keeps one thing a resignation gives up, holds on the active
controller's own, holds on the clean model of the mutation suite's configs, and V4 breaks both."""

from __future__ import annotations

from pathlib import Path

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model.catalogue import READS_WATCHES
from kcm.model.catalogue.controller import no_queued_requests_when_inactive
from kcm.model.catalogue.watches import no_controller_watches_when_inactive
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.cluster import Request, RequestKind, Watch, partition_watch, put
from kcm.model.config import ModelConfig
from kcm.model.spec import init_states, settle

from kcm import config

SMALL = ModelConfig.from_mapping({"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1,
                                  "max_session_expiries": 0})
SUITE = Path(__file__).parents[3] / "bench" / "mutation"
NEW = ["NoControllerWatchesWhenInactive", "NoQueuedRequestsWhenInactive"]


@pytest.fixture(scope="module")
def calm():
    s = settle(SMALL, init_states(SMALL)[0])
    assert s.zk.controller == 0 and s.brokers[0].active and not s.brokers[1].active
    return s


def with_watches(s, b: int, bits: int):
    return s._replace(zk=s.zk._replace(watches=put(s.zk.watches, b, bits)))


def with_request(s, c: int, d: int):
    request = Request(RequestKind.UpdateMetadata, c, s.zk.controller_epoch, s.zk.broker_epochs[d])
    i = c * len(s.brokers) + d
    return s._replace(net=put(s.net, i, s.net[i] + (request,)))


def resigned(s, b: int):
    """`s` with broker `b`'s controller module made inactive, nothing else given up."""
    return s._replace(brokers=put(s.brokers, b, s.brokers[b]._replace(active=False)))


def test_the_settled_cluster_holds_both(calm) -> None:
    assert calm.zk.watches[1] == Watch.CONTROLLER
    assert no_controller_watches_when_inactive(calm) and no_queued_requests_when_inactive(calm)


@pytest.mark.parametrize("bit", [int(w) for w in Watch if w is not Watch.CONTROLLER] + [partition_watch(0)])
def test_an_inactive_module_with_a_controller_watch_fails(calm, bit: int) -> None:
    assert not no_controller_watches_when_inactive(with_watches(calm, 1, Watch.CONTROLLER | bit))
    # the active controller holds them all
    assert no_controller_watches_when_inactive(with_watches(calm, 0, calm.zk.watches[0] | bit))


def test_a_resignation_that_keeps_the_watches_fails(calm) -> None:
    assert calm.zk.watches[0] & ~Watch.CONTROLLER
    assert not no_controller_watches_when_inactive(resigned(calm, 0))
    assert no_controller_watches_when_inactive(resigned(with_watches(calm, 0, Watch.CONTROLLER), 0))


@pytest.mark.parametrize("dst", [0, 1])
def test_an_inactive_module_with_a_queued_request_fails(calm, dst: int) -> None:
    assert not no_queued_requests_when_inactive(with_request(calm, 1, dst))
    assert not no_queued_requests_when_inactive(resigned(with_request(calm, 0, dst), 0))
    # the active controller's requests are its own business
    assert no_queued_requests_when_inactive(with_request(calm, 0, dst))


def test_only_the_watch_property_reads_the_watches() -> None:
    # a client of a real ZooKeeper cannot list watches: `kcm simulate --zk` leaves it unjudged
    assert "NoControllerWatchesWhenInactive" in READS_WATCHES
    assert "NoQueuedRequestsWhenInactive" not in READS_WATCHES


@pytest.mark.parametrize("name", ["m-move", "m-reassign", "m-delete", "m-overlap", "m-shutdown", "tiny", "zkfaults"])
def test_hold_on_the_clean_model(name: str) -> None:
    cfg = config.load_preset(name) if not name.startswith("m-") else config.load_config_file(SUITE / f"{name}.toml")
    result = explore(KafkaModel(cfg), properties=NEW, goals_required=False)
    assert result.verdict == "pass" and not result.violations and not result.known_violations, \
        result.summary_lines()


@pytest.mark.parametrize("name", NEW)
def test_v4_breaks_both(name: str) -> None:
    # KAFKA-4447 put back: a BrokerChange queued behind a Reelect is handled after resignation, so
    # the resigned module re-reads /brokers/ids (arming its watch) and sends requests
    result = explore(KafkaModel(config.load_preset("v4")), properties=[name], goals_required=False)
    assert [(v.name, v.trace_length) for v in result.violations] == [(name, 7)], result.summary_lines()
