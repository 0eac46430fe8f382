"""The Z3 proofs of the election rules (`kcm.checker.proofs`) and their backend (`kcm.checker.z3ops`).

Four groups:

- Kafka 2.6's rules: every property is proved for every broker count 1..8 (all of them: the whole
  run takes a few seconds).
- The historical variants: each breaks exactly the properties it is known to break (every
  property at 3 brokers; the broken ones at every count from 2 to 8), and each counterexample,
  replayed through the concrete backend, really shows the bug.
- The backend: on random concrete inputs (Hypothesis, 1..8 brokers), the Z3 terms, evaluated in a
  model where the symbolic inputs are pinned to those values, equal what `PY` returns, for every
  election function; and no property is vacuous (its precondition can hold, and so can its postcondition).
- `kcm prove`: exit codes, the table and the counterexample printout, and one-line usage errors.
"""

from __future__ import annotations

import functools

import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kcm.checker import proofs
from kcm.checker.z3ops import Z3, MaskedList, concrete
from kcm.model import election as e
from kcm.model.election import PY, ElectionResult, LeaderAndIsr

from kcm.cli import main

ALL_COUNTS = range(1, 9)


def _failures(results: list[proofs.ProofResult]) -> str:
    return "\n".join(f"{r.property} n={r.brokers}: {r.result} {r.counterexample}"
                     for r in results if r.result != "proved")


# --------------------------------------------------------------------------------------------------
# Kafka 2.6


@pytest.mark.parametrize("n", ALL_COUNTS)
def test_every_property_holds_for_kafka_2_6(n: int) -> None:
    results = proofs.run([n])
    assert len(results) == len(proofs.PROPERTIES)
    assert all(r.result == "proved" for r in results), _failures(results)


# --------------------------------------------------------------------------------------------------
# The historical variants


@pytest.mark.parametrize("variant", ["V6", "V7", "KAFKA-1503"])
def test_variant_breaks_exactly_its_properties(variant: str) -> None:
    rules = proofs.rules_named(variant)
    assert rules.breaks, "a variant the proofs can see must break something"
    results = proofs.run([3], variant=variant)
    assert {r.property for r in results if r.result == "failed"} == rules.breaks, _failures(results)
    assert all(r.result in ("proved", "failed") for r in results)


@pytest.mark.parametrize("variant", ["V6", "V7", "KAFKA-1503"])
def test_variant_fails_for_every_broker_count_from_two(variant: str) -> None:
    rules = proofs.rules_named(variant)
    results = proofs.run(range(2, 9), variant=variant, names=rules.breaks)
    assert all(r.result == "failed" and r.counterexample for r in results), _failures(results)


def _counterexample(variant: str, name: str, n: int) -> dict:
    (result,) = proofs.run([n], variant=variant, names=[name])
    assert result.result == "failed"
    return result.counterexample


def test_kafka_3670_counterexample_elects_a_dead_broker() -> None:
    ce = _counterexample("V7", "controlled_shutdown.leader_is_live_replica", 2)
    x, got = ce["inputs"], ce["outputs"]["leader"]
    assert got is not None and got not in x["live"] and got not in x["shutting_down"]
    # Replayed through the concrete backend: the old selector elects that dead broker, Kafka 2.6 does not.
    args = (tuple(x["assignment"]), tuple(x["isr"]), frozenset(x["live"]), frozenset(x["shutting_down"]))
    assert e.controlled_shutdown_leader_election_isr_order(*args) == got
    assert e.controlled_shutdown_partition_leader_election(*args) in (None, *x["live"])


def test_kafka_1503_counterexample_is_an_isr_order_pick() -> None:
    ce = _counterexample("KAFKA-1503", "offline.first_eligible_in_assignment_order", 2)
    x, got = ce["inputs"], ce["outputs"]["leader"]
    args = (tuple(x["assignment"]), tuple(x["isr"]), frozenset(x["live"]), x["unclean_enabled"])
    assert e.offline_leader_election_isr_order(*args) == got
    first_in_assignment_order = e.offline_partition_leader_election(*args)
    assert first_in_assignment_order is not None and first_in_assignment_order != got
    # The ISR order, not the assignment order, decided: the symbolic ISR order found it.
    assert x["isr"].index(got) < x["isr"].index(first_in_assignment_order)
    assert x["assignment"].index(first_in_assignment_order) < x["assignment"].index(got)


def test_kafka_708_counterexample_empties_the_isr() -> None:
    ce = _counterexample("V6", "remove_replica_from_isr.isr_never_emptied", 1)
    x = ce["inputs"]
    assert x["isr"] and ce["outputs"]["new"]["isr"] == []
    old = LeaderAndIsr(x["leader"], 0, tuple(x["isr"]))
    assert e.remove_replica_from_isr(old, x["replica"], keep_sole_member=False).isr == ()
    assert e.remove_replica_from_isr(old, x["replica"]).isr == tuple(x["isr"])


def test_variant_names_follow_the_model() -> None:
    assert proofs.rules_named("kafka-3670") is not proofs.KAFKA_2_6
    assert proofs.rules_named("kafka-3670").name == proofs.rules_named("v7").name == "V7"
    assert proofs.rules_named("KAFKA-708").name == "V6"
    assert proofs.rules_named(None) is proofs.rules_named("kafka-2.6") is proofs.KAFKA_2_6
    changing = {name for name in proofs.variant_names() if proofs.rules_named(name).changes_election}
    assert changing == {"V6", "V7", "KAFKA-1503"}
    with pytest.raises(ValueError, match="unknown variant 'V99'"):
        proofs.rules_named("V99")


def test_run_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="out of range"):
        proofs.run([proofs.MAX_BROKERS + 1])
    with pytest.raises(ValueError, match="unknown property"):
        proofs.run([1], names=["no.such.property"])


# --------------------------------------------------------------------------------------------------
# The backend: Z3 terms agree with PY on concrete inputs


@functools.cache
def _symbolic_outputs(n: int) -> dict[str, object]:
    """Every election function's result on the symbolic inputs for n brokers (built once per n)."""
    x = proofs.inputs(n)
    lai = x.leader_and_isr
    return {
        "offline": e.offline_partition_leader_election(x.assignment, x.isr, x.live, x.unclean_enabled, Z3),
        "offline_isr_order": e.offline_leader_election_isr_order(x.assignment, x.isr, x.live, x.unclean_enabled, Z3),
        "reassign": e.reassign_partition_leader_election(x.target_replicas, x.isr, x.live, Z3),
        "preferred": e.preferred_replica_partition_leader_election(x.assignment, x.isr, x.live, Z3),
        "shutdown": e.controlled_shutdown_partition_leader_election(x.assignment, x.isr, x.live, x.shutting_down, Z3),
        "shutdown_isr_order": e.controlled_shutdown_leader_election_isr_order(
            x.assignment, x.isr, x.live, x.shutting_down, Z3),
        "leader_for_offline": e.leader_for_offline(x.assignment, lai, x.online, x.unclean_enabled, Z3),
        "leader_for_reassign": e.leader_for_reassign(x.target_replicas, lai, x.online, Z3),
        "leader_for_preferred_replica": e.leader_for_preferred_replica(x.assignment, lai, x.online, Z3),
        "leader_for_controlled_shutdown": e.leader_for_controlled_shutdown(
            x.assignment, lai, x.live_or_shutting_down, x.shutting_down, Z3),
        "shutdown_isr_order_wrapper": e.leader_for_controlled_shutdown(
            x.assignment, lai, x.live_or_shutting_down, x.shutting_down, Z3,
            algorithm=e.controlled_shutdown_leader_election_isr_order),
        "remove_replica_from_isr": e.remove_replica_from_isr(lai, x.replica, Z3),
        "remove_replica_from_isr_v6": e.remove_replica_from_isr(lai, x.replica, Z3, keep_sole_member=False),
    }


def _python_outputs(c: dict) -> dict[str, object]:
    lai = LeaderAndIsr(c["leader"], c["leader_epoch"], c["isr"], c["zk_version"])
    return {
        "offline": e.offline_partition_leader_election(c["assignment"], c["isr"], c["live"], c["unclean_enabled"], PY),
        "offline_isr_order": e.offline_leader_election_isr_order(c["assignment"], c["isr"], c["live"],
                                                                 c["unclean_enabled"], PY),
        "reassign": e.reassign_partition_leader_election(c["target_replicas"], c["isr"], c["live"], PY),
        "preferred": e.preferred_replica_partition_leader_election(c["assignment"], c["isr"], c["live"], PY),
        "shutdown": e.controlled_shutdown_partition_leader_election(c["assignment"], c["isr"], c["live"],
                                                                    c["shutting_down"], PY),
        "shutdown_isr_order": e.controlled_shutdown_leader_election_isr_order(c["assignment"], c["isr"], c["live"],
                                                                              c["shutting_down"], PY),
        "leader_for_offline": e.leader_for_offline(c["assignment"], lai, c["online"], c["unclean_enabled"], PY),
        "leader_for_reassign": e.leader_for_reassign(c["target_replicas"], lai, c["online"], PY),
        "leader_for_preferred_replica": e.leader_for_preferred_replica(c["assignment"], lai, c["online"], PY),
        "leader_for_controlled_shutdown": e.leader_for_controlled_shutdown(
            c["assignment"], lai, c["live_or_shutting_down"], c["shutting_down"], PY),
        "shutdown_isr_order_wrapper": e.leader_for_controlled_shutdown(
            c["assignment"], lai, c["live_or_shutting_down"], c["shutting_down"], PY,
            algorithm=e.controlled_shutdown_leader_election_isr_order),
        "remove_replica_from_isr": e.remove_replica_from_isr(lai, c["replica"], PY),
        "remove_replica_from_isr_v6": e.remove_replica_from_isr(lai, c["replica"], PY, keep_sole_member=False),
    }


def _pin(symbolic: MaskedList, values, *, as_set: bool) -> list:
    """Constraints that make `symbolic` mean the concrete list (or set) `values`."""
    if as_set:
        return [p == (v in values) for p, v in symbolic.slots]
    pins = [p == (i < len(values)) for i, (p, _) in enumerate(symbolic.slots)]
    return pins + [v == values[i] for i, (_, v) in enumerate(symbolic.slots) if i < len(values)]


def _normal(result: object) -> object:
    # PY's `leader_for_offline` reports "no leader" as unclean=False; Z3's flag is an empty option (None).
    if isinstance(result, ElectionResult):
        return ElectionResult(result.leader_and_isr, result.recipients, bool(result.unclean))
    return result


@st.composite
def concrete_inputs(draw) -> dict:
    n = draw(st.integers(1, 8))
    brokers = list(range(n))
    ids = st.permutations(brokers)
    subsets = st.frozensets(st.sampled_from(brokers))
    return {
        "brokers": n,
        "assignment": tuple(draw(ids)[:draw(st.integers(1, n))]),
        "target_replicas": tuple(draw(ids)[:draw(st.integers(1, n))]),
        "isr": tuple(draw(ids)[:draw(st.integers(0, n))]),  # any subset, in any order, maybe unassigned
        "live": draw(subsets), "online": draw(subsets), "live_or_shutting_down": draw(subsets),
        "shutting_down": draw(subsets), "unclean_enabled": draw(st.booleans()),
        "leader": draw(st.integers(-1, n - 1)), "leader_epoch": draw(st.integers(0, 50)),
        "zk_version": draw(st.integers(0, 50)), "replica": draw(st.integers(0, n - 1)),
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(concrete_inputs())
def test_z3_backend_agrees_with_python_backend(c: dict) -> None:
    x = proofs.inputs(c["brokers"])
    solver = z3.Solver()
    solver.add(*x.domain)  # the concrete input must lie within the proofs' input space
    for name in ("assignment", "target_replicas", "isr"):
        solver.add(*_pin(getattr(x, name), c[name], as_set=False))
    for name in ("live", "online", "live_or_shutting_down", "shutting_down"):
        solver.add(*_pin(getattr(x, name), c[name], as_set=True))
    for name in ("unclean_enabled", "leader", "leader_epoch", "zk_version", "replica"):
        solver.add(getattr(x, name) == c[name])
    assert solver.check() == z3.sat, f"the proofs' domain excludes {c}"
    model = solver.model()
    expected = _python_outputs(c)
    for name, term in _symbolic_outputs(c["brokers"]).items():
        assert _normal(concrete(model, term)) == _normal(expected[name]), (name, c)


@pytest.mark.parametrize("n", [1, 3])
def test_no_property_is_vacuous(n: int) -> None:
    """Each property's precondition can hold, and so can precondition and postcondition together:
    a property whose precondition contradicts the domain would be "proved" without saying anything."""
    x = proofs.inputs(n)
    for prop in proofs.PROPERTIES:
        pre, post, _ = prop.build(x, proofs.KAFKA_2_6)
        solver = z3.Solver()
        solver.add(*x.domain, *(z3.BoolVal(c) if isinstance(c, bool) else c for c in (pre, post)))
        assert solver.check() == z3.sat, prop.name


# --------------------------------------------------------------------------------------------------
# kcm prove


def test_prove_command_passes_for_kafka_2_6(capsys, tmp_path) -> None:
    assert main(["prove", "--brokers", "3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    n = 3 * len(proofs.PROPERTIES)
    assert "PASS · kcm prove · rules kafka-2.6 · 1..3 brokers" in out and f"  {n} of {n} proofs proved" in out
    assert "offline.first_eligible_in_assignment_order" in out and "1–3" in out


def test_prove_command_prints_the_counterexample_of_a_variant(capsys, tmp_path) -> None:
    assert main(["prove", "--brokers", "2", "--variant", "KAFKA-3670", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "✗ controlled_shutdown.leader_is_live_replica fails with 1 broker(s)" in out
    assert "counterexample: assignment = [0]  isr = [0]  live = []" in out
    assert f"  78 of 84 proofs proved, 6 failed (3 of {len(proofs.PROPERTIES)} properties)" in out


@pytest.mark.parametrize(("args", "needle"), [
    (["prove", "--brokers", "0"], f"--brokers 0 is out of range; allowed 1..{proofs.MAX_BROKERS}"),
    (["prove", "--brokers", str(proofs.MAX_BROKERS + 1)], "out of range"),
    (["prove", "--variant", "nope"], "unknown variant 'nope'; choose one of V1,"),
])
def test_prove_command_rejects_bad_input(args: list[str], needle: str, capsys) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kcm: error: ") and needle in err[0]
