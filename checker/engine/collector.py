"""Python's cyclic garbage collector, paused while a search runs.

CPython frees an object when its last reference goes (reference counting); the cyclic collector
only exists for objects that refer to each other in a cycle. It runs whenever allocations outnumber
frees by 700, and every so often it walks *every* container object alive. A breadth-first search
allocates millions of short-lived tuples and keeps millions alive (the visited set, the frontier,
the model's fingerprint and renaming caches), so those walks grow with the search until they take
a large share of it (docs/benchmarks.md, "`default` with the garbage collector paused").

The Kafka model creates no cycle while it is explored: its states are immutable records of
records, a step's `World` and `Controller` are dropped when the step ends, and a caught exception
is not kept. `tests/checker/test_collector.py` checks that exploring small presets, fault-injecting
and variant ones included, leaves nothing for the collector to find while the model is alive. So
pausing it loses no memory; the search turns it back on when it ends, however it ends, and a pause
inside a pause leaves it to the outer one. (A model object itself is a cycle, its properties
referring back to it: it is collected after the search, as before.)
"""

from __future__ import annotations

import functools
import gc
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")


@contextmanager
def paused_collector() -> Iterator[None]:
    """The cyclic collector off for the block, then as it was."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def pausing_collector(generator_function: Callable[..., Iterator[T]]) -> Callable[..., Iterator[T]]:
    """A generator function whose runs keep the collector paused until they end or are closed
    (Spark's task functions: their partitions are searches too), and that, in a PySpark worker
    Spark reuses for the next task, freeze what they leave alive (`gc.freeze`) when they end.

    PySpark's daemon runs a full `gc.collect()` after every task of a reused worker
    (`pyspark/daemon.py`), which walks every object alive in the worker: mostly the model and its
    fingerprint, renaming and codec caches, kept for the next tasks and growing through the run,
    so they cost more at every level (docs/benchmarks.md, "The state codec, and PySpark's
    collections between tasks"). Frozen objects are left out of every collection; the model makes
    no cycles (above), so nothing it leaves behind needed one, and reference counting still frees
    them."""
    @functools.wraps(generator_function)
    def paused(*args: Any, **kwargs: Any) -> Iterator[T]:
        try:
            with paused_collector():
                yield from generator_function(*args, **kwargs)
        finally:
            if os.environ.get("SPARK_REUSE_WORKER"):  # set by Spark for the workers it reuses
                gc.freeze()
    return paused
