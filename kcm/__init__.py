"""kcm: a formal model, a reference implementation and a model checker of the Kafka ZooKeeper-era controller.

Sub-packages: `kcm.model` (the formal model, pure and stdlib-only, with its checker adapters in
`kcm.model.checking`), `kcm.impl` (the reference implementation), `kcm.checker.engine` (the
generic checking engine: explorers, liveness, traces, replay, reports; it knows no Kafka), the
Kafka checking tools beside it in `kcm.checker` (proofs, fuzzing, mutation testing, the reviewer's
page), `kcm.spark_explore` (exploration on Spark). `kcm.cli` is the thin command-line shell around
them; the layers import downwards only (`tests/test_layering.py`).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kafka-controller-model")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"

# The model and the explorer compiled with Cython, where a build is up to date with the sources
# (kcm/compiled.py); before any kcm.model import, in every process (Spark's workers too).
from kcm import compiled as _compiled  # noqa: E402

_compiled.install()

from kcm.model.release import KAFKA_VERSION  # noqa: E402

#: What every report of a run records about the tool and the system it models.
VERSIONS = {"kcm_version": __version__, "kafka_version": KAFKA_VERSION}
