"""A quiet Spark session for the explorer: `spark_session(master="local[*]", ...)`.

Defaults, and why:

- `local[*]`: the embedded mode, one JVM, every core; any master URL works (`local[2]`,
  `spark://host:7077`, `yarn`, `k8s://...`). Under `spark-submit` the default is its `--master`,
  and the JVM settings below come from its command line instead.
- No web UI and no console progress bar: the explorer prints TLC's progress line per level, and
  a bar redrawn on the same terminal would garble it (`spark_progress=True` brings it back).
- WARN logs only, through a log4j2 configuration written at start-up and given to the driver
  JVM (`-Dlog4j2.configurationFile`): Spark's default profile logs INFO lines and a banner.
  Hadoop's "native library" warning is silenced; real warnings (a lost executor, a retried task)
  still show. The JVM's own "Using incubator modules" line cannot be configured away.
- Executors run this interpreter (`PYSPARK_PYTHON` and `spark.pyspark.python` default to
  `sys.executable`), so they import the same `kcm` as the driver; `python_path` adds folders to
  the executors' `PYTHONPATH` (for a model factory outside installed packages, such as the test toys).
- A checkpoint folder is always set (`checkpoint_dir`, else a temporary one removed at exit):
  the explorer cuts lineage with reliable checkpoints. On a cluster it must be shared storage.
- In local mode Spark binds to the loopback address (`SPARK_LOCAL_IP=127.0.0.1` unless set), which
  avoids its "hostname resolves to a loopback address" warning.

Memory (`driver_memory`, and `spark.executor.memory` through `conf`) must be set before the JVM
starts: PySpark starts one JVM per Python process and keeps it after `stop()`, so a later session
in the same process keeps the first one's driver settings. `getOrCreate` also returns an active
session as it is; stop it first to change the master.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

_LOG4J2 = """\
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
logger.nativecode.name = org.apache.hadoop.util.NativeCodeLoader
logger.nativecode.level = error
"""


def _temporary_dir(prefix: str) -> str:
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, True)
    return path


def log4j2_file(level: str = "WARN", folder: str | None = None) -> Path:
    """A log4j2 properties file logging `level` and above to stderr."""
    path = Path(folder or _temporary_dir("kcm-log4j2-")) / "log4j2.properties"
    path.write_text(_LOG4J2.format(level=level.lower()), encoding="utf-8")
    return path


def _is_loopback(master: str) -> bool:
    return master.startswith("local") or "://127.0.0.1" in master or "://localhost" in master


def spark_session(
    master: str | None = None,
    *,
    app_name: str = "kcm",
    checkpoint_dir: str | None = None,
    log_level: str = "WARN",
    spark_progress: bool = False,
    python_path: Sequence[str | os.PathLike] = (),
    driver_memory: str | None = None,
    conf: Mapping[str, str] | None = None,
):
    """A `SparkSession` set up as the module docstring says; `conf` entries are applied last.

    `master=None` takes spark-submit's `--master` when run under spark-submit, else `local[*]`.
    """
    from pyspark.sql import SparkSession

    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # spark-submit started the JVM already
    if master is None and not submitted:
        master = "local[*]"
    if master is not None and _is_loopback(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # PySpark reads the executors' interpreter from the environment when the context starts
    # (`spark.pyspark.python` only reaches spark-submit's own launches).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    extra = dict(conf or {})
    builder = (
        SparkSession.builder.appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", str(spark_progress).lower())
    )
    if master is not None:
        builder = builder.master(master)
    if not submitted:  # under spark-submit the JVM runs already: these come from its command line
        java_options = f"-Dlog4j2.configurationFile=file:{log4j2_file(log_level)}"
        if "spark.driver.extraJavaOptions" in extra:
            java_options += " " + extra.pop("spark.driver.extraJavaOptions")
        builder = (builder.config("spark.driver.extraJavaOptions", java_options)
                   .config("spark.pyspark.python", os.environ["PYSPARK_PYTHON"])
                   .config("spark.pyspark.driver.python", sys.executable))
    if python_path:
        paths = [str(Path(p).resolve()) for p in python_path]
        builder = builder.config("spark.executorEnv.PYTHONPATH", os.pathsep.join(paths))
    if driver_memory:
        builder = builder.config("spark.driver.memory", driver_memory)
    for key, value in extra.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(log_level.upper())
    spark.sparkContext.setCheckpointDir(checkpoint_dir or _temporary_dir("kcm-spark-checkpoints-"))
    return spark
