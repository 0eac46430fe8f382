"""Topic deletion, as the controller's TopicDeletionManager runs it.

kafka@2.6.x:core/src/main/scala/kafka/controller/TopicDeletionManager.scala. A topic queued for deletion
(`/admin/delete_topics/<t>`) is ineligible while one of its replicas is on a dead broker or one of its
partitions is being reassigned. Deletion moves the partitions Offline -> NonExistent, then every live
replica Offline -> DeletionStarted (StopReplica(delete=true)); the responses move replicas to
DeletionSuccessful or DeletionIneligible. When no replica is DeletionStarted and some are Ineligible,
those go back to Offline; the topic stays ineligible (Kafka never clears that mark on a retry), so the
deletion is retried only once a broker holding one of its replicas starts, a reassignment of it completes,
or a new controller takes over. When all are Successful: NonExistent, and the topic's znodes are deleted.
"""

from __future__ import annotations

from kcm.model.cluster import NO_ZNODE, Event, EventKind, Watch, partition_watch, topic_watch
from kcm.model.controller_protocol import ControllerBase
from kcm.model.states import PartitionState as P
from kcm.model.states import ReplicaState as R


class TopicDeletionMixin(ControllerBase):
    """Mixed into `kcm.model.controller.Controller`; `delete.topic.enable` is true (the 1.0+ default)."""

    def replicas_of_topic(self, t: int) -> list[tuple[int, int]]:
        return [(p, b) for p in self.w.partitions_of_topic(t) for b in self.assignment[p]]

    def _replicas_in_state(self, t: int, state: R) -> list[tuple[int, int]]:
        return [(p, b) for p, b in self.replicas_of_topic(t) if self.replica_states[p][b] is state]

    def init_topic_deletion(self, to_delete: int, ineligible: int) -> None:
        """`TopicDeletionManager.init`."""
        self.topics_to_delete = to_delete
        self.topics_ineligible = ineligible & to_delete

    def enqueue_topics_for_deletion(self, topics: int) -> None:
        self.topics_to_delete |= topics
        self.resume_deletions()

    def mark_topic_ineligible_for_deletion(self, topics: int) -> None:
        self.topics_ineligible |= topics & self.topics_to_delete

    def resume_deletion_for_topics(self, topics: int) -> None:
        resume = topics & self.topics_to_delete
        if resume:
            self.topics_ineligible &= ~resume
            self.resume_deletions()

    def try_topic_deletion(self) -> None:
        self.resume_deletions()

    def is_topic_deletion_in_progress(self, t: int) -> bool:
        return bool(self._replicas_in_state(t, R.ReplicaDeletionStarted))

    def is_topic_eligible_for_deletion(self, t: int) -> bool:
        return (bool(self.topics_to_delete >> t & 1) and not self.is_topic_deletion_in_progress(t)
                and not self.topics_ineligible >> t & 1)

    def resume_deletions(self) -> None:
        """`resumeDeletions`: complete, retry, or start the deletion of every queued topic."""
        retry = 0
        eligible = 0
        for t in range(self.w.cfg.topics):
            if not self.topics_to_delete >> t & 1:
                continue
            replicas = self.replicas_of_topic(t)
            # `areAllReplicasInState` is a `forall`: true for a topic with no replica left (one that a
            # TopicChange made this controller forget, ControllerContext.scala lines 320-322)
            if all(self.replica_states[p][b] is R.ReplicaDeletionSuccessful for p, b in replicas):
                self.complete_delete_topic(t)
            elif not self._replicas_in_state(t, R.ReplicaDeletionStarted):  # noqa: SIM102 - nested as in Kafka
                if self._replicas_in_state(t, R.ReplicaDeletionIneligible):
                    retry |= 1 << t
            if self.is_topic_eligible_for_deletion(t):
                eligible |= 1 << t
        if retry:
            self.retry_deletion_for_ineligible_replicas(retry)
        if eligible:
            self.on_topic_deletion(eligible)

    def retry_deletion_for_ineligible_replicas(self, topics: int) -> None:
        """`retryDeletionForIneligibleReplicas`: the Ineligible replicas go back to OfflineReplica.
        The topics stay in `topicsIneligibleForDeletion` (kafka@2.6.x:core/src/main/scala/kafka/
        controller/TopicDeletionManager.scala `retryDeletionForIneligibleReplicas`, lines 232-237):
        only `resumeDeletionForTopics` (a broker holding a replica starts, a reassignment completes)
        and a new controller's `TopicDeletionManager.init` make them eligible again."""
        failed = [r for t in range(self.w.cfg.topics) if topics >> t & 1
                  for r in self._replicas_in_state(t, R.ReplicaDeletionIneligible)]
        self.handle_replica_state_changes(failed, R.OfflineReplica)

    def _partitions_for_topic(self, t: int) -> list[int]:
        """`controllerContext.partitionsForTopic(topic)`: the topic's partitions with an assignment
        in the context, so not the partitions a config leaves to be added and nobody has added yet
        (kafka@2.6.x:core/src/main/scala/kafka/controller/ControllerContext.scala lines 232-236).
        A topic the context has forgotten altogether (`removeTopic` through TopicChange) keeps all
        its partitions here, as the model has always had it (Kafka would name none)."""
        ps = self.w.partitions_of_topic(t)
        if not any(self.assignment[p] for p in ps):
            return list(ps)
        return [p for p in ps if self.assignment[p]]

    def on_topic_deletion(self, topics: int) -> None:
        unseen = topics & ~self.topics_deletion_started
        if unseen:
            partitions = [p for t in range(self.w.cfg.topics) if unseen >> t & 1 for p in self._partitions_for_topic(t)]
            self.handle_partition_state_changes(partitions, P.OfflinePartition)
            self.handle_partition_state_changes(partitions, P.NonExistentPartition)
            self.topics_deletion_started |= unseen
        # UpdateMetadata so that brokers stop serving the topics (leader -2, LeaderDuringDelete)
        self.send_update_metadata(self.live_brokers())
        self.on_partition_deletion(topics)

    def on_partition_deletion(self, topics: int) -> None:
        dead: list[tuple[int, int]] = []
        retry: list[tuple[int, int]] = []
        ineligible = 0
        for t in range(self.w.cfg.topics):
            if not topics >> t & 1:
                continue
            replicas = self.replicas_of_topic(t)
            alive = [(p, b) for p, b in replicas if self.is_replica_online(b, p)]
            dead_t = [(p, b) for p, b in replicas if not self.is_replica_online(b, p)]
            retry += [(p, b) for p, b in alive if self.replica_states[p][b] is not R.ReplicaDeletionSuccessful]
            dead += dead_t
            if dead_t:
                ineligible |= 1 << t
        self.handle_replica_state_changes(dead, R.ReplicaDeletionIneligible)
        self.handle_replica_state_changes(retry, R.OfflineReplica)
        self.handle_replica_state_changes(retry, R.ReplicaDeletionStarted)
        if ineligible:
            self.mark_topic_ineligible_for_deletion(ineligible)

    def complete_replica_deletion(self, replicas: list[tuple[int, int]]) -> None:
        self.handle_replica_state_changes(replicas, R.ReplicaDeletionSuccessful)
        self.resume_deletions()

    def fail_replica_deletion(self, replicas: list[tuple[int, int]]) -> None:
        failed = [(p, b) for p, b in replicas if self.is_topic_queued_for_deletion(self.w.topic_of(p))]
        if failed:
            topics = 0
            for p, _ in failed:
                topics |= 1 << self.w.topic_of(p)
            self.handle_replica_state_changes(failed, R.ReplicaDeletionIneligible)
            self.mark_topic_ineligible_for_deletion(topics)
            self.resume_deletions()

    def complete_delete_topic(self, t: int) -> None:
        """`completeDeleteTopic`: replicas -> NonExistent; delete the topic's znodes (fenced); forget
        it (`removeTopic`, which keeps its ineligibility and its partitions' reassignments)."""
        successful = self._replicas_in_state(t, R.ReplicaDeletionSuccessful)
        self.handle_replica_state_changes(successful, R.NonExistentReplica)
        # `topicsToBeDeleted -= topic`, `topicsWithDeletionStarted -= topic`, before the fenced write
        # (kafka@2.6.x:core/src/main/scala/kafka/controller/TopicDeletionManager.scala
        # `completeDeleteTopic`, lines 239-250)
        self.topics_to_delete &= ~(1 << t)
        self.topics_deletion_started &= ~(1 << t)
        w = self.w
        # `client.mutePartitionModifications(topic)`: the topic's PartitionModificationsHandler is
        # unregistered (TopicDeletionManager.scala line 242)
        w.disarm(self.me, topic_watch(t))
        w.check_epoch(self.me, self.epoch)
        self.mark_zk_write()
        zk = w.zk
        assignment, adding, removing, partitions = (
            list(zk.assignment), list(zk.adding), list(zk.removing), list(zk.partitions))
        for p in w.partitions_of_topic(t):
            assignment[p] = adding[p] = removing[p] = ()
            partitions[p] = NO_ZNODE
        w.zk = zk._replace(assignment=tuple(assignment), adding=tuple(adding), removing=tuple(removing),
                           partitions=tuple(partitions),
                           delete_topics=zk.delete_topics & ~(1 << t),
                           unclean_topics=zk.unclean_topics & ~(1 << t))  # `deleteTopicConfigs`
        for p in w.partitions_of_topic(t):
            if zk.partitions[p] != NO_ZNODE:
                w.fire(partition_watch(p), None)  # deleted: the data-change handler hears nothing
        # deleting a znode that is already gone (a topic this controller completed vacuously after
        # a TopicChange made it forget it) fires no watch
        if any(zk.assignment[p] for p in w.partitions_of_topic(t)):
            w.fire(Watch.TOPICS, Event(EventKind.TopicChange))
            w.fire_topic(t, deleted=True)
        if zk.delete_topics >> t & 1:
            w.fire(Watch.DELETE_TOPICS, Event(EventKind.TopicDeletion))
        # then `controllerContext.removeTopic(topic)` (allTopics, partitionAssignments,
        # partitionLeadershipInfo): ControllerContext.scala `removeTopic`, lines 283-290.
        # Neither clears `topicsIneligibleForDeletion` nor `partitionsBeingReassigned`: a topic that
        # was marked ineligible (e.g. a replica on a broker that died after its deletion succeeded)
        # stays so in this controller's context, and so does a partition being reassigned, until
        # `resumeDeletionForTopics`, the end of the reassignment, or the controller's resignation.
        self.remove_topic(t)

    def delete_topic_deletion_znodes(self, topics: int) -> None:
        """`deleteTopicDeletions`: drop `/admin/delete_topics/<t>` for topics that do not exist (fenced)."""
        w = self.w
        w.check_epoch(self.me, self.epoch)
        self.mark_zk_write()
        w.zk = w.zk._replace(delete_topics=w.zk.delete_topics & ~topics)
        w.fire(Watch.DELETE_TOPICS, Event(EventKind.TopicDeletion))

