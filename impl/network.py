"""`Network`: the in-process stand-in for the brokers' sockets.

In Kafka a request travels over a `NetworkClient` to the broker's `SocketServer`, whose handler
threads pass it to `KafkaApis.handle`. Here each running broker process registers its `KafkaApis`
under its broker id, and `send(dst, request)` calls it and returns the response on the caller's
thread: the controller's `RequestSendThread` (or the stepped `Scheduler`) for control requests, a
shutting-down broker for its ControlledShutdownRequest. A request for an id with no process
listening raises `BrokerUnavailable`, which a send thread treats as Kafka treats a failed
connection: back off and resend the same request.

What the network does *not* do is as important: it never reorders, duplicates or drops requests on
its own. Order and loss live in the senders' queues (`ControllerChannelManager`), which is where
Kafka has them, and where the model has them (`Cluster.net`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from kcm.impl.kafka_exception import KafkaException


class BrokerUnavailable(KafkaException):
    """No broker process is listening on this id (it is down, or restarting)."""


class Network:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._endpoints: dict[int, Callable[[Any], Any]] = {}

    def register(self, broker_id: int, handler: Callable[[Any], Any]) -> None:
        with self._lock:
            self._endpoints[broker_id] = handler

    def unregister(self, broker_id: int, handler: Callable[[Any], Any]) -> None:
        with self._lock:
            if self._endpoints.get(broker_id) == handler:
                del self._endpoints[broker_id]

    def is_up(self, broker_id: int) -> bool:
        with self._lock:
            return broker_id in self._endpoints

    def send(self, broker_id: int, request: Any) -> Any:
        with self._lock:
            handler = self._endpoints.get(broker_id)
        if handler is None:
            raise BrokerUnavailable(f"broker {broker_id} is not reachable")
        return handler(request)
