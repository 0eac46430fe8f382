"""kcm.model: the formal model of the Kafka 2.6 ZooKeeper-mode controller.

Pure functions over immutable values, standard library only, no I/O. `states` and `tables` declare
the two state machines once; `election` holds Kafka's leader-election algorithms and their wrappers.
"""
