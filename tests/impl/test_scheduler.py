"""The stepped cluster driven by its `Scheduler`: choices listed in a fixed order, reproducible seeded
runs, the lost-acknowledgement fault, and watch notifications as choices of their own."""

from __future__ import annotations

import random

from kcm.impl.abstraction import abstract
from kcm.impl.scheduler import Deliver, DeliverWatch, FaultBudget, LoseAck, RunEvent, StartBroker
from kcm.impl.step_cluster import StepCluster
from kcm.impl.zk.memory import Delivery
from kcm.impl.zk_data import TopicPartition
from kcm.model.config import ModelConfig

from kcm.config import load_preset

THREE = ModelConfig.from_mapping(dict(brokers=3, topics=1, partitions=2, replication_factor=2))


def test_the_choices_come_in_a_fixed_order_and_a_choice_runs_one_step():
    cluster = StepCluster.initial(load_preset("tiny"))
    assert cluster.scheduler.choices() == [RunEvent(0), RunEvent(1)]
    cluster.scheduler.run(RunEvent(1))   # broker 1's Startup first: it wins /controller
    assert cluster.server(1).controller.is_active and cluster.server(1).controller.epoch == 1
    assert Deliver(1, 1) in cluster.scheduler.choices()


def test_a_seeded_random_run_is_reproducible():
    def run(seed: int):
        cluster = StepCluster.initial(THREE)
        budget = FaultBudget(crashes=1, session_expiries=1, isr_shrinks=1, controlled_shutdowns=1)
        taken = cluster.scheduler.run_random(random.Random(seed), 150, budget)
        return taken, abstract(cluster)

    first, second = run(7), run(7)
    assert first == second
    assert any(not isinstance(c, (RunEvent, Deliver)) for c in first[0])   # some faults were chosen


def test_run_until_quiet_leaves_one_controller_and_every_partition_led():
    cluster = StepCluster.initial(THREE)
    assert cluster.scheduler.run_until_quiet(random.Random(3)) > 0
    active = [b for b in range(3) if cluster.server(b).controller.is_active]
    assert len(active) == 1
    for p in range(2):
        state = cluster.admin.get_topic_partition_state(TopicPartition("t00", p))
        assert state is not None and state.leader_and_isr.leader >= 0


def test_a_lost_acknowledgement_during_the_election_is_recognised_as_the_brokers_own_win():
    cluster = StepCluster.initial(THREE)
    # The next two writes of broker 0 (creating /controller_epoch, then the election multi) are
    # applied but answered CONNECTIONLOSS: the client retries, hits NODEEXISTS, and
    # checkControllerAndEpoch finds that the write was its own.
    cluster.scheduler.run(LoseAck(0))
    cluster.zookeeper.lose_next_ack(cluster.server(0).session_id)
    cluster.scheduler.run(RunEvent(0))
    assert cluster.server(0).controller.is_active and cluster.server(0).controller.epoch == 1
    assert cluster.admin.get_controller_id() == 0 and cluster.admin.get_controller_epoch() == (1, 1)


def test_with_queued_delivery_watch_notifications_are_choices():
    cluster = StepCluster.initial(THREE, delivery=Delivery.QUEUED)
    cluster.scheduler.run(RunEvent(0))   # elected: creating /controller fires broker 0's own watch
    pending = [c for c in cluster.scheduler.choices() if isinstance(c, DeliverWatch)]
    controller_change = [c for c in pending if c.pending.session_id == cluster.server(0).session_id]
    assert controller_change, "the creation of /controller waits to be delivered to broker 0"
    events = cluster.server(0).controller.event_manager
    before = [e.name for e in events.queued_events()]
    cluster.scheduler.run(controller_change[0])
    assert [e.name for e in events.queued_events()] == before + ["ControllerChange"]


def test_a_dead_brokers_session_expires_before_it_can_start_again():
    cluster = StepCluster.initial(THREE)
    cluster.scheduler.run_until_quiet()
    cluster.crash_broker(2)
    choices = cluster.scheduler.choices()
    assert StartBroker(2) not in choices
    cluster.expire_session(2)
    assert StartBroker(2) in cluster.scheduler.choices()
