"""On Spark as sequentially, a known behaviour is said in the model's words (`Model.known_as`): the
toy of tests/checker/test_known_as.py, named and unnamed, gives the same result and the same text,
a deadlock the model lists as known included."""

from __future__ import annotations

import pytest
from kcm.checker.engine.bfs import explore
from kcm.checker.engine.contract import KnownAs
from kcm.spark_explore.bfs import SparkOptions, explore_spark
from kcm.spark_explore.spec import ModelSpec

from tests.spark.conftest import signature


@pytest.mark.parametrize(("name", "brief", "words"), [("", "", "known behaviour"),
                                                      ("TwoLanes 1.0", "1.0", "known 1.0 behaviour")])
def test_spark_says_a_known_behaviour_in_the_models_words(spark, name, brief, words) -> None:
    spec = ModelSpec.of("tests.checker.test_known_as:ListedLanes", name, brief)
    sequential = explore(spec.build())
    distributed = explore_spark(spark, spec, SparkOptions(partitions=2))
    assert signature(distributed) == signature(sequential)
    assert distributed.known_as == sequential.known_as == KnownAs(name, brief)
    assert [(v.name, v.trace) for v in distributed.known_violations] == [
        (v.name, v.trace) for v in sequential.known_violations]
    assert [(v.name, v.trace_length) for v in distributed.known_violations] == [("not_0_1_1", 2), ("deadlock", 8)]
    assert distributed.summary_lines()[1:4] == sequential.summary_lines()[1:4] == [
        f"  {words}: safety 'not_0_1_1' violated, after 2 steps (F1: lane 0 passes (1, 1))",
        f"  {words}: deadlock 'deadlock' violated, after 8 steps (F2: lane 2 stops at its corner)",
        f"  2 {words}s, a deadlock ({words})"]
    assert [o.text() for o in distributed.outcomes()] == [o.text() for o in sequential.outcomes()]
