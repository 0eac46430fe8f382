"""Exploring a config from the command line: the shared part of `kcm explore` and `kcm check`.

It builds the model, runs the explorer with a progress display, writes every counterexample
(readable text, ITF, sequence diagram, replay script) and the reports, and prints TLC's summary
with the coverage. The printing goes through one rich console; progress goes to stderr so that
stdout stays a clean log.

Every command that checks something (`check`, `explore`, `fuzz`, `prove`) ends with the same short
summary (`print_summary`): the verdict, what ran, the counts of the outcomes, each violation and
known Kafka 2.6 behaviour with its trace file, and where the reports are. With `--quiet` it is all
that is printed on stdout (`quiet_console`): no progress lines, no detail of each phase; errors
still go to stderr.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import textwrap
import threading
import time
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from kcm import config
from kcm.checker import html_report
from kcm.checker.engine.errors import (
    EXIT_PASS,
    EXIT_VIOLATION,
    UsageError,
    check_writable_dir,
    check_writable_file,
    write_or_fail,
)
from kcm.checker.engine.liveness import LIVENESS_PROPERTIES, check_liveness
from kcm.checker.engine.model_spec import ModelSpec
from kcm.checker.engine.result import KNOWN, NOT_MET, VIOLATED, VIOLATION, CheckResult
from kcm.checker.engine.runs import explore_runs
from kcm.checker.engine.traces import file_stem as stem_of  # the name a counterexample's files get
from kcm.checker.engine.traces import write_counterexample
from kcm.model.checking.epoch_quotient import EpochQuotientModel
from kcm.model.checking.kafka_model import KafkaModel, config_fields
from kcm.model.checking.reach import reach_lines
from kcm.model.config import ConfigError, ModelConfig
from kcm.model.variants import ALL_VARIANTS
from kcm.net import refusal

#: What traces name to replay through: the Kafka model of a config given as plain fields.
MODEL_FACTORY = "kcm.model.checking.kafka_model:model_for"
#: What `--liveness` traces name: the model explored modulo controller epochs.
QUOTIENT_MODEL_FACTORY = "kcm.model.checking.epoch_quotient:quotient_model_for"


def trace_spec(cfg: ModelConfig, *, symmetry: bool = True, liveness: bool = False) -> ModelSpec:
    """The model a trace of `cfg` names for its replay (`#meta.model_factory`, `model_args`)."""
    if liveness:
        return ModelSpec.of(QUOTIENT_MODEL_FACTORY, **config_fields(cfg))
    return ModelSpec.of(MODEL_FACTORY, symmetry=symmetry, **config_fields(cfg))


def with_variant(cfg: ModelConfig, variant: str | None) -> ModelConfig:
    """`cfg` with `variant` (a name from `kcm variants`, or its JIRA key) switched on."""
    if not variant:
        return cfg
    try:
        return ModelConfig.from_mapping({**config_fields(cfg), "variant": variant_name(variant)}, where="--variant")
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def variant_name(variant: str) -> str:
    """The variant's name (V1 ... V13) for its name or JIRA key, or `UsageError`."""
    by_jira = {v.jira: v.name for v in ALL_VARIANTS.values() if v.jira != "synthetic"}
    key = by_jira.get(variant.upper(), variant.upper())
    if key not in ALL_VARIANTS:
        raise UsageError(f"unknown variant '{variant}'; choose one of {', '.join(ALL_VARIANTS)} (see 'kcm variants')")
    return key


def variant_preset(variant: str) -> str:
    """The preset shipped for `variant` (its name or JIRA key), where it is found quickly."""
    return ALL_VARIANTS[variant_name(variant)].preset


#: What `--variant` means, the same in every command that takes it.
VARIANT_HELP = ("A historical bug to put back (see `kcm variants`); runs on the variant's own preset unless "
                "--preset or --config is given.")


def load_config(preset: str | None, config_file, variant: str | None) -> tuple[str, str, ModelConfig]:
    """The config a command runs on: its name, a label for headers ("preset v3", "config x.toml")
    and the config with `variant` switched on. `--variant` alone selects the variant's preset."""
    if variant and not preset and not config_file:
        preset = variant_preset(variant)
    name, cfg = config.load(preset, config_file)
    label = f"config {name}" if config_file else f"preset {name}"
    return name, label, with_variant(cfg, variant)


def symmetry_text(cfg: ModelConfig, symmetry: bool) -> str:
    """The header's word on symmetry: only a model with a symmetry group can have it on or off,
    and with it on, which runs it reduces (model/checking/reduced_runs.py)."""
    model = KafkaModel(cfg)
    if not model.has_symmetry:
        return "no symmetry (a single broker)"
    if not symmetry:
        return "symmetry off"
    runs = sorted({s.scenario for s in model.init_states()})
    reduced = [r for r in runs if r in model.reduced_runs]
    if len(reduced) == len(runs):
        return "symmetry on"
    if not reduced:
        return "symmetry on (one initial state per orbit, no run reduced)"
    others = [r for r in runs if r not in reduced]
    return (f"symmetry on (run{'s' * (len(reduced) > 1)} {', '.join(map(str, reduced))} reduced; "
            f"run{'s' * (len(others) > 1)} {', '.join(map(str, others))} from one initial state per orbit)")


ENGINES = ("local", "spark")


def check_outputs(out: Path, json_file: Path | None, junit_file: Path | None, cfg: ModelConfig | None = None,
                  *, page: bool = True) -> None:
    """Every output place is checked before any work starts: a run that finishes and then cannot
    write its verdict would read, to CI, as a crash. That is the folder, each report (two of which
    may not name one file; `page`: the run writes `report.html` too) and, given the config, each
    counterexample file the run may write."""
    check_writable_dir(out)
    check_writable_file(json_file, "--json")
    check_writable_file(junit_file, "--junit")
    places = report_places(out, json_file, junit_file)[:None if page else 2]
    seen: dict[Path, str] = {}
    for path, option, what in places:
        key, named = path.absolute().resolve(), f"the {what} ({path if option == '--out' else f'{option} {path}'})"
        if key in seen:
            raise UsageError(f"{seen[key]} and {named} are one file; each report needs its own")
        seen[key] = named
    for path, option in [(p, o) for p, o, _ in places] + [(p, "--out") for p in counterexample_places(out, cfg)]:
        if path.is_dir():
            raise UsageError(f"{option} {out if option == '--out' else path}: {path} is a directory, where the run "
                             "writes a file")
        if path.exists():
            _probe_write(path, option)


def report_places(out: Path, json_file: Path | None, junit_file: Path | None) -> list[tuple[Path, str, str]]:
    """The reports a run writes, each with the option that names its place and what it is: the
    JSON report, JUnit XML and `report.html` beside the JSON report."""
    json_path = json_file or out / "report.json"
    json_option = "--json" if json_file else "--out"
    return [(json_path, json_option, "JSON report"),
            (junit_file or out / "junit.xml", "--junit" if junit_file else "--out", "JUnit XML"),
            (json_path.parent / "report.html", json_option, "report page")]


def counterexample_places(out: Path, cfg: ModelConfig | None) -> list[Path]:
    """Every file a counterexample of `cfg` (or a known Kafka 2.6 behaviour's trace) may be written
    to (`kcm.checker.engine.traces.write_counterexample`)."""
    if cfg is None:
        return []
    model = KafkaModel(cfg)
    names = [p.name for p in model.properties()] + ["deadlock", *LIVENESS_PROPERTIES]
    names += [f"known_{n}" for n in names] + [f"known_{k.name}" for k in model.known_loops()]
    stems = {stem_of(n) for n in names}
    return [out / name for stem in sorted(stems)
            for name in (f"{stem}.itf.json", f"{stem}.txt", f"{stem}.dot", f"replay_{stem}.py")]


def _probe_write(path: Path, option: str) -> None:
    """An existing output file is opened for appending and given an empty write, which changes
    nothing yet fails as the real write would: a device that is full (/dev/full), a read-only file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
        try:
            os.write(fd, b"")
        finally:
            os.close(fd)
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write there ({exc.strerror or exc.__class__.__name__})") from None


QUIET_HELP = "Print only the short summary at the end (no progress lines, no detail of each phase)."


def quiet_console(quiet: bool) -> Console:
    """The console of a command's detail: silent with `--quiet` (the summary has its own)."""
    return Console(highlight=False, soft_wrap=True, quiet=quiet)


def write_reports(doc: dict, result: CheckResult | None, proofs, *, name: str, out: Path,
                  json_file: Path | None, junit_file: Path | None, cfg: ModelConfig | None = None,
                  trace_files: dict[str, str] | None = None, junit_xml=None) -> tuple[Path, Path]:
    """The JSON report and JUnit XML (default OUT/report.json, OUT/junit.xml), and the reviewer's
    page `report.html` beside the JSON report when the run explored `cfg`; returns the JSON and
    JUnit paths. `junit_xml` is the JUnit tree, by default the one of `result` and `proofs`."""
    from kcm.checker.engine import report

    json_path, junit_path = json_file or out / "report.json", junit_file or out / "junit.xml"
    tree = junit_xml if junit_xml is not None else report.junit(result, proofs, preset=name,
                                                                 reason=doc.get("reason", ""))
    writes = [(lambda: report.write_json(doc, json_path), json_path, "--json" if json_file else "--out"),
              (lambda: report.write_junit(tree, junit_path), junit_path, "--junit" if junit_file else "--out")]
    if cfg is not None:
        html_path = json_path.parent / "report.html"
        writes.append((lambda: html_report.write(html_path, reviewer_page(doc, result, cfg, trace_files or {})),
                       html_path, "--json" if json_file else "--out"))
    failures = []
    for write, path, option in writes:   # one report that cannot be written loses none of the others
        try:
            write_or_fail(write, path, option)
        except UsageError as exc:
            failures.append(exc)
    if failures:
        raise failures[0]
    return json_path, junit_path


def summary_lines(doc: dict, command: str, label: str, reports: list[Path], extra: tuple[str, ...] = ()) -> list[str]:
    """The short summary a command ends with, from its JSON report `doc` (so that it says what the
    reports say): the verdict and the config, the states explored, the outcomes counted, the
    proofs, the `extra` lines, each violation and each known Kafka 2.6 behaviour with its trace
    file, the reports."""
    head = f"{doc['verdict'].upper()} · kcm {command} · {label}"
    if doc.get("variant"):
        head += f" · variant {doc['variant']}"
    if doc.get("reason"):
        head += f" · incomplete: {doc['reason']}"
    lines = [head]
    if doc.get("engine"):
        lines.append(f"  {doc['distinct_states']:,} distinct states, {doc['generated_states']:,} generated, "
                     f"depth {doc['depth']}")
    if doc.get("summary"):
        lines.append(f"  {doc['summary']}")
    proofs = doc.get("proofs") or []
    if proofs and command != "prove":   # `kcm prove`'s summary counts them already
        proved = sum(p["result"] == "proved" for p in proofs)
        failed = sum(p["result"] == "failed" for p in proofs)
        lines.append(f"  {proved} of {len(proofs)} proofs proved" + (f", {failed} failed" if failed else "")
                     + (f", {len(proofs) - proved - failed} timed out" if len(proofs) - proved - failed else ""))
    lines += [f"  {line}" for line in extra]
    for o in doc.get("outcomes", []):
        if o["status"] in (VIOLATED, NOT_MET, KNOWN):
            trace = f": {o['trace_file']}" if o.get("trace_file") else ""
            lines.append(f"  {o['name']}: {o['text']}{trace}")
    lines.append("  reports: " + ", ".join(str(p) for p in reports))
    return lines


def print_summary(lines: list[str], quiet: bool = False) -> None:
    """The summary on stdout, whatever `--quiet` says; after the detail, a blank line sets it apart."""
    console = Console(highlight=False, soft_wrap=True)
    colour = {"PASS": "green", "VIOLATION": "red"}.get(lines[0].split(" ", 1)[0], "yellow")
    if not quiet:
        console.print()
    console.print(f"[bold {colour}]{lines[0]}[/bold {colour}]")
    for line in lines[1:]:
        console.print(line, markup=False)


def reviewer_page(doc: dict, result: CheckResult | None, cfg: ModelConfig, trace_files: dict[str, str]) -> str:
    """`report.html` for one run (`kcm.checker.html_report`)."""
    from kcm.checker.engine.contract import Sometimes
    from kcm.checker.engine.itf import read_itf

    model = KafkaModel(cfg)
    checked = set(result.checked) if result is not None else set()
    properties = {p.name: (getattr(p, "kind", "safety"), p.doc) for p in model.properties()
                  if p.name in checked and not isinstance(p, Sometimes)}
    if "deadlock" in checked:
        properties["deadlock"] = ("deadlock", "every state without successors is a legal (quiescent) end state")
    traces = {}
    for prop, path in trace_files.items():
        try:
            traces[prop] = read_itf(path)
        except Exception:  # the page shows what it can; the ITF file is named in report.json
            continue
    # The known Kafka 2.6 violations, where the checker reports them (the report's `known_violations`
    # entries, else the result's); a checker without them gives an empty list.
    known = doc.get("known_violations") or (getattr(result, "known_violations", None) if result else None) or ()
    raw = getattr(result.coverage, "edge_counts", None) if result is not None else None
    counts = {tuple(str(x) for x in edge): n for edge, n in (raw or {}).items() if isinstance(edge, tuple)}
    return html_report.report_page(doc, properties=properties, config={"preset": doc.get("preset"),
                                                                       **config_fields(cfg)},
                                   traces=traces, complete=bool(result is not None and result.complete),
                                   edge_counts=counts, known=known)


def _print_summary(console: Console, result: CheckResult, live) -> None:
    """The run's summary: the result's lines, the liveness check's, the disjoint runs, the table coverage."""
    for line in result.summary_lines():
        console.print(line)
    if live is not None:
        for line in live.summary_lines():
            console.print(line)
    runs = result.extra.get("runs")
    if runs:
        console.print(f"{len(runs)} disjoint runs, explored apart in {result.extra['processes']} processes: "
                      + "; ".join(f"run {r['run']} {r['distinct']:,} distinct in {r['seconds']:.1f} s" for r in runs))
    cov = result.coverage
    taken = len([e for e in cov.edges_taken if e not in cov.outside_universe])
    line = (f"Table coverage: {taken} of {cov.edges_total} edges taken"
            + (f"; untaken: {', '.join(' '.join(map(str, e)) for e in cov.untaken)}" if cov.untaken else ""))
    for part in textwrap.wrap(line, 100, subsequent_indent="  ", break_on_hyphens=False):
        console.print(part)
    if cov.outside_universe:
        console.print("Invalid transitions requested (logged and skipped, as Kafka 2.6 does): "
                      + ", ".join(" ".join(map(str, e)) for e in cov.outside_universe))


def _write_traces(console: Console, model, result: CheckResult, live, out: Path, name: str, cfg: ModelConfig,
                  spec) -> dict[str, str]:
    """Write each counterexample and each known Kafka 2.6 behaviour's trace to `out`; returns
    {violated property or "known <name>": ITF file written}."""
    files: dict[str, str] = {}

    def write(trace, **meta):
        # Every trace of this run names the same config and replays through the same factory.
        return write_or_fail(lambda: write_counterexample(model, trace, out, config={"preset": name,
                                                                                     **config_fields(cfg)},
                                                          model_spec=spec, **meta), out, "--out")

    for v in result.violations:
        if v.trace is None:
            continue
        paths = write(v.trace, invariant=v.name, kind=v.kind, source=f"kcm explore {name}", loop=v.loop)
        files[v.name] = str(paths["itf"])
        shape = (f"{v.trace_length} steps" if v.loop is None else
                 f"lasso: {v.loop} steps, then a cycle of {v.trace_length - v.loop} back to state {v.loop}")
        console.print(f"  counterexample for {v.name}: {paths['text']} ({shape}), "
                      f"ITF {paths['itf']}, diagram {paths['dot']}, replay {paths.get('replay')}")
    for v in result.known_violations:
        # Kafka 2.6's own behaviour (kcm.model.catalogue.findings): written beside the others so that a
        # reviewer can read and replay it; it does not fail the verdict.
        if v.trace is None:
            continue
        paths = write(v.trace, invariant=v.name, kind=v.kind, stem=f"known_{v.name}", source=f"kcm explore {name}",
                      description=f"known Kafka 2.6 behaviour ({result.known_reasons.get(v.name, '')})")
        files[f"known {v.name}"] = str(paths["itf"])
        console.print(f"  known 2.6 behaviour {v.name} ({result.known_reasons.get(v.name, 'listed as known')}): "
                      f"{paths['text']} ({v.trace_length} steps)")
    for k in live.known if live is not None else ():
        paths = write(k.trace, invariant=f"known {k.known}", kind="liveness", stem=f"known_{k.known}",
                      source=f"kcm explore --liveness {name}", loop=k.loop,
                      description=f"known Kafka 2.6 loop {k.known} ({k.finding}), breaks {k.breaks}")
        files[f"known {k.known}"] = str(paths["itf"])
        console.print(f"  known loop {k.known} ({k.finding}): {paths['text']}")
    return files


def print_reach(console: Console, cfg: ModelConfig) -> None:
    """Before a run: what `cfg` can reach at all (which table edges and goals are possible), so
    that a config that cannot exercise a part of the controller says so before it is explored.
    Soundly: an edge or goal said to be out of reach is never taken or met
    (`kcm.model.checking.reach`; `kcm list reach` prints the same lines)."""
    for line in reach_lines(cfg):
        indent = " " * (2 + len(line) - len(line.lstrip(" ")))   # a line's own indent nests it
        for part in textwrap.wrap(line.strip(), 100, initial_indent=indent, subsequent_indent=indent + "    ",
                                  break_on_hyphens=False):
            console.print(part, highlight=False, markup=False)


def run_exploration(console: Console, name: str, cfg: ModelConfig, *, symmetry: bool = True,
                    invariants: tuple[str, ...] = (), max_depth: int | None = None,
                    out: Path | None = None, progress_every: float = 5.0, engine: str = "local",
                    master: str | None = None, checkpoint: Path | None = None,
                    resume: Path | None = None, liveness: bool = False,
                    por: bool = False, jobs: int | None = None,
                    quiet: bool = False) -> tuple[CheckResult, dict[str, str]]:
    """Explore `cfg` with the sequential explorer (`local`) or on Spark; returns the result and
    {violated property: ITF file written}.

    With `liveness` the sequential explorer keeps the explored graph, with symmetry off and
    without stopping at a safety violation (it needs the whole graph), and `kcm.checker.engine.liveness`
    checks it: its violations (lassos) join the result's, its summary is `result.extra["liveness"]`
    and the graph `result.extra["graph"]`. With `por` the sequential explorer expands ample sets
    (`kcm.checker.engine.por`). The sequential explorer explores the model's disjoint runs (the cold
    start, each overlapping run) in up to `jobs` processes (`kcm.checker.engine.runs`; default one per
    core); the liveness check explores in one. `quiet` prints no progress lines."""
    if liveness and engine == "spark":
        raise UsageError("--liveness runs on the sequential explorer only; drop --engine spark")
    if liveness:
        symmetry = False
    # Liveness explores modulo controller epochs, so that controller-move loops close into cycles
    # (kcm.model.checking.epoch_quotient); its traces replay through the same quotient model.
    model = EpochQuotientModel(cfg) if liveness else KafkaModel(cfg, symmetry=symmetry)
    spec = trace_spec(cfg, symmetry=symmetry, liveness=liveness)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    last = [0.0]

    def progress(p) -> None:
        now = time.monotonic()
        # TLC prints at most every interval, and always its final line (the whole run's average)
        if p.phase == "final" or now - last[0] >= progress_every:
            last[0] = now
            err.print(p.line())

    print_reach(console, cfg)
    started = time.perf_counter()
    safety = [n for n in invariants if n not in LIVENESS_PROPERTIES]
    options = dict(symmetry=symmetry, max_depth=max_depth,
                   properties=safety if safety or invariants else None,
                   progress=None if quiet else progress, progress_interval=progress_every)
    if liveness:
        options.update(keep_graph=True, stop_on_violation=False)
    if por:
        options.update(por=True)
    if engine == "spark":
        result = _explore_on_spark(console, cfg, symmetry, options, master, checkpoint, resume)
    else:
        if checkpoint or resume:
            raise UsageError("--checkpoint and --resume need --engine spark")
        result = explore_runs(model, jobs=jobs, **options)
    live = None
    if liveness:
        live = check_liveness(model, result.extra.get("graph"))
        result = replace(result, violations=result.violations + live.violations,
                         verdict=VIOLATION if live.violations else result.verdict,
                         checked=result.checked + LIVENESS_PROPERTIES, extra={**result.extra, "liveness": live})
    _print_summary(console, result, live)
    files = _write_traces(console, model, result, live, out, name, cfg, spec) if out is not None else {}
    console.print(f"Explored in {time.perf_counter() - started:.1f} s.")
    return result, files


#: Spark's master URL forms (SparkContext.createTaskScheduler): local, local[N|*], local[N,F],
#: local-cluster[N,C,M], spark://H:P[,H:P...], yarn, k8s://..., mesos://...
_MASTER = re.compile(r"^(local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|spark://[^/\s]+|yarn|"
                     r"k8s://\S+|mesos://\S+)$")


def check_master(master: str | None, timeout_s: float = 3.0) -> None:
    """A master URL Spark cannot parse, or a standalone master that does not answer, is one line
    before the JVM starts: Spark itself retries an unreachable master for over a minute and then
    says only "All masters are unresponsive"."""
    if master is None:
        return
    if not _MASTER.match(master):
        raise UsageError(f"--master {master!r}: not a Spark master URL (local[*], local[N], spark://HOST:PORT, "
                         "yarn, k8s://...)")
    if not master.startswith("spark://"):
        return
    errors = []
    for address in master[len("spark://"):].split(","):
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise UsageError(f"--master {master!r}: '{address}' is not HOST:PORT")
        why = refusal(host, int(port), timeout_s)
        if why is None:
            return  # one master answers: Spark can register with it
        errors.append(f"{address}: {why}")
    raise UsageError(f"--master {master}: no Spark master answers ({'; '.join(errors)})")


def start_spark(master: str | None, checkpoint: Path | None = None):
    """A quiet Spark session; a master that cannot be reached is one clear line (exit 2)."""
    from kcm.spark_explore import spark_session

    check_master(master)
    try:
        return spark_session(master, checkpoint_dir=str(checkpoint) if checkpoint else None)
    except Exception as exc:  # py4j/JVM errors have no common base class worth naming here
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"cannot start Spark with master '{master or 'local[*]'}': {first}") from None


def check_engine_options(engine: str, master: str | None, checkpoint: Path | None = None,
                         resume: Path | None = None, simulate: bool = False, jobs: int | None = None) -> None:
    """The engines' options, checked before any work starts (and before the JVM does)."""
    if jobs is not None and (engine == "spark" or simulate):
        raise UsageError("--jobs is for the sequential explorer (--engine local); Spark runs as many tasks "
                         "as its master has cores (--master local[N])")
    if engine != "spark" and not simulate:
        if checkpoint or resume:
            raise UsageError("--checkpoint and --resume need --engine spark")
        if master:
            raise UsageError("--master needs --engine spark")
        return
    check_master(master)
    if checkpoint is not None:
        check_writable_dir(checkpoint, "--checkpoint")
    if resume is not None:
        _check_resume_folder(Path(resume))


def _check_resume_folder(resume: Path) -> None:
    """A local --resume folder must hold a complete snapshot (`level-N/driver/_SUCCESS`), checked
    before Spark starts; a URI (hdfs://, s3a://) is checked by the explorer through Hadoop."""
    if "://" in str(resume):
        return
    if not resume.is_dir():
        raise UsageError(f"--resume: '{resume}' is not a checkpoint folder")
    if not any((level / "driver" / "_SUCCESS").exists() for level in resume.glob("level-*")):
        raise UsageError(f"--resume: no complete snapshot in '{resume}' to resume from")


class _Py4jNoise(logging.Filter):
    """Drops the records py4j logs on the root logger when a call is interrupted."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "py4j" not in record.pathname


@contextlib.contextmanager
def _plain_interrupts():
    """Ctrl-C (and SIGTERM, which `kcm.cli` routes through the SIGINT handler) raises a plain
    KeyboardInterrupt while Spark runs. PySpark's own handler calls `cancelAllJobs` through py4j
    from inside the interrupted py4j call, which fails and logs dozens of lines of tracebacks;
    the explorers cancel their job group themselves when they catch the interrupt."""
    noise = _Py4jNoise()
    logging.getLogger().addFilter(noise)
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler) if main else None
    try:
        yield
    finally:
        if main:   # never back to PySpark's handler: it would outlive its SparkContext
            pyspark = getattr(previous, "__module__", "") or ""
            keep = previous is not None and not pyspark.startswith("pyspark")
            signal.signal(signal.SIGINT, previous if keep else signal.default_int_handler)
        logging.getLogger().removeFilter(noise)


def _explore_on_spark(console: Console, cfg: ModelConfig, symmetry: bool, options: dict, master: str | None,
                      checkpoint: Path | None, resume: Path | None) -> CheckResult:
    from kcm.spark_explore import ModelSpec, SparkOptions, explore_spark

    if resume is not None:
        _check_resume_folder(Path(resume))
    spark = start_spark(master, checkpoint)
    try:
        with _plain_interrupts():
            console.print(f"Spark {spark.version} · master {spark.sparkContext.master} · "
                          f"parallelism {spark.sparkContext.defaultParallelism}")
            opts = SparkOptions(**options, checkpoint_dir=str(checkpoint) if checkpoint else None,
                                resume_from=str(resume) if resume else None)
            result = explore_spark(spark, ModelSpec.kafka(cfg, symmetry=symmetry), opts)
    finally:
        with _plain_interrupts():
            spark.stop()
    levels = result.extra.get("spark", {}).get("levels", [])
    if levels:
        shuffled = sum(x["shuffle_write_bytes"] for x in levels)
        slowest = max(levels, key=lambda x: x["seconds"])
        console.print(f"Spark: {len(levels)} levels, {shuffled / 2**20:.1f} MiB shuffled, "
                      f"{sum(x['seconds'] for x in levels) / len(levels):.2f} s per level on average "
                      f"(slowest: level {slowest['level']}, {slowest['seconds']:.1f} s)")
    return result


def run_simulation(console: Console, name: str, cfg: ModelConfig, *, runs: int, depth: int, seed: int,
                   master: str | None, invariants: tuple[str, ...], out: Path) -> int:
    """`kcm explore --simulate`: random walks in Spark executors; the first violation as ITF."""
    from kcm.spark_explore import ModelSpec, simulate_spark

    spark = start_spark(master)
    try:
        with _plain_interrupts():
            result = simulate_spark(spark, ModelSpec.kafka(cfg), runs, depth, seed,
                                    properties=list(invariants) or None)
    finally:
        with _plain_interrupts():
            spark.stop()
    for line in result.summary_lines():
        console.print(line)
    cov = result.coverage
    taken = len([e for e in cov.edges_taken if e not in cov.outside_universe])
    console.print(f"Table coverage: {taken} of {cov.edges_total} edges taken")
    if result.violation is None:
        return EXIT_PASS
    v = result.violation
    model = KafkaModel(cfg)
    paths = write_or_fail(lambda: write_counterexample(model, v.trace, out, invariant=v.name, kind=v.kind,
                                                       config={"preset": name, **config_fields(cfg)},
                                                       model_spec=trace_spec(cfg),
                                                       source=f"kcm explore --simulate {name}"), out, "--out")
    console.print(f"  counterexample: {paths['text']} ({v.trace_length} steps), ITF {paths['itf']}")
    return EXIT_VIOLATION
