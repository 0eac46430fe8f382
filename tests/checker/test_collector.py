"""The cyclic garbage collector paused during a search (`checker/engine/collector.py`): it is off while
the explorer and Spark's task functions run and back as it was however they end, and exploring
the Kafka model leaves nothing for it to collect, which is what makes the pause lose no memory."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from kcm.checker.engine.bfs import explore
from kcm.checker.engine.collector import paused_collector, pausing_collector
from kcm.model.checking.kafka_model import KafkaModel

from kcm import config
from tests.checker.toys import GridCounter

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def collector_on():
    was_on = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was_on else gc.disable)()  # as it was, whatever the test left


def test_the_pause_restores_the_collector_as_it_was_even_on_an_exception(collector_on):
    with paused_collector():
        assert not gc.isenabled()
        with paused_collector():          # a pause inside a pause leaves it to the outer one
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyboardInterrupt), paused_collector():
        raise KeyboardInterrupt
    assert gc.isenabled()
    gc.disable()
    with paused_collector():
        pass
    assert not gc.isenabled()            # it was off: it stays off


def test_a_paused_generator_keeps_the_collector_off_until_it_ends_or_is_closed(collector_on):
    @pausing_collector
    def numbers(n):
        for i in range(n):
            yield i, gc.isenabled()

    assert list(numbers(3)) == [(0, False), (1, False), (2, False)] and gc.isenabled()
    run = numbers(3)
    assert next(run) == (0, False) and not gc.isenabled()
    run.close()
    assert gc.isenabled()
    assert numbers.__name__ == "numbers"   # Spark pickles task functions by name


def test_a_paused_generator_freezes_what_it_leaves_in_a_reused_pyspark_worker(monkeypatch):
    """PySpark's daemon runs a full collection after every task of a reused worker; a task
    function moves what it leaves alive (the model and its caches) out of the collector's sight,
    there and only there."""
    @pausing_collector
    def numbers(n):
        kept.append([[i] for i in range(n)])  # containers the collector tracks, left alive
        yield from range(n)

    kept: list = []
    gc.unfreeze()
    monkeypatch.delenv("SPARK_REUSE_WORKER", raising=False)
    assert list(numbers(3)) == [0, 1, 2] and gc.get_freeze_count() == 0   # the driver, a test
    monkeypatch.setenv("SPARK_REUSE_WORKER", "1")
    try:
        assert list(numbers(3)) == [0, 1, 2] and gc.get_freeze_count() > 0
        assert id(kept[-1]) not in {id(o) for o in gc.get_objects()}  # no collection walks it
        gc.unfreeze()
        run = numbers(3)
        assert next(run) == 0 and not gc.isenabled() and gc.get_freeze_count() == 0
        run.close()  # a task Spark stops early freezes too
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


class _Watched(GridCounter):
    """The grid toy, recording whether the collector was on each time it is expanded."""

    def __init__(self, interrupt_at: int | None = None) -> None:
        super().__init__(3)
        self.seen: list[bool] = []
        self.interrupt_at = interrupt_at

    def successors(self, state):
        self.seen.append(gc.isenabled())
        if len(self.seen) == self.interrupt_at:
            raise KeyboardInterrupt
        return super().successors(state)


def test_the_explorer_searches_with_the_collector_off_and_turns_it_back_on(collector_on):
    watched = _Watched()
    result = explore(watched)
    assert result.verdict == "pass" and watched.seen and not any(watched.seen)
    assert gc.isenabled()
    interrupted = _Watched(interrupt_at=5)
    assert explore(interrupted).reason == "interrupted" and gc.isenabled()


def _file(name: str):
    return config.load_config_file(REPO / "bench" / "mutation" / f"{name}.toml")


@pytest.mark.parametrize("name, cfg, depth", [
    ("tiny", lambda: config.load_preset("tiny"), None),
    ("zkfaults", lambda: config.load_preset("zkfaults"), None),      # lost replies, connection losses
    ("v4", lambda: config.load_preset("v4"), 14),                    # a variant, violated
    ("m-delete-reassign", lambda: _file("m-delete-reassign"), None), # deletion and reassignment handlers
    ("m-move", lambda: _file("m-move"), None),                      # a controller moved: ControllerMoved raised
    ("default", lambda: config.load_preset("default"), 8),
])
def test_exploring_the_kafka_model_makes_no_reference_cycle(collector_on, name, cfg, depth):
    """Everything the search allocates is freed by reference counting: with the collector off for
    the whole run, the model still alive, nothing is left for it to find."""
    model = KafkaModel(cfg())
    explore(KafkaModel(model.cfg), max_depth=2)   # imports and module-level memos, made once
    gc.collect()
    gc.disable()
    result = explore(model, max_depth=depth)
    assert result.stats.distinct > 100
    assert gc.collect() == 0, f"{name}: the search left reference cycles behind"


class _Cyclic(GridCounter):
    """A model that leaves a reference cycle behind at each expansion (what the check must see)."""

    def successors(self, state):
        loop: list = []
        loop.append(loop)
        return super().successors(state)


def test_the_cycle_check_sees_a_model_that_makes_cycles(collector_on):
    model = _Cyclic(3)
    gc.collect()
    gc.disable()
    explore(model)
    assert gc.collect() == 16   # one cycle per state of the 4 x 4 grid
