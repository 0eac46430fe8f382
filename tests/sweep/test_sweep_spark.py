"""A sweep on Spark `local[2]`: one task per scope, the same outcomes as the local engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from kcm.sweep import farm, grid

pytest.importorskip("pyspark")
from kcm.spark_explore.session import spark_session  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
TINY = Path(__file__).parent / "tiny-grid.toml"


@pytest.fixture(scope="module")
def spark():
    # As tests/spark/conftest.py's session, which a test outside tests/spark cannot share.
    session = spark_session("local[2]", app_name="kcm-tests", python_path=(REPO_ROOT,))
    yield session
    session.stop()


def test_two_scopes_on_spark_match_the_local_engine(spark):
    g = grid.load(None, TINY)
    scopes = [s for s in g.scopes if s.name in ("b2-rf2-p1-crash-cold", "b2-rf2-p1-shrink-settled")]
    found: dict[str, tuple] = {}
    started: list[str] = []

    def on_done(scope, outcome, error):
        assert outcome is not None, error
        found[scope.name] = (outcome.verdict, outcome.reason, outcome.distinct, outcome.depth, outcome.goals)

    assert farm.run_spark(spark, scopes, g.budget, lambda s: started.append(s.name), on_done)
    assert started == ["b2-rf2-p1-crash-cold", "b2-rf2-p1-shrink-settled"]
    assert found == {"b2-rf2-p1-crash-cold": ("pass", "", 2641, 23, {"ControllerFailsOver": True}),
                     "b2-rf2-p1-shrink-settled": ("pass", "", 216, 11, {"ControllerFailsOver": False})}


def test_a_halt_stops_submitting_and_cancels_the_scopes_in_flight(spark):
    """`kcm sweep --fail-fast` on Spark: once a scope comes back with a violation, no scope is
    submitted any more and the job in flight is cancelled, not reported as failed."""
    g = grid.with_variant(grid.load(None, TINY), "V5")   # V5 breaks BrokerIncarnationTracked wherever a broker crashes
    scopes = [s for s in g.scopes if s.name in ("b2-rf2-p1-crash-settled", "b2-rf2-p1-crash-cold",
                                                "b2-rf2-p1-shrink-cold")]
    started: list[str] = []
    done: list[tuple] = []

    def on_done(scope, outcome, error):
        done.append((scope.name, outcome is not None and bool(outcome.violations), error))

    assert farm.run_spark(spark, scopes, g.budget, lambda s: started.append(s.name), on_done,
                          halt=lambda: any(broken for _, broken, _ in done))
    assert started == ["b2-rf2-p1-crash-cold", "b2-rf2-p1-crash-settled"]   # the grid's order, two at once
    assert done and done[0][1] and all(error == "" for _, _, error in done)
