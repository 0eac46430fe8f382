"""The words for a known behaviour come from the model (`Model.known_as`), never from the engine: a
toy model that names nothing is told "known behaviour" and "known loop", one that names its
reference is told that name, in every text the engine makes (the summary, each outcome, the
counts line, JUnit, the liveness summary) and through every explorer (single, disjoint runs)."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import pytest
from kcm.checker.engine import report
from kcm.checker.engine.bfs import explore
from kcm.checker.engine.contract import KnownAs, KnownViolation
from kcm.checker.engine.liveness import EVENTUALLY_QUIESCENT, LIVENESS_PROPERTIES, check_liveness
from kcm.checker.engine.result import KNOWN, count_text
from kcm.checker.engine.runs import explore_runs
from kcm.model.checking.kafka_model import KafkaModel
from kcm.model.known_loops import KnownLoop

from tests.checker.toys import Failover, Lanes, Resume

#: A reference other than Kafka's, with a brief form, as a model of another system would name it.
OTHER = KnownAs("TwoLanes 1.0", "1.0")


class ListedLanes(Lanes):
    """Lanes of sizes 2, 3 and 4 where lane 0 passes (1, 1), which `not_0_1_1` forbids, and lane 2's
    corner is a deadlock: both listed as known behaviour of the modelled system, which `name` and
    `brief` name (`KnownAs`; plain strings, so that a Spark `ModelSpec` can carry them)."""

    def __init__(self, name: str = "", brief: str = "") -> None:
        super().__init__(bugs=((0, 1, 1),), stuck=(2,))
        self.known_as = KnownAs(name, brief)

    def known_violations(self):
        return {"not_0_1_1": KnownViolation("F1: lane 0 passes (1, 1)", lambda s, a, t, trace: True),
                "deadlock": KnownViolation("F2: lane 2 stops at its corner", lambda s, a, t, trace: True)}


class ListedLoop(Failover):
    """The failover livelock (Elect, Resume, Elect, ...) listed as a known loop."""

    def __init__(self, known_as: KnownAs | None = None) -> None:
        super().__init__(escape="elected")
        if known_as is not None:
            self.known_as = known_as

    def known_loops(self):
        return (KnownLoop("ResumeThrows", "F3", EVENTUALLY_QUIESCENT,
                          lambda cycle: any(isinstance(a, Resume) for a, _ in cycle)),)


def test_the_words_of_a_reference() -> None:
    assert KnownAs().words() == "known behaviour" and KnownAs().words("loop", brief=True) == "known loop"
    assert OTHER.words() == "known TwoLanes 1.0 behaviour"
    assert OTHER.words("behaviours", brief=True) == "known 1.0 behaviours"
    assert KnownAs("TwoLanes").words(brief=True) == "known TwoLanes behaviour"   # no brief: the name
    assert KafkaModel.known_as.words() == "known Kafka 2.6 behaviour"
    assert KafkaModel.known_as.words("loop", brief=True) == "known 2.6 loop"


@pytest.mark.parametrize(("known_as", "name", "brief"), [(None, "known behaviour", "known behaviour"),
                                                         (OTHER, "known TwoLanes 1.0 behaviour",
                                                          "known 1.0 behaviour")])
@pytest.mark.parametrize("jobs", [1, 2])
def test_known_violations_are_said_in_the_models_words(known_as, name, brief, jobs) -> None:
    model = ListedLanes(*dataclasses.astuple(known_as or KnownAs()))
    result = explore_runs(model, jobs=jobs)
    assert result.verdict == "pass" and result.known_as == model.known_as
    assert ("runs" in result.extra) == (jobs == 2)   # the merge of the runs' results, or the single explorer
    assert [(v.name, v.trace_length) for v in result.known_violations] == [("not_0_1_1", 2), ("deadlock", 8)]
    summary = result.summary_lines()
    assert summary[1:4] == [
        f"  {brief}: safety 'not_0_1_1' violated, after 2 steps (F1: lane 0 passes (1, 1))",
        f"  {brief}: deadlock 'deadlock' violated, after 8 steps (F2: lane 2 stops at its corner)",
        f"  2 {brief}s, a deadlock ({brief})",
    ]
    outcomes = result.outcomes()
    assert [(o.name, o.status, o.text()) for o in outcomes] == [
        ("not_0_1_1", KNOWN, f"{name}: F1: lane 0 passes (1, 1) (violated after 2 steps)"),
        ("deadlock", KNOWN, f"{name}: F2: lane 2 stops at its corner (violated after 8 steps)"),
    ]
    assert count_text(iter(outcomes)) == f"2 {brief}s, a deadlock ({brief})"   # any iterable
    suite = report.junit(result, (), preset="lanes")
    assert [s.get("message") for s in suite.iter("skipped")] == [o.text() for o in outcomes]
    assert "2.6" not in ET.tostring(suite, encoding="unicode") + "\n".join(summary)


@pytest.mark.parametrize(("known_as", "words"), [(None, "known loop"), (OTHER, "known 1.0 loop")])
def test_a_known_loop_is_listed_in_the_models_words(known_as, words) -> None:
    model = ListedLoop(known_as)
    result = explore(model, keep_graph=True, symmetry=False, stop_on_violation=False)
    live = check_liveness(model, result.extra["graph"])
    assert live.verdict == "pass" and live.known_as == model.known_as
    assert [line for line in live.summary_lines() if "ResumeThrows" in line] == [
        f"  {words} 'ResumeThrows' (F3, breaks EventuallyQuiescent): 1 step to a cycle of 2 steps "
        "(listed, not a violation)"]
    # As the command line joins it to the exploration: the property the loop breaks is known.
    joined = dataclasses.replace(result, checked=result.checked + LIVENESS_PROPERTIES,
                                 extra={**result.extra, "liveness": live})
    known = [o for o in joined.outcomes() if o.status == KNOWN]
    name = "known behaviour" if known_as is None else "known TwoLanes 1.0 behaviour"
    assert [(o.name, o.text()) for o in known] == [
        (EVENTUALLY_QUIESCENT, f"{name}: F3, loop ResumeThrows (violated after 3 steps)")]
