"""Readable traces (changed leaves only) and sequence diagrams."""

from __future__ import annotations

import shutil
import subprocess

from kcm.checker.engine.bfs import explore
from kcm.checker.engine.itf import ItfList, ItfMap, Record, parse_itf
from kcm.checker.engine.model_spec import ModelSpec
from kcm.checker.engine.traces import (
    ABSENT,
    actors_of,
    diff_values,
    format_trace,
    format_value,
    render_text,
    sequence_diagram,
    to_itf_trace,
    write_counterexample,
)

from tests.checker.toys import EpochModel, Philosophers, TwoPhaseCommit

EPOCH_TEXT = """\
Transition invariant 'epoch_monotonic' violated by step 3 in model 'epochs'

State 0 (initial)
  epoch = 0
  leader = None

Step 1: ControllerBump(controller=0)
  epoch: 0 -> 1
  leader: None -> 0

Step 2: ControllerBump(controller=0)
  epoch: 1 -> 2

Step 3: BrokerStaleWrite(broker=1)   <-- violates 'epoch_monotonic'
  epoch: 2 -> 1
  leader: 0 -> 1
"""


def test_text_of_a_violation():
    model = EpochModel()
    violation = explore(model).violations[0]
    assert format_trace(model, violation.trace, invariant=violation.name, kind=violation.kind) == EPOCH_TEXT


def test_text_of_a_deadlock_and_a_witness():
    model = Philosophers(3)
    violation = explore(model).violations[0]
    text = format_trace(model, violation.trace, invariant=violation.name, kind=violation.kind)
    assert text.startswith("Deadlock after 3 steps in model 'dining philosophers'")
    assert "Step 3: TakeLeft(philosopher=2)   <-- violates 'deadlock'\n  state[2]: 0 -> 1\n" in text
    assert text.endswith("No action is enabled in this state, and it is not a legal end state.\n")
    model = TwoPhaseCommit(3)
    goal = explore(model).goals["abort agreement"]
    text = format_trace(model, goal.trace, invariant=goal.name, kind="sometimes")
    assert text.startswith("Witness for goal 'abort agreement' in 3 steps")
    assert "Step 3: RmChooseToAbort(rm=2)   <-- meets 'abort agreement'\n  rmState[2]: working -> aborted\n" in text


NESTED = {
    "vars": ["cluster", "tick"],
    "states": [
        {"#meta": {"index": 0}, "tick": {"#bigint": "0"},
         "cluster": {"brokers": {"#map": [[{"#bigint": "1"}, {"isr": {"#set": [{"#bigint": "1"}, {"#bigint": "2"}]},
                                                             "log": [{"#bigint": "5"}], "role": "Leader"}]]},
                     "controller": {"#tup": [{"#bigint": "1"}, {"#bigint": "7"}]}}},
        {"#meta": {"index": 1, "action": "Shrink(broker=1)"}, "tick": {"#bigint": "0"},
         "cluster": {"brokers": {"#map": [[{"#bigint": "1"}, {"isr": {"#set": [{"#bigint": "1"}, {"#bigint": "3"}]},
                                                             "log": [{"#bigint": "5"}, {"#bigint": "6"}],
                                                             "role": "Leader"}]]},
                     "controller": {"#tup": [{"#bigint": "1"}, {"#bigint": "8"}]}}},
        {"#meta": {"index": 2}, "tick": {"#bigint": "0"},
         "cluster": {"brokers": {"#map": [[{"#bigint": "1"}, {"isr": {"#set": [{"#bigint": "1"}, {"#bigint": "3"}]},
                                                             "log": [{"#bigint": "5"}, {"#bigint": "6"}],
                                                             "role": "Leader"}]]},
                     "controller": {"#tup": [{"#bigint": "1"}, {"#bigint": "8"}]}}},
    ],
}


def test_nested_changes_are_shown_as_dotted_paths():
    text = render_text(parse_itf(NESTED))
    assert text == """\
Trace of 2 steps

State 0 (initial)
  cluster = {brokers: {1: {isr: {1, 2}, log: [5], role: Leader}}, controller: (1, 7)}
  tick = 0

Step 1: Shrink(broker=1)
  cluster.brokers[1].isr: {1, 2} -> {1, 3}  (+3, -2)
  cluster.brokers[1].log: [5] -> [5, 6]
  cluster.controller[1]: 7 -> 8

Step 2: (action not recorded)
  (no change)
"""


def test_diff_values_of_records_with_added_and_removed_fields():
    old = Record([("a", 1), ("b", ItfMap([("k", (1, 2))]))])
    new = Record([("b", ItfMap([("k", (1, 3)), ("j", 0)])), ("c", True)])
    assert diff_values(old, new, "x") == [
        ("x.a", 1, ABSENT),
        ("x.b[k][1]", 2, 3),
        ("x.b[j]", ABSENT, 0),
        ("x.c", ABSENT, True),
    ]
    assert diff_values((1, 2), (1, 2, 3), "t") == [("t", (1, 2), (1, 2, 3))]  # lengths differ: a leaf
    assert diff_values(Record([("a", 1)]), ItfMap([("a", 1)]), "m") == [("m", Record([("a", 1)]), ItfMap([("a", 1)]))]


def test_format_value():
    assert format_value(Record([("tag", "Prepared"), ("value", Record([("rm", 0)]))])) == "Prepared(rm=0)"
    assert format_value(Record([("tag", "Some"), ("value", 3)])) == "Some(3)"
    assert format_value((1,)) == "(1,)"
    assert format_value(ItfList([])) == "[]"
    assert format_value("two words") == '"two words"'
    assert format_value(frozenset({"b", "a"})) == "{a, b}"


# ---- sequence diagrams ------------------------------------------------------------------------


def test_actor_inference():
    assert actors_of("ControllerProcessEvent", {"controller": 1}) == ("controller 1", [])
    assert actors_of("ZkDeliverWatch", {"broker": 2, "path": "/x"}) == ("zk", ["broker 2"])
    assert actors_of("NetworkDeliver", {"from_broker": 0, "to_broker": 2}) == ("broker 0", ["broker 2"])
    assert actors_of("Deliver", {"src": 3, "dst": 4, "msg": "m"}) == ("node 3", ["node 4"])
    assert actors_of("ControllerSendLeaderAndIsr", {"controller": 0, "brokers": frozenset({2, 1})}) == (
        "controller 0", ["broker 1", "broker 2"])
    assert actors_of("TakeLeft", {"philosopher": 1}) == ("philosopher 1", [])
    assert actors_of("TmRcvPrepared", {"rm": 0}) == ("tm", ["rm 0"])
    assert actors_of("Toggle", {}) == ("environment", [])
    assert actors_of(None, {"count": 3}) == ("environment", [])


def test_sequence_diagram_of_a_violation(tmp_path):
    model = EpochModel()
    violation = explore(model).violations[0]
    dot = sequence_diagram(to_itf_trace(model, violation.trace, invariant=violation.name, kind=violation.kind))
    assert dot.startswith("digraph trace {")
    assert 'label="controller 0"' in dot and 'label="broker 1"' in dot
    # Steps 1 and 2 are boxes on controller 0's lifeline; step 3, the violation, a red box on broker 1's.
    assert 'p0_1 [shape=box, label="ControllerBump(controller=0)"];' in dot
    assert 'p1_3 [shape=box, label="BrokerStaleWrite(broker=1)", color="#cc0000"' in dot
    assert dot.count("#cc0000") == 3  # the step number, the box, and nothing else
    assert "h0 -> p0_1 -> p0_2 -> p0_3" in dot
    out = subprocess.run([shutil.which("dot") or "dot", "-Tsvg"], input=dot, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "<svg" in out.stdout


def test_sequence_diagram_arrows_and_witness_not_red():
    model = TwoPhaseCommit(3)
    goal = explore(model).goals["commit agreement"]
    dot = sequence_diagram(to_itf_trace(model, goal.trace, invariant=goal.name, kind="sometimes"))
    arrows = [line for line in dot.splitlines() if "xlabel=" in line]
    assert len(arrows) == 3  # TmRcvPrepared(rm) for each RM: tm -> rm
    assert 'xlabel="TmRcvPrepared(rm=0)"' in dot
    assert "#cc0000" not in dot


def test_write_counterexample_writes_every_output(tmp_path):
    model = EpochModel()
    violation = explore(model).violations[0]
    paths = write_counterexample(model, violation.trace, tmp_path, invariant=violation.name,
                                 kind=violation.kind, model_spec=ModelSpec.of("tests.checker.toys:epochs"))
    assert sorted(p.name for p in paths.values()) == [
        "epoch_monotonic.dot", "epoch_monotonic.itf.json", "epoch_monotonic.txt", "replay_epoch_monotonic.py"]
    assert paths["text"].read_text() == EPOCH_TEXT
    without = write_counterexample(model, violation.trace, tmp_path / "b", invariant="a b/c", kind="safety")
    assert sorted(without) == ["dot", "itf", "text"] and without["itf"].name == "a_b_c.itf.json"


# ---- the Kafka model's traces: legend, budgets, what each step processed ---------------------------


def _kafka(preset: str):
    from kcm.model.checking.kafka_model import KafkaModel

    from kcm import config

    return KafkaModel(config.load(preset)[1])


def test_the_legend_names_each_watch_at_the_position_the_trace_prints():
    """A trace prints `zk.watches[b]` as the positions of the mask's bits; the legend and the
    diagram's notifications name each position as the model's `Watch` constants place it."""
    from kcm.checker.sequence import TEXT_LEGEND, WATCH_NAMES, watch_name
    from kcm.model.checking.kafka_model import state_fields
    from kcm.model.cluster import PARTITION_STATE_SHIFT, partition_watch

    s = _kafka("tiny").init_states()[0]
    legend = " ".join(TEXT_LEGEND.split())
    for watch, znode in WATCH_NAMES.items():
        armed = s._replace(zk=s.zk._replace(watches=(int(watch),) + s.zk.watches[1:]))
        [position] = state_fields(armed)["zk.watches"][0]
        assert watch_name(position) == znode and f" {position} {znode}," in legend
    for p in (0, 3):
        armed = s._replace(zk=s.zk._replace(watches=(partition_watch(p),) + s.zk.watches[1:]))
        [position] = state_fields(armed)["zk.watches"][0]
        assert position == PARTITION_STATE_SHIFT + p and watch_name(position) == f"partition {p} state"
    assert f"{PARTITION_STATE_SHIFT}+p the state znode of partition p" in legend


def test_the_diagram_reads_watches_as_positions():
    """/controller is position 0 and a partition's state znode 8+p: a fired watch is named by the
    positions it lost, not by their sum."""
    from kcm.checker.engine.itf import ItfTrace
    from kcm.checker.sequence import step_events

    broker = Record([("up", True), ("connected", True), ("active", False)])
    before = {"zk.watches": (frozenset({0, 1, 8}), frozenset()), "broker0": broker, "broker1": broker}
    after = {"zk.watches": (frozenset({1}), frozenset()), "broker0": broker, "broker1": broker}
    trace = ItfTrace(("zk.watches", "broker0", "broker1"), (before, after), (None, "ZkSessionExpire(broker=1)"),
                     (Record(), Record([("broker", 1)])), (None, "ZkSessionExpire"), {})
    watches = [(e.source, e.target, e.label) for e in step_events(trace, 1) if e.kind == "watch"]
    assert watches == [("ZooKeeper", "broker 0", "watch fired: /controller, partition 0 state")]


def test_the_legend_names_each_spent_counter_by_the_kinds_that_spend_it():
    from kcm.checker.sequence import TEXT_LEGEND, budget_names
    from kcm.model.actions import BY_BUDGET
    from kcm.model.cluster import Budget

    model = _kafka("v6")
    violation = explore(model).violations[0]
    text = format_trace(model, violation.trace, invariant=violation.name, kind=violation.kind)
    # v6: broker 0 crashes at step 2, which spends the first counter.
    assert "Step 2: BrokerCrash(broker=0)\n" in text and "  spent[0]: 0 -> 1\n" in text
    names = budget_names()
    assert len(names) == len(Budget) == len(model.init_states()[0].spent)
    assert names[Budget.BROKER_CRASHES] == "BrokerCrash"
    assert names[Budget.REASSIGNMENTS] == "AdminReassign/AdminReassignPartitions"
    legend = " ".join(TEXT_LEGEND.split())
    for budget, kind in BY_BUDGET.items():
        assert kind.name in names[budget] and f"[{int(budget)}] {names[budget]}" in legend


def test_a_kafka_trace_says_which_event_each_step_processed(tmp_path):
    """The text says what the label does not (the event processed); the ITF keeps the label for
    replay and adds the description, and the written trace still replays."""
    import json

    from kcm.checker.engine.replay import replay_itf

    from kcm.exploration import trace_spec

    model = _kafka("v6")
    violation = explore(model).violations[0]
    paths = write_counterexample(model, violation.trace, tmp_path, invariant=violation.name, kind=violation.kind,
                                 model_spec=trace_spec(model.cfg))
    text = paths["text"].read_text()
    assert "\nStep 1: ControllerProcessEvent(broker=0): Startup\n" in text
    assert "\nStep 4: ControllerProcessEvent(broker=1): Startup   <-- violates 'IsrNonEmpty'\n" in text
    doc = json.loads(paths["itf"].read_text())
    assert doc["#meta"]["actions"] == [None, "ControllerProcessEvent(broker=0)", "BrokerCrash(broker=0)",
                                       "ZkSessionExpire(broker=0)", "ControllerProcessEvent(broker=1)"]
    assert [s["#meta"].get("action_description") for s in doc["states"]] == [
        None, "ControllerProcessEvent(broker=0): Startup", None, None, "ControllerProcessEvent(broker=1): Startup"]
    replay_itf(paths["itf"])


def test_describe_action_names_the_event_and_the_request():
    from kcm.model.actions import BrokerCrash, ControllerProcessEvent, NetworkDeliver, ZkLoseReply
    from kcm.model.checking.labels import event_text
    from kcm.model.cluster import Event, EventKind

    model = _kafka("tiny")
    s0 = next(s for s in model.init_states() if s.scenario == 0)
    assert model.describe_action(s0, ZkLoseReply(0)) == (
        "ZkLoseReply(broker=0): Startup, the reply to its first partition-state write lost")
    s1 = model.step(s0, ControllerProcessEvent(0))
    assert model.describe_action(s1, ControllerProcessEvent(0)) == "ControllerProcessEvent(broker=0): ControllerChange"
    assert model.describe_action(s1, NetworkDeliver(0, 1)) == "NetworkDeliver(src=0, dst=1): UpdateMetadata(c0,e1,be1)"
    s2 = model.step(s1, NetworkDeliver(0, 1))
    assert model.describe_action(s2, NetworkDeliver(0, 1)) == (
        "NetworkDeliver(src=0, dst=1): LeaderAndIsr(c0,e1,be1) [p0: leader 0, leader epoch 0, isr [0, 1]]")
    assert model.describe_action(s2, BrokerCrash(1)) == "BrokerCrash(broker=1)"
    assert event_text(Event(EventKind.ControlledShutdown, 1, 3)) == "ControlledShutdown(id=1, brokerEpoch=3)"
    assert event_text(Event(EventKind.PartitionReassignmentIsrChange, 2)) == (
        "PartitionReassignmentIsrChange(partition=2)")
    assert event_text(Event(EventKind.TopicDeletionStopReplicaResponseReceived, 1, 0b101)) == (
        "TopicDeletionStopReplicaResponseReceived(replicaId=1, partitions {0, 2})")


def test_a_model_without_descriptions_writes_the_itf_it_always_did():
    """`describe_action` defaults to the label, and a label is never written twice."""
    from kcm.checker.engine.itf import itf_document

    model = EpochModel()
    violation = explore(model).violations[0]
    doc = itf_document(model, violation.trace, invariant=violation.name, kind=violation.kind)
    assert all("action_description" not in s["#meta"] for s in doc["states"])
    assert parse_itf(doc).described(1) == "ControllerBump(controller=0)"
