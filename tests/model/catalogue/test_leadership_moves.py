"""ControlledShutdownMovesLeadership and AutoRebalanceElectsPreferred (model/catalogue/shutdown.py,
model/catalogue/leadership.py):
each fails on a small hand-made step that leaves a movable leader in place, and holds on the clean
model (the mutation suite's configs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kcm.checker.engine.bfs import explore
from kcm.model.actions import BrokerRequestControlledShutdown, ControllerProcessEvent, ZkSessionExpire
from kcm.model.catalogue.leadership import auto_rebalance_elects_preferred
from kcm.model.catalogue.shutdown import controlled_shutdown_moves_leadership
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.cluster import Event, EventKind, put
from kcm.model.config import ModelConfig
from kcm.model.spec import init_states, settle, step

from kcm import config

SMALL = ModelConfig.from_mapping({"brokers": 2, "replication_factor": 2, "max_broker_crashes": 1,
                                  "max_session_expiries": 0})
SUITE = Path(__file__).parents[3] / "bench" / "mutation"
A = ControllerProcessEvent(0)


@pytest.fixture(scope="module")
def calm():
    """Broker 0 controller and leader of partition 0, ISR (0, 1), assignment (0, 1)."""
    s = settle(SMALL, init_states(SMALL)[0])
    assert s.zk.controller == 0 and s.zk.partitions[0].leader == 0 and s.zk.partitions[0].isr == (0, 1)
    assert s.brokers[0].ctx.assignment[0] == (0, 1)
    return s


def with_broker(s, b, **fields):
    return s._replace(brokers=put(s.brokers, b, s.brokers[b]._replace(**fields)))


def with_ctx(s, b, **fields):
    return with_broker(s, b, ctx=s.brokers[b].ctx._replace(**fields))


def with_leader(s, p, leader, epoch_bump=1):
    z = s.zk.partitions[p]
    isr = tuple(r for r in z.isr if r == leader or leader < 0) or z.isr
    z = z._replace(leader=leader, leader_epoch=z.leader_epoch + epoch_bump, isr=isr)
    return s._replace(zk=s.zk._replace(partitions=put(s.zk.partitions, p, z)))


def test_controlled_shutdown_moves_leadership(calm) -> None:
    holds = controlled_shutdown_moves_leadership(1)
    s = with_broker(calm, 0, queue=(Event(EventKind.ControlledShutdown, 0, calm.brokers[0].epoch),))
    after = with_ctx(with_broker(s, 0, queue=()), 0, shutting_down=1)
    # controller:460:negate-guard:0: the partition broker 0 leads is not re-elected although 1 is in the ISR
    assert not holds(s, A, after)
    assert holds(s, A, with_leader(after, 0, 1))
    # not judged: a refused request (stale broker epoch), or another event
    stale = with_broker(calm, 0, queue=(Event(EventKind.ControlledShutdown, 0, calm.brokers[0].epoch - 1),))
    assert holds(stale, A, with_ctx(with_broker(stale, 0, queue=()), 0, shutting_down=1))
    # the other replica not in the ISR: nothing to move to
    lone = s._replace(zk=s.zk._replace(partitions=(s.zk.partitions[0]._replace(isr=(0,)),)))
    lone = with_ctx(lone, 0, leadership=lone.zk.partitions)
    assert holds(lone, A, with_ctx(with_broker(lone, 0, queue=()), 0, shutting_down=1))


def test_auto_rebalance_elects_preferred(calm) -> None:
    holds = auto_rebalance_elects_preferred(1)
    off = with_leader(calm, 0, 1, epoch_bump=1)
    off = off._replace(zk=off.zk._replace(partitions=(off.zk.partitions[0]._replace(isr=(1, 0)),)))
    off = with_ctx(off, 0, leadership=off.zk.partitions)
    s = with_broker(off, 0, queue=(Event(EventKind.AutoPreferredReplicaLeaderElection),))
    unchanged = with_broker(s, 0, queue=())
    # controller:529:negate-guard:0: the eligible partition is skipped
    assert not holds(s, A, unchanged)
    moved = unchanged._replace(zk=unchanged.zk._replace(partitions=(unchanged.zk.partitions[0]._replace(leader=0),)))
    assert holds(s, A, moved)
    # judged while a reassignment is in progress too (2.6 skips it then: Findings 14)
    assert not holds(with_ctx(s, 0, reassigning=1), A, with_ctx(unchanged, 0, reassigning=1))
    # not judged with the preferred replica out of the ISR
    out = s._replace(zk=s.zk._replace(partitions=(s.zk.partitions[0]._replace(isr=(1,)),)))
    out = with_ctx(out, 0, leadership=out.zk.partitions)
    assert holds(out, A, with_broker(out, 0, queue=()))


@pytest.mark.parametrize("name", ["m-reassign", "m-delete", "m-overlap", "m-move", "m-shutdown", "tiny"])
def test_hold_on_the_mutation_suite(name) -> None:
    cfg = config.load_preset("tiny") if name == "tiny" else config.load_config_file(SUITE / f"{name}.toml")
    result = explore(KafkaModel(cfg), properties=["ControlledShutdownMovesLeadership", "AutoRebalanceElectsPreferred"],
                     goals_required=False)
    assert result.verdict == "pass" and not result.violations, result.summary_lines()


@pytest.mark.parametrize("shutting_down, name", [(0, "ControlledShutdownMovesLeadership"),
                                                 (2, "ControlledShutdownLeavesBrokerClean")])
def test_a_controller_whose_session_expired_is_not_held_to_a_shutdown_it_could_not_write(shutting_down, name):
    """Found by `deep` (bench/reach.py, 6 steps): controller 0's session expires with a
    ControlledShutdown queued; it handles the event before it notices the expiry, every ZooKeeper
    write fails, the state machines log the failed partitions, and the broker is answered as 2.6
    answers it, leadership and ISR unchanged. Not a controller mistake: both properties excuse a
    controller with an expired session, and judge the same walk with a live one."""
    cfg = config.load_preset("deep")
    model = KafkaModel(cfg)
    prop = next(p for p in model.properties() if p.name == name)
    start = next(s for s in init_states(cfg) if s.zk.assignment == ((0, 1), (1, 2)) and s.scenario == 0)
    s = start
    for action in (A, A, A, BrokerRequestControlledShutdown(shutting_down)):
        s = step(cfg, s, action)
    assert s.zk.controller == 0 and s.brokers[0].queue[0].kind is EventKind.ControlledShutdown
    expired = step(cfg, s, ZkSessionExpire(0))
    t = step(cfg, expired, A)
    assert t.zk.partitions == s.zk.partitions                 # nothing written: the session is gone
    assert t.brokers[0].ctx.shutting_down >> shutting_down & 1  # the handler ran
    assert prop.holds(expired, A, t)
    # The same handling with the session alive moves leadership off / shrinks the ISR, and is judged.
    live = step(cfg, s, A)
    assert live.zk.partitions != s.zk.partitions and prop.holds(s, A, live)
    unwritten = live._replace(zk=live.zk._replace(partitions=s.zk.partitions))
    assert not prop.holds(s, A, unwritten)                     # a controller that wrote nothing fails
