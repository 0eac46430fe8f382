"""The Kafka release whose controller the model pins.

Every rule of the model cites that release's source (`kafka@2.6.x:path`), and the violations and
loops the model lists as known are its behaviour ("known Kafka 2.6 behaviour"). The reports of
every run record it beside kcm's own version.
"""

KAFKA_VERSION = "2.6"
