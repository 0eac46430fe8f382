"""DeletionRequestDroppedWithTopic (model/catalogue/deletion.py): fails when a controller drops the
deletion request of a topic it knows and that still exists, holds on the clean model."""

from __future__ import annotations

from pathlib import Path

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model.actions import ControllerProcessEvent
from kcm.model.catalogue.deletion import deletion_request_dropped_with_topic
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.config import ModelConfig
from kcm.model.spec import init_states, settle

from kcm import config

SMALL = ModelConfig.from_mapping({"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1,
                                  "max_session_expiries": 0})
SUITE = Path(__file__).parents[3] / "bench" / "mutation"
A = ControllerProcessEvent(0)


def test_deletion_request_dropped_with_topic() -> None:
    holds = deletion_request_dropped_with_topic(1)
    calm = settle(SMALL, init_states(SMALL)[0])
    assert calm.brokers[0].active and calm.brokers[0].ctx.assignment[0]
    asked = calm._replace(zk=calm.zk._replace(delete_topics=1))
    # controller:551:negate-guard:0: the request of an existing topic is dropped, the topic stays
    assert not holds(asked, A, calm)
    # dropped with the topic (completeDeleteTopic)
    gone = calm._replace(zk=calm.zk._replace(assignment=((),)))
    assert holds(asked, A, gone)
    # dropped for a topic the controller does not know (processTopicDeletion's nonExistentTopics)
    unknown = asked._replace(brokers=(asked.brokers[0]._replace(ctx=asked.brokers[0].ctx._replace(assignment=((),))),)
                             + asked.brokers[1:])
    assert holds(unknown, A, calm)
    # the request kept: nothing to judge
    assert holds(asked, A, asked)


@pytest.mark.parametrize("name", ["m-delete", "m-overlap", "tiny"])
def test_holds_on_the_mutation_suite(name) -> None:
    cfg = config.load_preset("tiny") if name == "tiny" else config.load_config_file(SUITE / f"{name}.toml")
    result = explore(KafkaModel(cfg), properties=["DeletionRequestDroppedWithTopic"], goals_required=False)
    assert result.verdict == "pass" and not result.violations, result.summary_lines()
