"""`ControllerChannelManager`: one FIFO queue and one sender per broker, for the controller's requests.

kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerChannelManager.scala.
`add_broker` creates a broker's queue and its `RequestSendThread`; `send_request` appends to the
queue (a request for a broker without a queue is dropped with a warning, as Kafka's is);
`remove_broker` (the broker died or bounced) and `shutdown` (the controller resigned) stop the
sender and **discard whatever is still queued**. The sender takes the head of its queue and sends
it until it is answered: on any failure it backs off and resends *the same request*, so while a
broker's entry exists its requests arrive at least once, in order. The response goes to the
request's callback (the StopReplica deletion callback puts a controller event).

One deviation, chosen so that the queues line up with the model's (`kcm.model.world.World.send`):
an UpdateMetadata queued right behind another UpdateMetadata with the same stamps (controller id,
controller epoch, broker epoch) and no callbacks is *merged* into it. A broker applies
UpdateMetadata by overwriting the partitions it names and replacing the live broker list, and
nothing can come between two adjacent requests of one FIFO, so applying the merge equals applying
both (`UpdateMetadataRequest.merged_with`). Kafka would send both.

Threaded mode runs one thread per sender. Stepped mode runs none: the `Scheduler` calls
`deliver_one(broker_id)`, which sends the head of that queue once (the destination must be up).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kcm.impl.logs import get_logger
from kcm.impl.network import BrokerUnavailable, Network
from kcm.impl.requests import ApiKeys, ControlRequest, UpdateMetadataRequest
from kcm.impl.timeline import Timeline

log = get_logger(__name__)

ResponseCallback = Callable[[Any], None]


@dataclass(frozen=True, slots=True)
class QueueItem:
    api_key: ApiKeys
    request: ControlRequest
    callback: ResponseCallback | None
    enqueue_time_ms: int


def describe(request: ControlRequest) -> str:
    """A one-line summary for the timeline."""
    parts = ", ".join(
        f"{s.topic_partition}:" + (f"L{s.leader}/e{s.leader_epoch}" if hasattr(s, "leader")
                                   else ("delete" if s.delete_partition else "stop") + f"/e{s.leader_epoch}")
        for s in request.partition_states)
    head = f"{request.api_key.value}(c{request.controller_epoch}, be{request.broker_epoch})"
    return head + (f" [{parts}]" if parts else "")


class RequestSendThread:
    """The sender of one broker's queue (`RequestSendThread.doWork`)."""

    def __init__(self, controller_id: int, broker_id: int, queue: deque[QueueItem], lock: threading.Condition,
                 network: Network, backoff_ms: int) -> None:
        self.controller_id = controller_id
        self.broker_id = broker_id
        self._queue = queue
        self._lock = lock
        self._network = network
        self._backoff_s = backoff_ms / 1000
        self._running = False
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        #: The request taken from the queue and not yet answered (threaded mode).
        self.in_flight: QueueItem | None = None

    # threaded mode
    def start(self) -> None:
        self._running = True
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"Controller-{self.controller_id}-to-broker-{self.broker_id}-send-thread")
        self._thread.start()

    def shutdown(self) -> None:
        self._running = False
        self._stop.set()
        with self._lock:
            self._lock.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        while self._running:
            with self._lock:
                self._lock.wait_for(lambda: self._queue or not self._running)
                if not self._running:
                    return
                item = self._queue.popleft()
                self.in_flight = item
            response = None
            while self._running and response is None:
                try:
                    response = self._network.send(self.broker_id, item.request)
                except BrokerUnavailable:
                    self._stop.wait(self._backoff_s)   # back off, then resend the same request
            with self._lock:
                self.in_flight = None
            if response is not None and item.callback is not None:
                item.callback(response)

    # stepped mode
    def deliver_one(self) -> QueueItem:
        with self._lock:
            item = self._queue.popleft()
        response = self._network.send(self.broker_id, item.request)
        if item.callback is not None:
            item.callback(response)
        return item


@dataclass(slots=True)
class ControllerBrokerStateInfo:
    queue: deque[QueueItem]
    lock: threading.Condition
    request_send_thread: RequestSendThread


class ControllerChannelManager:
    """The per-broker queues and senders of one controller (see the module docstring)."""

    def __init__(self, controller_id: int, network: Network, timeline: Timeline, *, threaded: bool,
                 backoff_ms: int = 100) -> None:
        self.controller_id = controller_id
        self._network = network
        self._timeline = timeline
        self._threaded = threaded
        self._backoff_ms = backoff_ms
        self._broker_lock = threading.RLock()
        self.broker_state_info: dict[int, ControllerBrokerStateInfo] = {}

    def startup(self, broker_ids) -> None:
        """Queues for the live brokers the controller knows at failover."""
        for broker_id in sorted(broker_ids):
            self.add_broker(broker_id)

    def shutdown(self) -> None:
        """The controller resigns: every queue is discarded and every sender stopped."""
        with self._broker_lock:
            for broker_id in sorted(self.broker_state_info):
                self._remove_existing_broker(broker_id)

    def add_broker(self, broker_id: int) -> None:
        with self._broker_lock:
            if broker_id in self.broker_state_info:
                return
            lock = threading.Condition()
            queue: deque[QueueItem] = deque()
            sender = RequestSendThread(self.controller_id, broker_id, queue, lock, self._network, self._backoff_ms)
            self.broker_state_info[broker_id] = ControllerBrokerStateInfo(queue, lock, sender)
            if self._threaded:
                sender.start()

    def remove_broker(self, broker_id: int) -> None:
        with self._broker_lock:
            self._remove_existing_broker(broker_id)

    def _remove_existing_broker(self, broker_id: int) -> None:
        info = self.broker_state_info.pop(broker_id, None)
        if info is None:
            return
        with info.lock:
            dropped = len(info.queue)
            info.queue.clear()
        info.request_send_thread.shutdown()
        if dropped:
            self._timeline.append("dropped", self.controller_id, peer=broker_id, detail=f"{dropped} queued requests")

    def send_request(self, broker_id: int, request: ControlRequest, callback: ResponseCallback | None = None) -> None:
        with self._broker_lock:
            info = self.broker_state_info.get(broker_id)
        if info is None:
            log.warning("Not sending request %s to broker %d, since it is offline.", request, broker_id)
            return
        with info.lock:
            tail = info.queue[-1] if info.queue else None
            if (isinstance(request, UpdateMetadataRequest) and callback is None and tail is not None
                    and isinstance(tail.request, UpdateMetadataRequest) and tail.callback is None
                    and _stamps(tail.request) == _stamps(request)):
                info.queue[-1] = QueueItem(tail.api_key, tail.request.merged_with(request), None, tail.enqueue_time_ms)
            else:
                info.queue.append(QueueItem(request.api_key, request, callback, int(time.time() * 1000)))
            info.lock.notify_all()
        self._timeline.append("request", self.controller_id, epoch=request.controller_epoch, peer=broker_id,
                              detail=describe(request))

    # ---- inspection and stepped delivery -----------------------------------------------------

    def brokers(self) -> frozenset[int]:
        with self._broker_lock:
            return frozenset(self.broker_state_info)

    def queued_requests(self, broker_id: int) -> tuple[ControlRequest, ...]:
        """What is still to be delivered to `broker_id`, oldest first (in flight included)."""
        with self._broker_lock:
            info = self.broker_state_info.get(broker_id)
        if info is None:
            return ()
        with info.lock:
            in_flight = info.request_send_thread.in_flight
            return ((in_flight.request,) if in_flight else ()) + tuple(item.request for item in info.queue)

    def is_idle(self) -> bool:
        with self._broker_lock:
            infos = list(self.broker_state_info.values())
        for info in infos:
            with info.lock:
                if info.queue or info.request_send_thread.in_flight is not None:
                    return False
        return True

    def deliver_one(self, broker_id: int) -> ControlRequest:
        """Stepped mode: send the head of `broker_id`'s queue and run its callback."""
        with self._broker_lock:
            info = self.broker_state_info[broker_id]
        return info.request_send_thread.deliver_one().request


def _stamps(request: ControlRequest) -> tuple[int, int, int]:
    return request.controller_id, request.controller_epoch, request.broker_epoch
