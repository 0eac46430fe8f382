"""`KafkaScheduler`: the controller's timer for the auto leader rebalance task.

kafka@2.6.x:core/src/main/scala/kafka/utils/KafkaScheduler.scala, reduced to what the controller
uses: `startup`, `shutdown` (pending tasks are cancelled) and one-shot `schedule(name, fun, delay_s)`.
Threaded mode runs tasks on timer threads. Stepped mode never runs them: the `Scheduler` decides
when "the timer fires" (the model's `SchedulerAutoRebalance` action) and puts the event itself, so
`ManualKafkaScheduler` only records what was scheduled.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class KafkaScheduler:
    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._timers: list[threading.Timer] = []
        self._running = False

    def startup(self) -> None:
        with self._lock:
            self._running = True

    def shutdown(self) -> None:
        with self._lock:
            self._running = False
            timers, self._timers = self._timers, []
        for timer in timers:
            timer.cancel()

    @property
    def is_started(self) -> bool:
        return self._running

    def schedule(self, name: str, fun: Callable[[], object], delay_s: float) -> None:
        with self._lock:
            if not self._running:
                return
            timer = threading.Timer(delay_s, fun)
            timer.name = f"{self._name}-{name}"
            timer.daemon = True
            self._timers = [t for t in self._timers if t.is_alive()] + [timer]
            timer.start()


class ManualKafkaScheduler(KafkaScheduler):
    """Stepped mode: tasks are recorded, never run."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.scheduled: list[tuple[str, float]] = []

    def schedule(self, name: str, fun: Callable[[], object], delay_s: float) -> None:
        if self._running:
            self.scheduled.append((name, delay_s))
