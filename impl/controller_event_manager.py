"""`ControllerEventManager`: one queue and one thread that runs the controller's events one at a time.

kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerEventManager.scala (KAFKA-5028, 0.11+).
ZooKeeper callbacks, request callbacks and timers only `put` events; the `controller-event-thread`
takes them in FIFO order and hands each to the processor (`KafkaController.process`), whole, so a
handler never interleaves with another.

* `QueuedEvent` wraps an event with a latch: `await_processing()` returns once the event thread has
  *started* it. The ZooKeeper client's session re-initialisation blocks on the Expire event this way
  (`beforeInitializingSession`), so the new session is created only when every event queued before
  the expiry notice has been dropped or run.
* `clear_and_put(event)` drains the queue, calling the processor's `preempt` on each drained event
  (ControlledShutdown answers ControllerMovedException: KAFKA-8294, in 2.3.0), then enqueues `event`.

Two ways to run it. Threaded: `start()` starts the event thread. Stepped: no thread; the
`Scheduler` calls `process_one()`, which runs the head of the queue on the caller's thread. The
queue itself, `put`, `clear_and_put` and the processing code are the same in both.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Protocol

from kcm.impl.controller_events import ControllerEvent, ShutdownEventThread
from kcm.impl.kafka_exception import KafkaException
from kcm.impl.logs import get_logger

log = get_logger(__name__)


class ControllerEventProcessor(Protocol):
    def process(self, event: ControllerEvent) -> None: ...

    def preempt(self, event: ControllerEvent) -> None: ...


class QueuedEvent:
    """An event in the queue, with a latch set when its processing starts."""

    __slots__ = ("event", "_started", "_done")

    def __init__(self, event: ControllerEvent) -> None:
        self.event = event
        self._started = threading.Event()
        self._done = False

    def process(self, processor: ControllerEventProcessor) -> None:
        if self._done:
            return
        self._done = True
        self._started.set()
        processor.process(self.event)

    def preempt(self, processor: ControllerEventProcessor) -> None:
        if self._done:
            return
        self._done = True
        processor.preempt(self.event)

    def await_processing(self, timeout: float | None = None) -> bool:
        """Block until the event thread has started this event (True), or `timeout` passed."""
        return self._started.wait(timeout)

    def __repr__(self) -> str:
        return repr(self.event)


class ControllerEventManager:
    """One FIFO of `QueuedEvent`s and (in threaded mode) the thread that drains it."""

    def __init__(self, controller_id: int, processor: ControllerEventProcessor) -> None:
        self.controller_id = controller_id
        self._processor = processor
        self._lock = threading.Condition()
        self._queue: deque[QueuedEvent] = deque()
        self._thread: threading.Thread | None = None
        #: A Python error (a bug here, not a Kafka error) that stopped the event thread; the run fails on it.
        self.failure: BaseException | None = None
        self._running = False
        self._busy = False
        self._dead = False
        #: The event being processed, for inspection (None between events).
        self.current: ControllerEvent | None = None
        #: Held while an event is taken and processed: holding it pauses the controller between
        #: two events (for a consistent snapshot of a threaded cluster).
        self.processing_lock = threading.Lock()

    # ---- the queue ---------------------------------------------------------------------------

    def put(self, event: ControllerEvent) -> QueuedEvent:
        queued = QueuedEvent(event)
        with self._lock:
            if self._dead:
                return queued   # the process is gone: nobody will ever take it
            self._queue.append(queued)
            self._lock.notify_all()
        return queued

    def clear_and_put(self, event: ControllerEvent) -> QueuedEvent:
        """Drop every queued event (each preempted), then enqueue `event`."""
        with self._lock:
            drained = list(self._queue)
            self._queue.clear()
        for queued in drained:
            queued.preempt(self._processor)
        return self.put(event)

    def queued_events(self) -> tuple[ControllerEvent, ...]:
        """The events waiting, head first (the one being processed is not included)."""
        with self._lock:
            return tuple(q.event for q in self._queue)

    def is_empty(self) -> bool:
        with self._lock:
            return not self._queue

    @property
    def is_dead(self) -> bool:
        """The process died (`kill`): no event will ever be taken again."""
        return self._dead

    def is_idle(self) -> bool:
        """Nothing queued and nothing being processed."""
        with self._lock:
            return not self._queue and not self._busy

    # ---- stepped mode ------------------------------------------------------------------------

    def process_one(self) -> ControllerEvent:
        """Run the head of the queue on this thread and return it (stepped mode)."""
        if self._thread is not None:
            raise RuntimeError("process_one is for stepped mode; this manager has an event thread")
        with self.processing_lock:
            with self._lock:
                queued = self._queue.popleft()
                self._busy = True
                self.current = queued.event
            try:
                queued.process(self._processor)
            finally:
                with self._lock:
                    self._busy = False
                    self.current = None
                    self._lock.notify_all()
        return queued.event

    # ---- threaded mode -----------------------------------------------------------------------

    def start(self) -> None:
        self._running = True
        self._thread = threading.Thread(target=self._do_work, name=f"controller-event-thread-{self.controller_id}",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        """`ControllerEventManager.close`: stop the thread after the event it is running."""
        if self._thread is None:
            return
        self._running = False
        self.clear_and_put(ShutdownEventThread())
        if self._thread is not threading.current_thread():
            self._thread.join()

    def kill(self) -> tuple[ControllerEvent, ...]:
        """The process died: the queue is lost (nothing is preempted) and no event is taken any more;
        the thread, if any, ends after the event it is running. Returns the events that were lost,
        so that the caller can fail what waited on them from outside the process."""
        with self._lock:
            self._dead = True
            lost = [q.event for q in self._queue]
            self._queue.clear()
            self._queue.append(QueuedEvent(ShutdownEventThread()))
            self._lock.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        with self._lock:
            self._queue.clear()
        return tuple(lost)

    def wait_idle(self, timeout: float) -> bool:
        """Block until nothing is queued or running (threaded mode), or `timeout` passed."""
        with self._lock:
            return self._lock.wait_for(lambda: not self._queue and not self._busy, timeout)

    def _do_work(self) -> None:
        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._queue)
            with self.processing_lock:
                with self._lock:
                    if not self._queue:
                        continue
                    queued = self._queue.popleft()
                    if isinstance(queued.event, ShutdownEventThread):
                        self._lock.notify_all()
                        return
                    self._busy = True
                    self.current = queued.event
                try:
                    queued.process(self._processor)
                except KafkaException:  # KafkaController.process logs its own errors; this is a last resort
                    log.exception("uncaught error processing %s", queued.event)
                except Exception as error:  # a bug of this implementation: the thread stops, the run fails
                    log.exception("implementation bug processing %s", queued.event)
                    self.failure = error
                    return
                finally:
                    with self._lock:
                        self._busy = False
                        self.current = None
                        self._lock.notify_all()
