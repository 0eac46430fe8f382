"""What the threaded-cluster tests share: fast Kafka timings and a condition poller."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from kcm.impl.kafka_config import KafkaConfig
from kcm.impl.threaded_cluster import ThreadedCluster

#: Kafka's timings shrunk so that a threaded cluster settles in well under a second.
FAST = KafkaConfig(replica_lag_time_max_ms=2000, replica_fetch_interval_ms=20, isr_change_propagation_blackout_ms=20,
                   isr_change_propagation_interval_ms=100, controlled_shutdown_retry_backoff_ms=50,
                   request_send_backoff_ms=20)
#: Broker start orders, so that each broker gets to be the first controller.
ORDERS = {0: (0, 1, 2), 1: (1, 2, 0), 2: (2, 0, 1)}


def wait_for(condition, timeout_s: float, *, tolerate: tuple[type[BaseException], ...] = ()) -> bool:
    """Poll `condition` until it holds or `timeout_s` passes; the exceptions in `tolerate` (a
    ZooKeeper that is not back yet) count as "not yet"."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if condition():
                return True
        except tolerate:
            pass
        time.sleep(0.02)
    try:
        return bool(condition())
    except tolerate:
        return False


@contextmanager
def running_cluster(brokers: int, zookeeper: str) -> Iterator[ThreadedCluster]:
    """A threaded cluster of `brokers` brokers on `zookeeper`, every broker started (in id order, so
    broker 0 is the first controller); on leaving, the bugs its threads recorded are raised (the body
    passed) and the cluster is closed (always)."""
    c = ThreadedCluster(brokers, zookeeper=zookeeper, config=FAST)
    try:
        for b in range(brokers):
            c.start_broker(b)
        yield c
        c.raise_bugs()
    finally:
        c.close()
