"""Kafka's path-keyed watch handlers, on top of the `ZooKeeper` protocol's one-shot callbacks.

Kafka's controller does not pass callbacks to individual reads. It registers *handlers* by path
(`ZNodeChangeHandler` for a znode's creation, deletion and data changes, `ZNodeChildChangeHandler`
for its children), and every later read of a registered path arms a watch: getData and exists when
a change handler is registered, getChildren when a child handler is registered and the caller asks
for a watch. One watcher routes each event to the handler registered for its path *at delivery
time* (kafka@2.6.x:core/src/main/scala/kafka/zookeeper/ZooKeeperClient.scala, `shouldWatch` and
`ZooKeeperClientWatcher.process`). A handler unregistered before its event arrives hears nothing.

`HandlerRegistry.process` is that watcher. It is one bound method, so a path watched by several
reads is watched once per client, as ZooKeeper does for one Watcher object. Handlers only enqueue
controller events in Kafka; they run on whatever thread delivers the watch event.

State-change handlers (`before_initializing_session` / `after_initializing_session`, called around
the creation of a new session after an expiry) are kept here too; `KafkaZkClient` calls them.
"""

from __future__ import annotations

import threading

from kcm.impl.zk.protocol import EventType, WatchCallback, WatchedEvent


class ZNodeChangeHandler:
    """Kafka's `ZNodeChangeHandler`: override the reactions you need (the defaults do nothing)."""

    path: str

    def handle_creation(self) -> None:
        pass

    def handle_deletion(self) -> None:
        pass

    def handle_data_change(self) -> None:
        pass


class ZNodeChildChangeHandler:
    """Kafka's `ZNodeChildChangeHandler`."""

    path: str

    def handle_child_change(self) -> None:
        pass


class StateChangeHandler:
    """Kafka's `StateChangeHandler`, keyed by `name`."""

    name: str

    def before_initializing_session(self) -> None:
        pass

    def after_initializing_session(self) -> None:
        pass


class HandlerRegistry:
    """The three handler maps of Kafka's `ZooKeeperClient` and the watcher that dispatches to them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._change: dict[str, ZNodeChangeHandler] = {}
        self._child: dict[str, ZNodeChildChangeHandler] = {}
        self._state: dict[str, StateChangeHandler] = {}

    def register_znode_change_handler(self, handler: ZNodeChangeHandler) -> None:
        with self._lock:
            self._change[handler.path] = handler

    def unregister_znode_change_handler(self, path: str) -> None:
        with self._lock:
            self._change.pop(path, None)

    def register_znode_child_change_handler(self, handler: ZNodeChildChangeHandler) -> None:
        with self._lock:
            self._child[handler.path] = handler

    def unregister_znode_child_change_handler(self, path: str) -> None:
        with self._lock:
            self._child.pop(path, None)

    def register_state_change_handler(self, handler: StateChangeHandler) -> None:
        with self._lock:
            self._state[handler.name] = handler

    def unregister_state_change_handler(self, name: str) -> None:
        with self._lock:
            self._state.pop(name, None)

    def state_change_handlers(self) -> list[StateChangeHandler]:
        with self._lock:
            return list(self._state.values())

    def data_watch(self, path: str) -> WatchCallback | None:
        """The watch a getData/exists of `path` should arm: ours if a change handler is registered."""
        with self._lock:
            return self.process if path in self._change else None

    def child_watch(self, path: str, register_watch: bool = True) -> WatchCallback | None:
        """The watch a getChildren of `path` should arm: ours if asked and a child handler is registered."""
        with self._lock:
            return self.process if register_watch and path in self._child else None

    def process(self, event: WatchedEvent) -> None:
        """`ZooKeeperClientWatcher.process`: route the event to the handler registered now."""
        with self._lock:
            change = self._change.get(event.path)
            child = self._child.get(event.path)
        if event.type is EventType.CHILD:
            if child is not None:
                child.handle_child_change()
        elif change is not None:
            {EventType.CREATED: change.handle_creation,
             EventType.DELETED: change.handle_deletion,
             EventType.CHANGED: change.handle_data_change}[event.type]()
