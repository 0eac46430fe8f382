"""NoElectionForDeletingTopic (model/catalogue/deletion.py): fails on a hand-made violation, holds
on the clean model of the mutation suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model.catalogue.deletion import no_election_for_deleting_topic
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.cluster import Election
from kcm.model.state_machines import Strategy

from kcm import config

SUITE = Path(__file__).parents[3] / "bench" / "mutation"


def election(p: int, strategy) -> Election:
    return Election(p, strategy, 1, 1, -1, (0, 1), 0b11, 0b11, (0, 1), False)


def test_no_election_for_deleting_topic() -> None:
    # two topics of two partitions each; topic 1 (partitions 2, 3) is queued for deletion
    assert no_election_for_deleting_topic([election(0, Strategy.OFFLINE), election(1, Strategy.PREFERRED)], 0b10, 2)
    # triggerOnlinePartitionStateChange without its deletion filter elects partition 2
    assert not no_election_for_deleting_topic([election(2, Strategy.OFFLINE)], 0b10, 2)
    assert not no_election_for_deleting_topic([election(0, Strategy.OFFLINE),
                                               election(3, Strategy.CONTROLLED_SHUTDOWN)], 0b10, 2)
    # a reassignment under way when the deletion was asked for still moves its leader (B3)
    assert no_election_for_deleting_topic([election(2, Strategy.REASSIGN)], 0b10, 2)
    assert no_election_for_deleting_topic([], 0b11, 2)


@pytest.mark.parametrize("name", ["m-reassign", "m-delete", "m-overlap", "m-move", "m-shutdown", "tiny"])
def test_holds_on_the_mutation_suite(name) -> None:
    cfg = config.load_preset("tiny") if name == "tiny" else config.load_config_file(SUITE / f"{name}.toml")
    result = explore(KafkaModel(cfg), properties=["NoElectionForDeletingTopic"], goals_required=False)
    assert result.verdict == "pass" and not result.violations, result.summary_lines()
