"""`Layout`: how the model's numbered topics and partitions are named in the implementation.

The model numbers brokers 0..B-1, topics 0..T-1 and partitions 0..P-1 across topics (flat partition
`p` belongs to topic `p // partitions_per_topic`); the implementation, like Kafka, names topics and
uses `TopicPartition(topic, index)`. A `Layout` is the bijection, plus Kafka's default replica spread
that the model's `init_states` uses (partition p on brokers p, p+1, ... modulo the broker count).
Topic names are zero-padded so that their sorted order is the model's numeric order: the
implementation iterates partitions in `TopicPartition` order, the model in flat order.
"""

from __future__ import annotations

from dataclasses import dataclass

from kcm.impl.zk_data import TopicPartition
from kcm.model.config import ModelConfig


@dataclass(frozen=True, slots=True)
class Layout:
    brokers: int
    topics: tuple[str, ...]
    partitions_per_topic: int
    replication_factor: int
    #: The partitions a topic has when created (the others can be added), `ModelConfig.created_count`.
    created_partitions: int = 0

    @classmethod
    def from_config(cls, cfg: ModelConfig) -> Layout:
        return cls(cfg.brokers, tuple(f"t{t:02d}" for t in range(cfg.topics)), cfg.partitions, cfg.replication_factor,
                   cfg.created_count)

    @property
    def partition_count(self) -> int:
        return len(self.topics) * self.partitions_per_topic

    def tp(self, p: int) -> TopicPartition:
        return TopicPartition(self.topics[p // self.partitions_per_topic], p % self.partitions_per_topic)

    def flat(self, tp: TopicPartition) -> int | None:
        """The model's partition number, or None for a partition outside the layout."""
        try:
            t = self.topics.index(tp.topic)
        except ValueError:
            return None
        if not 0 <= tp.partition < self.partitions_per_topic:
            return None
        return t * self.partitions_per_topic + tp.partition

    def number(self, tp: TopicPartition) -> int:
        """The model's partition number of a partition of the layout."""
        p = self.flat(tp)
        assert p is not None, f"{tp} is outside the layout"
        return p

    def topic_index(self, topic: str) -> int | None:
        try:
            return self.topics.index(topic)
        except ValueError:
            return None

    def default_assignment(self, p: int) -> tuple[int, ...]:
        """Kafka's even spread without racks or offset, as `kcm.model.spec.default_assignment`."""
        return tuple((p + i) % self.brokers for i in range(self.replication_factor))

    def topic_assignment(self, t: int) -> dict[TopicPartition, tuple[int, ...]]:
        """Topic `t` as created: its first `created_partitions` (all of them when 0) on the default spread."""
        first = t * self.partitions_per_topic
        return {self.tp(p): self.default_assignment(p)
                for p in range(first, first + (self.created_partitions or self.partitions_per_topic))}
