"""AdminRequestCarriedOutOrRefused (model/catalogue/admin.py): a request a controller event
deletes from `/admin` was carried out, or refused for a reason ZooKeeper shows. Hand-made steps
from the settled cluster: each kind of request deleted unanswered fails it, and each refusal
Kafka 2.6 makes (with its reason in ZooKeeper) and each request carried out holds."""

from __future__ import annotations

import pytest
from kcm.model.actions import ControllerProcessEvent
from kcm.model.catalogue.admin import admin_request_carried_out_or_refused, admin_requests, unanswered_requests
from kcm.model.config import ModelConfig
from kcm.model.spec import init_states, settle

from kcm import config
from tests.model.catalogue.test_leadership_moves import with_ctx, with_leader

CFG = ModelConfig.from_mapping({"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1,
                                "max_session_expiries": 0})
A = ControllerProcessEvent(0)
holds = admin_request_carried_out_or_refused(1)


@pytest.fixture(scope="module")
def calm():
    """Broker 0 controller and leader of partition 0, ISR (0, 1), assignment (0, 1)."""
    s = settle(CFG, init_states(CFG)[0])
    assert s.zk.controller == 0 and s.zk.partitions[0].leader == 0 and s.zk.assignment == ((0, 1),)
    return s


def zk(s, **fields):
    return s._replace(zk=s.zk._replace(**fields))


def test_a_preferred_election_is_carried_out_or_refused_for_a_reason(calm) -> None:
    off = with_leader(calm, 0, 1)                         # broker 1 leads; the preferred replica 0 is in the ISR
    off = zk(off, partitions=(off.zk.partitions[0]._replace(isr=(1, 0)),))
    off = with_ctx(off, 0, leadership=off.zk.partitions)
    asked = zk(off, preferred=0b1)
    dropped = zk(off, preferred=0)
    assert unanswered_requests(asked, A, dropped, 1) == [("preferred", 0)]
    assert not holds(asked, A, dropped)
    elected = zk(dropped, partitions=(dropped.zk.partitions[0]._replace(leader=0),))
    assert holds(asked, A, elected)
    # refused: the preferred replica out of the ISR, dead to the controller, or shutting down
    out = zk(asked, partitions=(asked.zk.partitions[0]._replace(isr=(1,)),))
    assert holds(out, A, dropped)
    assert holds(with_ctx(asked, 0, live=0b10), A, dropped)
    assert holds(with_ctx(asked, 0, shutting_down=0b1), A, dropped)
    # refused: the topic queued for deletion
    assert holds(zk(asked, delete_topics=0b1), A, zk(dropped, delete_topics=0b1))
    # another action does not delete requests
    assert holds(asked, object(), dropped)


def test_a_reassignment_is_carried_out_or_refused_for_a_reason(calm) -> None:
    asked = zk(calm, reassign=((1, 0),))
    dropped = zk(calm, reassign=((),))
    assert unanswered_requests(asked, A, dropped, 1) == [("reassignment", 0)]
    assert holds(asked, A, zk(dropped, assignment=((1, 0),)))          # carried out
    assert not holds(asked, A, zk(dropped, assignment=((1, 0),), adding=((1,),)))   # not yet
    assert holds(zk(asked, delete_topics=0b1), A, zk(dropped, delete_topics=0b1))   # refused: topic being deleted
    gone = zk(asked, assignment=((),))
    assert holds(with_ctx(gone, 0, assignment=((),)), A, zk(dropped, assignment=((),)))  # refused: unknown


def test_a_topic_deletion_is_carried_out_or_refused_for_a_reason(calm) -> None:
    asked = zk(calm, delete_topics=0b1)
    dropped = zk(calm, delete_topics=0)
    assert unanswered_requests(asked, A, dropped, 1) == [("deletion", 0)]
    assert holds(asked, A, zk(dropped, assignment=((),)))              # the topic is gone
    assert holds(zk(asked, assignment=((),)), A, zk(dropped, assignment=((),)))   # it never existed


def test_it_is_listed_only_where_an_operator_writes_requests() -> None:
    assert not admin_requests(config.load_preset("tiny"))
    assert admin_requests(config.load_preset("default")) and admin_requests(config.load_preset("v3"))
    import dataclasses
    tiny = config.load_preset("tiny")
    assert admin_requests(dataclasses.replace(tiny, overlapping=(("broker_crash", "topic_deletion"),)))
    assert not admin_requests(dataclasses.replace(tiny, overlapping=(("broker_crash", "topic_creation"),)))
