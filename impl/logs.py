"""Logging for `kcm.impl`: Kafka's log lines (controller.log, state-change.log) as Python loggers.

The implementation logs what Kafka logs, at Kafka's levels (an invalid state transition is an
ERROR in Kafka's state-change log). As a library it must not print unless the application
configures logging, so the package logger gets a `NullHandler` (Python's logging HOWTO, "Configuring
Logging for a Library"); `kcm simulate` shows the story through the `Timeline` instead.
"""

from __future__ import annotations

import logging

logging.getLogger("kcm.impl").addHandler(logging.NullHandler())


def get_logger(name: str) -> logging.Logger:
    return logging.getLogger(name)
