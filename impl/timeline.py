"""`Timeline`: what happened in a running cluster, as records every component appends to.

Kafka writes this story to its logs (controller.log, state-change.log, server.log); here it is
data, shared by all the brokers of one cluster, so that `kcm simulate` can print it, tests can
assert on it (how many invalid transitions, which requests were fenced), and the abstraction
function can read the one piece of history the model keeps (`Ghost.ACTED_WHILE_INACTIVE`: a
controller module that was not active sent requests or wrote a controller znode).

Records are small frozen values; `Timeline.append` is thread-safe.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Record:
    """One thing that happened. `kind` is one of:

    - "election": broker `broker` became controller with `epoch`
    - "resignation": broker `broker` resigned (at `epoch`)
    - "leader": the controller at `epoch` wrote `partition`'s leadership (`detail`: leader, leader
      epoch, ISR, why)
    - "isr": partition leader `broker` changed `partition`'s ISR in ZooKeeper
    - "request": controller `broker` queued a request for `peer` (`detail`: its summary)
    - "delivered"/"fenced": broker `peer` applied, or rejected with the reason in `detail`, a
      request from controller `broker`
    - "transition"/"invalid transition": a state machine of controller `broker` moved (or was asked
      to move) `detail` = "machine subject from -> to"
    - "failed transition": a state change that failed on a ZooKeeper error (`logFailedStateChange`);
      the subject keeps its state
    - "acted while inactive": controller module `broker` acted without being active (V4)
    - "broker": a broker lifecycle step (`detail`: started, crashed, session expired, ...)
    - "shutdown": a controlled shutdown step of broker `broker`
    """

    kind: str
    broker: int
    epoch: int = -1
    peer: int = -1
    partition: str = ""
    detail: str = ""
    at: float = 0.0


class Timeline:
    """The cluster-wide record list."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._records: list[Record] = []
        self._clock = clock
        self._start = clock()

    def append(self, kind: str, broker: int, *, epoch: int = -1, peer: int = -1, partition: str = "",
               detail: str = "") -> None:
        record = Record(kind, broker, epoch, peer, partition, detail, self._clock() - self._start)
        with self._lock:
            self._records.append(record)

    @property
    def records(self) -> list[Record]:
        with self._lock:
            return list(self._records)

    def of_kind(self, kind: str) -> list[Record]:
        with self._lock:
            return [r for r in self._records if r.kind == kind]

    def count(self, kind: str) -> int:
        with self._lock:
            return sum(1 for r in self._records if r.kind == kind)
