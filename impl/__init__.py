"""kcm.impl: the reference implementation of the controller, in Kafka's own architecture."""
