"""Leader election: Kafka's PartitionLeaderElectionAlgorithmsTest scenarios, the wrappers, the
controller's ISR shrink, and Hypothesis properties over random assignments, ISRs and live sets."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from kcm.model.election import (
    NO_LEADER,
    LeaderAndIsr,
    controlled_shutdown_partition_leader_election,
    leader_for_controlled_shutdown,
    leader_for_offline,
    leader_for_preferred_replica,
    leader_for_reassign,
    offline_partition_leader_election,
    preferred_replica_partition_leader_election,
    reassign_partition_leader_election,
    remove_replica_from_isr,
)

# ---- kafka@2.6.x:core/src/test/scala/unit/kafka/controller/PartitionLeaderElectionAlgorithmsTest.scala


def test_offline_partition_leader_election() -> None:
    assert offline_partition_leader_election((2, 4), (2, 4), {4}, False) == 4


def test_offline_partition_leader_election_last_isr_offline_unclean_leader_election_disabled() -> None:
    assert offline_partition_leader_election((2, 4), (2,), {4}, False) is None


def test_offline_partition_leader_election_last_isr_offline_unclean_leader_election_enabled() -> None:
    assert offline_partition_leader_election((2, 4), (2,), {4}, True) == 4
    # Kafka counts the unclean election in a metric; the wrapper reports it instead.
    assert leader_for_offline((2, 4), LeaderAndIsr(2, 0, (2,)), {4}, True).unclean is True


def test_reassign_partition_leader_election() -> None:
    assert reassign_partition_leader_election((2, 4), (2, 4), {4}) == 4


def test_reassign_partition_leader_election_with_no_live_isr() -> None:
    assert reassign_partition_leader_election((2, 4), (2,), set()) is None


def test_reassign_partition_leader_election_with_empty_isr() -> None:
    assert reassign_partition_leader_election((2, 4), (), {2}) is None


def test_preferred_replica_partition_leader_election() -> None:
    assert preferred_replica_partition_leader_election((2, 4), (2, 4), {2, 4}) == 2


def test_preferred_replica_partition_leader_election_preferred_replica_in_isr_not_live() -> None:
    assert preferred_replica_partition_leader_election((2, 4), (2,), set()) is None


def test_preferred_replica_partition_leader_election_preferred_replica_not_in_isr_live() -> None:
    assert preferred_replica_partition_leader_election((2, 4), (4,), {2, 4}) is None


def test_preferred_replica_partition_leader_election_preferred_replica_not_in_isr_not_live() -> None:
    assert preferred_replica_partition_leader_election((2, 4), (), set()) is None


def test_controlled_shutdown_partition_leader_election() -> None:
    assert controlled_shutdown_partition_leader_election((2, 4), (2, 4), {2, 4}, {2}) == 4


def test_controlled_shutdown_partition_leader_election_last_isr_shutting_down() -> None:
    assert controlled_shutdown_partition_leader_election((2, 4), (2,), {2, 4}, {2}) is None


def test_controlled_shutdown_partition_leader_election_all_isr_simultaneously_shutdown() -> None:
    assert controlled_shutdown_partition_leader_election((2, 4), (2, 4), {2, 4}, {2, 4}) is None


# ---- wrappers (kafka@2.6.x:core/src/main/scala/kafka/controller/Election.scala), literal cases


def test_offline_clean_keeps_the_live_isr_and_sends_to_live_assigned() -> None:
    result = leader_for_offline((1, 2, 3), LeaderAndIsr(1, 5, (1, 2, 3)), {2, 3}, False)
    assert result.leader_and_isr == LeaderAndIsr(2, 6, (2, 3))
    assert result.recipients == (2, 3) and result.unclean is False


def test_offline_unclean_resets_the_isr_to_the_leader() -> None:
    result = leader_for_offline((1, 2, 3), LeaderAndIsr(NO_LEADER, 5, (1,)), {3}, True)
    assert result.leader_and_isr == LeaderAndIsr(3, 6, (3,)) and result.unclean is True


def test_offline_with_no_candidate_elects_nobody() -> None:
    result = leader_for_offline((1, 2), LeaderAndIsr(NO_LEADER, 5, (1,)), {2}, False)
    assert result.leader_and_isr is None and result.recipients == (2,)


def test_reassign_scans_the_target_and_keeps_the_isr() -> None:
    result = leader_for_reassign((3, 2), LeaderAndIsr(1, 2, (1, 2, 3)), {1, 2, 3})
    assert result.leader_and_isr == LeaderAndIsr(3, 3, (1, 2, 3)) and result.recipients == (3, 2)


def test_preferred_sends_to_the_full_assignment() -> None:
    result = leader_for_preferred_replica((2, 1), LeaderAndIsr(1, 7, (1, 2)), {1})
    assert result.leader_and_isr is None and result.recipients == (2, 1)
    result = leader_for_preferred_replica((2, 1), LeaderAndIsr(1, 7, (1, 2)), {1, 2})
    assert result.leader_and_isr == LeaderAndIsr(2, 8, (1, 2))


def test_controlled_shutdown_removes_shutting_down_from_isr_and_tells_them() -> None:
    result = leader_for_controlled_shutdown((1, 2, 3), LeaderAndIsr(1, 0, (1, 2, 3)), {1, 2, 3}, {1})
    assert result.leader_and_isr == LeaderAndIsr(2, 1, (2, 3))
    assert result.recipients == (1, 2, 3)  # the deposed leader 1 hears of it (KAFKA-7482)


def test_isr_shrink_of_the_leader_leaves_no_leader() -> None:
    assert remove_replica_from_isr(LeaderAndIsr(1, 3, (1, 2)), 1) == LeaderAndIsr(NO_LEADER, 4, (2,))


def test_isr_shrink_of_a_follower_keeps_the_leader() -> None:
    assert remove_replica_from_isr(LeaderAndIsr(1, 3, (1, 2)), 2) == LeaderAndIsr(1, 4, (1,))


def test_isr_shrink_keeps_a_sole_member() -> None:
    assert remove_replica_from_isr(LeaderAndIsr(1, 3, (1,)), 1) == LeaderAndIsr(NO_LEADER, 4, (1,))
    # Variant V6 (KAFKA-708): without the rule the ISR empties.
    assert remove_replica_from_isr(LeaderAndIsr(1, 3, (1,)), 1, keep_sole_member=False).isr == ()


# ---- properties over random inputs

BROKERS = range(6)


@st.composite
def scenarios(draw):
    assignment = tuple(draw(st.permutations(list(BROKERS)))[: draw(st.integers(1, len(BROKERS)))])
    isr = tuple(b for b in draw(st.permutations(list(BROKERS))) if draw(st.booleans()))
    live = frozenset(b for b in BROKERS if draw(st.booleans()))
    shutting = frozenset(b for b in BROKERS if draw(st.booleans()))
    return assignment, isr, live, shutting


def first_in_order(assignment, eligible):
    return next((b for b in assignment if eligible(b)), None)


@given(scenarios(), st.booleans())
def test_offline_election_properties(s, unclean) -> None:
    assignment, isr, live, _ = s
    leader = offline_partition_leader_election(assignment, isr, live, unclean)
    clean = first_in_order(assignment, lambda b: b in live and b in isr)
    if leader is not None:
        assert leader in assignment and leader in live
    if clean is not None:
        assert leader == clean and leader in isr
    elif unclean:
        assert leader == first_in_order(assignment, lambda b: b in live)
    else:
        assert leader is None
    if leader is not None and leader not in isr:  # an unclean result
        assert unclean and clean is None


@given(scenarios())
def test_reassign_and_preferred_properties(s) -> None:
    assignment, isr, live, _ = s
    leader = reassign_partition_leader_election(assignment, isr, live)
    assert leader == first_in_order(assignment, lambda b: b in live and b in isr)
    preferred = preferred_replica_partition_leader_election(assignment, isr, live)
    assert preferred in (None, assignment[0])
    assert (preferred is not None) == (assignment[0] in live and assignment[0] in isr)


@given(scenarios())
def test_controlled_shutdown_never_returns_a_shutting_down_broker(s) -> None:
    assignment, isr, live, shutting = s
    leader = controlled_shutdown_partition_leader_election(assignment, isr, live, shutting)
    assert leader not in shutting
    assert leader == first_in_order(assignment, lambda b: b in live and b in isr and b not in shutting)


@given(scenarios(), st.booleans(), st.integers(0, 20))
def test_every_wrapper_bumps_the_epoch_by_one_and_keeps_the_leader_in_the_isr(s, unclean, epoch) -> None:
    assignment, isr, live, shutting = s
    old = LeaderAndIsr(assignment[0], epoch, isr)
    online = live - shutting
    results = [
        leader_for_offline(assignment, old, online, unclean),
        leader_for_reassign(assignment, old, online),
        leader_for_preferred_replica(assignment, old, online),
        leader_for_controlled_shutdown(assignment, old, live | shutting, shutting),
    ]
    for result in results:
        new = result.leader_and_isr
        if new is None:
            continue
        assert new.leader_epoch == epoch + 1
        assert new.leader in new.isr
        assert new.leader in assignment


@given(scenarios(), st.integers(0, 5))
def test_isr_shrink_never_empties_and_drops_the_leader_exactly_when_removed(s, replica) -> None:
    assignment, isr, _, _ = s
    if not isr:
        return
    old = LeaderAndIsr(isr[0], 1, isr)
    new = remove_replica_from_isr(old, replica)
    assert new.isr and new.leader_epoch == 2
    assert (new.leader == NO_LEADER) == (replica == old.leader)
    assert set(new.isr) <= set(isr)
