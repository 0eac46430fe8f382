"""`KafkaException`: the base of every error the implementation names after Kafka's own.

Kafka's controller, event manager and request handlers contain failures by catching them (the
event thread's `case e: Throwable => error(...)`, kafka@2.6.0:core/src/main/scala/kafka/controller/
ControllerEventManager.scala, ControllerEventThread.doWork): a ZooKeeper error or a moved
controller abandons one event and the controller goes on. Here the same sites contain only
`KafkaException` subclasses (ZooKeeper errors, ControllerMovedException, StaleBrokerEpochException,
IllegalStateException, ...). A Python error (TypeError, KeyError, AttributeError,
AssertionError) is a bug of this implementation, not a condition Kafka handles: it must fail the
run (`kcm fuzz`, `kcm simulate`, the threaded tests) instead of being logged and dropped.
"""

from __future__ import annotations


class KafkaException(Exception):
    """An error Kafka itself raises and handles; the containment sites catch only these."""
