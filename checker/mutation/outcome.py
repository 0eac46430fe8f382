"""What running one mutant gave: its status and, for a kill, the property, trace and config."""

from __future__ import annotations

from dataclasses import dataclass

KILLED, SURVIVED, EQUIVALENT, CRASHED, TIMED_OUT = "killed", "survived", "equivalent", "crashed", "timed_out"
STATUSES = (KILLED, CRASHED, SURVIVED, EQUIVALENT, TIMED_OUT)


@dataclass(frozen=True)
class Outcome:
    """What exploring one mutant gave. `property`, `trace_length` and `config` name the kill (or,
    for a crash, the config it crashed on); `error` is a crash's exception."""

    id: str
    file: str
    line: int
    operator: str
    status: str
    property: str | None = None
    trace_length: int | None = None
    config: str | None = None
    distinct: int = 0
    seconds: float = 0.0
    error: str | None = None
    #: For an equivalent mutant: "unreached" when its lines never ran on any config.
    note: str | None = None
    #: Configs explored by a search, and configs decided without one (the mutant's successors
    #: equal the clean model's on every clean state where its lines run): not part of `row`, an
    #: account of the work, not of the verdict.
    searched: int = 0
    compared: int = 0
    #: CPU seconds of the process that ran the mutant (`time.process_time()`), for the benchmarks.
    cpu: float = 0.0

    def row(self) -> tuple:
        """Everything but the time: what two engines (or two runs) must agree on."""
        return (self.id, self.status, self.property, self.trace_length, self.config, self.distinct, self.error,
                self.note)

    def to_json(self) -> dict:
        return {"id": self.id, "file": self.file, "line": self.line, "operator": self.operator,
                "status": self.status, "property": self.property, "trace_length": self.trace_length,
                "config": self.config, "distinct_states": self.distinct, "seconds": round(self.seconds, 3),
                "error": self.error, "note": self.note,
                "searched": self.searched, "compared": self.compared, "cpu_seconds": round(self.cpu, 3)}
