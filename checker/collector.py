"""Python's cyclic garbage collector, paused while a search runs.

CPython frees an object when its last reference goes (reference counting); the cyclic collector
only exists for objects that refer to each other in a cycle. It runs whenever allocations outnumber
frees by 700, and every so often it walks *every* container object alive. A breadth-first search
allocates millions of short-lived tuples and keeps millions alive (the visited set, the frontier,
the model's fingerprint and renaming caches), so those walks grow with the search: on `default`
they were 29% of the first 16 levels' time (43.3 CPU s with the collector, 30.8 without) and 41% of
the whole preset's (220.5 s, 130.8 s; docs/benchmarks.md).

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
    (Spark's task functions: their partitions are searches too)."""
    @functools.wraps(generator_function)
    def paused(*args: Any, **kwargs: Any) -> Iterator[T]:
        with paused_collector():
            yield from generator_function(*args, **kwargs)
    return paused
