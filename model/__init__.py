"""kcm.model: the formal model of the Kafka 2.6 ZooKeeper-mode controller.

Pure functions over immutable values, standard library only, no I/O. `states` and `tables` declare
the two state machines once; `election` holds Kafka's leader-election algorithms and their wrappers.
"""

#: The Kafka release whose controller the model pins: every rule cites that release's source
#: (`kafka@2.6.x:path`), and the violations and loops the model lists as known are its behaviour
#: ("known Kafka 2.6 behaviour").
KAFKA_VERSION = "2.6"
