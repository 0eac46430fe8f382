"""`TopicDeletionManager`: deleting the topics queued under /admin/delete_topics, replica by replica.

kafka@2.6.x:core/src/main/scala/kafka/controller/TopicDeletionManager.scala. A topic
queued for deletion is *ineligible* while one of its replicas is on a dead broker or one of its
partitions is being reassigned. Deletion (`on_topic_deletion`) moves the partitions Offline ->
NonExistent, tells every broker (UpdateMetadata with leader -2), then `on_partition_deletion`: dead
replicas -> ReplicaDeletionIneligible (the topic becomes ineligible), the live ones not yet deleted
-> Offline -> ReplicaDeletionStarted (StopReplica(delete=true)). StopReplica responses move replicas
to DeletionSuccessful or DeletionIneligible. When no replica is DeletionStarted and some are
Ineligible, those go back to Offline and deletion is retried. When every replica is Successful:
`complete_delete_topic` moves them to NonExistent and deletes the topic's znodes, fenced.

The ZooKeeper side and the UpdateMetadata go through `DeletionClient` (Kafka's
`ControllerDeletionClient`), which the controller implements. `delete.topic.enable` is honoured.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from kcm.impl.controller_context import ControllerContext, PartitionAndReplica
from kcm.impl.logs import get_logger
from kcm.impl.partition_state_machine import PartitionStateMachine
from kcm.impl.replica_state_machine import ReplicaStateMachine
from kcm.impl.zk_data import TopicPartition
from kcm.model.states import PartitionState as P
from kcm.model.states import ReplicaState as R

log = get_logger(__name__)


class DeletionClient(Protocol):
    def delete_topic(self, topic: str, epoch_zk_version: int) -> None: ...

    def delete_topic_deletions(self, topics: list[str], epoch_zk_version: int) -> None: ...

    def send_metadata_update(self, partitions: list[TopicPartition]) -> None: ...

    def mute_partition_modifications(self, topic: str) -> None: ...


class TopicDeletionManager:
    def __init__(self, context: ControllerContext, replica_state_machine: ReplicaStateMachine,
                 partition_state_machine: PartitionStateMachine, client: DeletionClient, *,
                 delete_topic_enable: bool = True) -> None:
        self._context = context
        self._replicas = replica_state_machine
        self._partitions = partition_state_machine
        self._client = client
        self.is_delete_topic_enabled = delete_topic_enable

    def init(self, topics_to_be_deleted: set[str], topics_ineligible_for_deletion: set[str]) -> None:
        ctx = self._context
        if self.is_delete_topic_enabled:
            ctx.queue_topic_deletion(topics_to_be_deleted)
            ctx.topics_ineligible_for_deletion |= topics_ineligible_for_deletion & ctx.topics_to_be_deleted
        else:
            self._client.delete_topic_deletions(sorted(topics_to_be_deleted), ctx.epoch_zk_version)

    def try_topic_deletion(self) -> None:
        if self.is_delete_topic_enabled:
            self._resume_deletions()

    def enqueue_topics_for_deletion(self, topics: set[str]) -> None:
        if self.is_delete_topic_enabled:
            self._context.queue_topic_deletion(topics)
            self._resume_deletions()

    def resume_deletion_for_topics(self, topics: Iterable[str]) -> None:
        if self.is_delete_topic_enabled:
            resume = set(topics) & self._context.topics_to_be_deleted
            if resume:
                self._context.topics_ineligible_for_deletion -= resume
                self._resume_deletions()

    def fail_replica_deletion(self, replicas: Iterable[PartitionAndReplica]) -> None:
        if self.is_delete_topic_enabled:
            failed = [r for r in replicas if self.is_topic_queued_up_for_deletion(r.topic)]
            if failed:
                self._replicas.handle_state_changes(failed, R.ReplicaDeletionIneligible)
                self.mark_topic_ineligible_for_deletion({r.topic for r in failed}, "replica deletion failure")
                self._resume_deletions()

    def complete_replica_deletion(self, replicas: Iterable[PartitionAndReplica]) -> None:
        deleted = [r for r in replicas if self.is_topic_queued_up_for_deletion(r.topic)]
        self._replicas.handle_state_changes(deleted, R.ReplicaDeletionSuccessful)
        self._resume_deletions()

    def mark_topic_ineligible_for_deletion(self, topics: set[str], reason: str) -> None:
        if self.is_delete_topic_enabled:
            halted = self._context.topics_to_be_deleted & topics
            self._context.topics_ineligible_for_deletion |= halted
            if halted:
                log.info("Halted deletion of topics %s due to %s", sorted(halted), reason)

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        return self.is_delete_topic_enabled and self._context.is_topic_queued_up_for_deletion(topic)

    def _is_topic_ineligible_for_deletion(self, topic: str) -> bool:
        return not self.is_delete_topic_enabled or topic in self._context.topics_ineligible_for_deletion

    def _is_topic_deletion_in_progress(self, topic: str) -> bool:
        return self.is_delete_topic_enabled and self._context.is_any_replica_in_state(topic, R.ReplicaDeletionStarted)

    def _is_topic_eligible_for_deletion(self, topic: str) -> bool:
        return (self._context.is_topic_queued_up_for_deletion(topic) and not self._is_topic_deletion_in_progress(topic)
                and not self._is_topic_ineligible_for_deletion(topic))

    def _resume_deletions(self) -> None:
        ctx = self._context
        retry: set[str] = set()
        eligible: set[str] = set()
        for topic in sorted(ctx.topics_to_be_deleted):
            if ctx.are_all_replicas_in_state(topic, R.ReplicaDeletionSuccessful):
                self._complete_delete_topic(topic)
                log.info("Deletion of topic %s successfully completed", topic)
            elif not ctx.is_any_replica_in_state(topic, R.ReplicaDeletionStarted):  # noqa: SIM102 - nested as in Kafka
                if ctx.is_any_replica_in_state(topic, R.ReplicaDeletionIneligible):
                    retry.add(topic)
            if self._is_topic_eligible_for_deletion(topic):
                eligible.add(topic)
        if retry:
            self._retry_deletion_for_ineligible_replicas(retry)
        if eligible:
            self._on_topic_deletion(eligible)

    def _retry_deletion_for_ineligible_replicas(self, topics: set[str]) -> None:
        # The topics stay ineligible (kafka@2.6.x:core/src/main/scala/kafka/controller/
        # TopicDeletionManager.scala `retryDeletionForIneligibleReplicas`, lines 232-237).
        failed = [r for t in sorted(topics) for r in self._context.replicas_in_state(t, R.ReplicaDeletionIneligible)]
        self._replicas.handle_state_changes(failed, R.OfflineReplica)

    def _complete_delete_topic(self, topic: str) -> None:
        ctx = self._context
        # "deregister partition change listener on the deleted topic" (TopicDeletionManager.scala line 242)
        self._client.mute_partition_modifications(topic)
        successful = ctx.replicas_in_state(topic, R.ReplicaDeletionSuccessful)
        self._replicas.handle_state_changes(successful, R.NonExistentReplica)
        # kafka@2.6.x:core/src/main/scala/kafka/controller/TopicDeletionManager.scala
        # `completeDeleteTopic` (lines 239-250): the deletion bookkeeping goes first, then the
        # fenced delete, then `removeTopic` (assignment, leadership); the ineligibility and the
        # reassignments stay. The partition states are dropped: they are NonExistentPartition by
        # now, which is what a missing entry reads.
        ctx.topics_to_be_deleted.discard(topic)
        ctx.topics_with_deletion_started.discard(topic)
        self._client.delete_topic(topic, ctx.epoch_zk_version)
        for tp in ctx.partitions_for_topic(topic):
            ctx.partition_states.pop(tp, None)
        ctx.remove_topic(topic)

    def _on_topic_deletion(self, topics: set[str]) -> None:
        ctx = self._context
        unseen = topics - ctx.topics_with_deletion_started
        if unseen:
            partitions = [tp for t in sorted(unseen) for tp in ctx.partitions_for_topic(t)]
            self._partitions.handle_state_changes(partitions, P.OfflinePartition)
            self._partitions.handle_state_changes(partitions, P.NonExistentPartition)
            ctx.begin_topic_deletion(unseen)
        # UpdateMetadata (leader -2) so that brokers stop serving the topics
        self._client.send_metadata_update([tp for t in sorted(topics) for tp in ctx.partitions_for_topic(t)])
        self._on_partition_deletion(topics)

    def _on_partition_deletion(self, topics: set[str]) -> None:
        ctx = self._context
        dead: list[PartitionAndReplica] = []
        retry: list[PartitionAndReplica] = []
        ineligible: set[str] = set()
        for topic in sorted(topics):
            replicas = ctx.replicas_for_topic(topic)
            alive = [r for r in replicas if ctx.is_replica_online(r.replica, r.topic_partition)]
            dead_here = [r for r in replicas if not ctx.is_replica_online(r.replica, r.topic_partition)]
            retry += [r for r in alive if ctx.replica_state(r) is not R.ReplicaDeletionSuccessful]
            dead += dead_here
            if dead_here:
                ineligible.add(topic)
        self._replicas.handle_state_changes(dead, R.ReplicaDeletionIneligible)
        self._replicas.handle_state_changes(retry, R.OfflineReplica)
        self._replicas.handle_state_changes(retry, R.ReplicaDeletionStarted)
        if ineligible:
            self.mark_topic_ineligible_for_deletion(ineligible, "offline replicas")
