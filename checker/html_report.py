"""The reviewer's page: `report.html`, one self-contained file beside `report.json`.

Inline CSS and SVG only: no script, no font or image from the network, so it opens from disk, in
a CI artifact viewer, or printed. It holds

- the verdict, the config and what was checked: the counts (the report's `summary`), every
  property with its one line of meaning (the model's own `doc`) and its outcome; the goals; the
  known Kafka 2.6 behaviours, listed as such when the result carries them (`known_violations`).
  Outcomes are the report's own (`outcomes`, `kcm.checker.engine.result.Outcome`), in the words
  the terminal and JUnit use, so that the three never disagree;
- the two state machines drawn from the tables (graphviz `dot -Tsvg`, inlined) with the run's
  coverage on them: each taken edge green with how often the run took it when the explorer
  counted it, each untaken edge red and dashed;
- each counterexample as a sequence diagram of the messages and writes themselves
  (`kcm.checker.sequence`: one lifeline per broker and one for ZooKeeper, the violating step
  highlighted), then the state at each step with only what changed, and a legend.

`kcm trace show --html FILE.itf.json` renders one trace the same way (`trace_page`). The page
template and its CSS are package data (`checker/templates/`).

The page is Kafka's, not the engine's: its diagrams are of brokers and ZooKeeper
(`kcm.checker.sequence`) and of the controller's state tables, so it lives beside the other Kafka
tools in `kcm.checker` and reads only the engine's generic results and traces.
"""

from __future__ import annotations

import html
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

import graphviz
from kcm.checker.engine.result import HELD, KNOWN, MET, NOT_MET, NOT_REACHED, UNREFUTED, VIOLATED
from kcm.checker.engine.traces import diff_values, format_change, title
from kcm.checker.sequence import LEGEND, TEXT_LEGEND, ZOOKEEPER, Event, lifelines, step_events

#: Colours of the sequence diagram, by event kind (the CSS legend uses the same).
COLOURS = {"zkwrite": "#1f5fbf", "watch": "#7b3fb5", "send": "#1d7a3a", "deliver": "#1d7a3a",
           "crash": "#c00000", "restart": "#0b6b24", "note": "#8a8f9c"}
#: The band behind the violating step (a test looks for this colour in a screenshot).
HIGHLIGHT = "#ffd9d9"

_esc = html.escape


def _template(name: str) -> str:
    return (resources.files("kcm.checker") / "templates" / name).read_text(encoding="utf-8")


def page(title_text: str, subtitle: str, body: str) -> str:
    return Template(_template("report.html")).substitute(
        title=_esc(title_text), subtitle=subtitle, css=_template("report.css"), body=body)


# ---- the sequence diagram -----------------------------------------------------------------------

COLUMN, LEFT, ROW, HEAD = 230, 70, 26, 46


def sequence_svg(trace) -> str:
    """The trace as an inline SVG sequence diagram (see `kcm.checker.sequence`)."""
    lanes = lifelines(trace)
    x = {lane: LEFT + COLUMN // 2 + n * COLUMN for n, lane in enumerate(lanes)}
    bad = len(trace.states) - 1 if trace.invariant is not None and trace.kind not in ("sometimes", None) else None
    rows: list[tuple[int, list[Event]]] = [(i, step_events(trace, i)) for i in range(1, len(trace.states))]
    height = HEAD + sum((len(ev) + 1) * ROW for _, ev in rows) + 20
    width = LEFT + COLUMN * len(lanes) + 320   # room for the labels right of the last lifeline
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="sequence" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="11">',
           '<defs>' + "".join(
               f'<marker id="arrow-{k}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
               f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{c}"/></marker>'
               for k, c in COLOURS.items()) + '</defs>']
    # The bands first (behind everything): the violating step in red.
    y = HEAD
    for i, events in rows:
        h = (len(events) + 1) * ROW
        if i == bad:
            out.append(f'<rect class="violating-step" x="2" y="{y - 4}" width="{width - 4}" height="{h}" '
                       f'fill="{HIGHLIGHT}" stroke="#c00000" stroke-width="1.5" rx="4"/>')
        elif i % 2 == 0:
            out.append(f'<rect x="2" y="{y - 4}" width="{width - 4}" height="{h}" fill="#f5f6fa"/>')
        y += h
    for lane in lanes:   # lifelines
        out.append(f'<line class="lifeline" x1="{x[lane]}" y1="{HEAD - 14}" x2="{x[lane]}" y2="{height - 8}" '
                   f'stroke="#9aa0ad" stroke-dasharray="4 3"/>')
        fill = "#e6eefc" if lane == ZOOKEEPER else "#eef1f5"
        out.append(f'<rect x="{x[lane] - 70}" y="6" width="140" height="24" rx="5" fill="{fill}" stroke="#7d8597"/>')
        out.append(f'<text class="lane" x="{x[lane]}" y="22" text-anchor="middle" font-weight="bold" '
                   f'font-size="12">{_esc(lane)}</text>')
    y = HEAD
    for i, events in rows:
        colour = "#a00000" if i == bad else "#1d2330"
        label = trace.described(i) or f"step {i}"
        marker = f"  ← violates {trace.invariant}" if i == bad else ""
        out.append(f'<text x="8" y="{y + 12}" font-weight="bold" fill="{colour}">{i}</text>')
        out.append(f'<text x="{LEFT - 30}" y="{y + 12}" fill="{colour}" font-weight="bold">'
                   f'{_esc(label + marker)}</text>')
        y += ROW
        for event in events:
            out.append(_event_svg(event, x, y))
            y += ROW
    out.append("</svg>")
    return "\n".join(out)


def _event_svg(event: Event, x: Mapping[str, int], y: int) -> str:
    colour = COLOURS.get(event.kind, "#1d2330")
    if event.source not in x:
        return ""
    x1 = x[event.source]
    text = _esc(event.label)
    if event.target is None or event.target not in x:
        weight = ' font-weight="bold"' if event.kind in ("crash", "restart") else ""
        return (f'<g class="mark {event.kind}"><circle cx="{x1}" cy="{y + 8}" r="4" fill="{colour}"/>'
                f'<text x="{x1 + 9}" y="{y + 12}" fill="{colour}"{weight}>{text}</text></g>')
    x2 = x[event.target]
    dash = ' stroke-dasharray="5 3"' if event.kind == "deliver" else ""
    if x1 == x2:   # a request to itself: a small loop
        return (f'<g class="arrow {event.kind}"><path d="M{x1},{y + 3} h26 v10 h-24" fill="none" stroke="{colour}" '
                f'stroke-width="1.5"{dash} marker-end="url(#arrow-{event.kind})"/>'
                f'<text x="{x1 + 32}" y="{y + 12}" fill="{colour}">{text}</text></g>')
    mid, anchor = (x1 + x2) / 2, "middle"
    return (f'<g class="arrow {event.kind}"><line x1="{x1}" y1="{y + 12}" x2="{x2 + (-4 if x2 > x1 else 4)}" '
            f'y2="{y + 12}" stroke="{colour}" stroke-width="1.6"{dash} marker-end="url(#arrow-{event.kind})"/>'
            f'<text x="{mid}" y="{y + 8}" text-anchor="{anchor}" fill="{colour}">{text}</text></g>')


def changes_table(trace) -> str:
    """The state at each step: the initial state in full, then only what each step changed."""
    bad = len(trace.states) - 1 if trace.invariant is not None and trace.kind not in ("sometimes", None) else None
    rows = ['<table class="changes"><tr><th>step</th><th>action and what it changed</th></tr>']
    first = trace.states[0]
    initial = "<br>".join(f'<span class="path">{_esc(name)}</span> = {_esc(_short(first[name]))}'
                          for name in trace.vars)
    rows.append(f'<tr><td>0</td><td><span class="step-title">initial state</span><br>'
                f'<span class="mono">{initial}</span></td></tr>')
    for i in range(1, len(trace.states)):
        changes: list[str] = []
        for name in trace.vars:
            changes += [format_change(*c).strip() for c in diff_values(trace.states[i - 1][name],
                                                                        trace.states[i][name], name)]
        cls = ' class="violating"' if i == bad else ""
        mark = f" ← violates {_esc(trace.invariant)}" if i == bad else ""
        body = "<br>".join(_esc(c) for c in changes) or "(no change)"
        rows.append(f'<tr{cls}><td>{i}</td><td><span class="step-title">{_esc(trace.described(i) or "")}{mark}</span>'
                    f'<br><span class="mono">{body}</span></td></tr>')
    rows.append("</table>")
    return "\n".join(rows)


def _short(value: Any) -> str:
    from kcm.checker.engine.traces import format_value

    return format_value(value)


def legend_html() -> str:
    items = "".join(f'<li><span class="swatch {kind}"></span>{_esc(text)}</li>' for kind, text in LEGEND)
    text = "<br>".join(_esc(line) for line in TEXT_LEGEND.splitlines()[1:])
    return (f'<h3>Legend</h3><ul class="legend">{items}</ul>'
            f'<p class="mono" style="white-space: pre-wrap">{text}</p>')


def trace_section(trace, heading: str) -> str:
    return (f"<h3>{_esc(heading)}</h3><p>{_esc(title(trace))}</p>"
            f'<div class="diagram">{sequence_svg(trace)}</div>'
            f"<h3>The state at each step (only what changed)</h3>{changes_table(trace)}")


def trace_page(trace, source: str = "") -> str:
    """One trace as a page (`kcm trace show --html`)."""
    body = trace_section(trace, "Sequence diagram") + legend_html()
    return page(title(trace), _esc(source), body)


# ---- the state machines with coverage -----------------------------------------------------------


def coverage_svg(table, taken: set[tuple[str, str, str]], counts: Mapping[tuple[str, str, str], int]) -> str:
    """`table`'s state machine with the run's coverage, as inline SVG (graphviz `dot`), or the DOT
    source in a <pre> when `dot` is not installed."""
    g = graphviz.Digraph(name=f"{table.name}_coverage")
    g.attr(rankdir="LR", fontname="Helvetica", nodesep="0.45", bgcolor="transparent")
    g.attr("node", shape="box", style="rounded,filled", fillcolor="#eef3fb", fontname="Helvetica", fontsize="11")
    g.attr("edge", fontname="Helvetica", fontsize="9")
    for state in table.states:
        g.node(state.name, state.name, **({"fillcolor": "#d9ead3"} if state == table.initial else {}))
    for frm, to in table.edges():
        key = (table.name, frm.name, to.name)
        action = table.edge_actions[(frm, to)]
        if key in taken:
            count = counts.get(key)
            label = f"{action}\n{count:,}×" if count else f"{action}\ntaken"
            g.edge(frm.name, to.name, label=label, color="#1d7a3a", fontcolor="#1d7a3a", penwidth="1.6")
        else:
            g.edge(frm.name, to.name, label=f"{action}\nUNTAKEN", color="#c00000", fontcolor="#c00000",
                   style="dashed", penwidth="1.6")
    if shutil.which("dot") is None:
        return f"<pre>{_esc(g.source)}</pre>"
    svg = subprocess.run(["dot", "-Tsvg"], input=g.source, capture_output=True, text=True, check=True).stdout
    return svg[svg.index("<svg"):]


# ---- the whole report ---------------------------------------------------------------------------


def _first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def report_page(doc: Mapping[str, Any], *, properties: Mapping[str, tuple[str, str]],
                config: Mapping[str, Any], traces: Mapping[str, Any], complete: bool,
                edge_counts: Mapping[tuple[str, str, str], int] | None = None,
                known: Sequence[Any] = ()) -> str:
    """The page for one `kcm check` / `kcm explore` run.

    `doc` is the JSON report; `properties` maps each property checked to (kind, one line of
    meaning); `traces` maps a violated property to its decoded ITF trace; `complete` says whether
    the whole state space was explored (goals not met are then "not met", else "not reached")."""
    verdict = doc.get("verdict", "incomplete")
    variant = doc.get("variant") or ""
    head = (f'<span class="verdict {verdict}">{verdict.upper()}</span> · preset <b>{_esc(str(doc.get("preset")))}'
            f'</b>{" · variant " + _esc(variant) if variant else ""} · engine {_esc(str(doc.get("engine")))} · '
            f'Kafka {_esc(str(doc.get("kafka_version")))} · kcm {_esc(str(doc.get("kcm_version")))}'
            + (f' · incomplete: {_esc(doc["reason"])}' if doc.get("reason") else ""))
    parts = [f"<p>{head}</p>"]
    extent = ("The whole reachable state space was explored." if complete else
              "The search stopped before the state space was complete: an absence of violations means "
              "nothing beyond the explored part.")
    parts.append(f'<p>{doc.get("distinct_states", 0):,} distinct states, {doc.get("generated_states", 0):,} '
                 f'generated, depth {doc.get("depth", 0)}, symmetry {"on" if doc.get("symmetry") else "off"}, '
                 f'{doc.get("duration_s", 0)} s. {extent}</p>')
    # Counterexamples come first: they are what a reviewer opens the page for.
    if traces:
        parts.append("<h2>Counterexamples</h2>")
        for name, trace in traces.items():
            parts.append(trace_section(trace, f"{name}"))
        parts.append(legend_html())
    # Properties and goals: each one's outcome as the report states it (`outcomes`), the words
    # the terminal and JUnit use too.
    outcomes = doc.get("outcomes") or _outcomes_of_doc(doc, properties, complete)
    if doc.get("summary"):
        parts.append(f"<p><b>{_esc(doc['summary'])}</b></p>")
    rows = ["<tr><th>property</th><th>kind</th><th>what it says</th><th>outcome</th></tr>"]
    checked = [o for o in outcomes if o["category"] != "goal"]
    for o in checked:
        kind, meaning = properties.get(o["name"], (o.get("kind") or o["category"], ""))
        rows.append(f"<tr><td class=mono>{_esc(o['name'])}</td><td>{_esc(kind)}</td><td>{_esc(meaning)}</td>"
                    f"{_outcome_cell(o)}</tr>")
    parts.append(f"<h2>Properties checked ({len(checked)})</h2><table>{''.join(rows)}</table>")
    goals = [o for o in outcomes if o["category"] == "goal"]
    if goals:
        g_rows = "".join(f"<tr><td class=mono>{_esc(o['name'])}</td>{_outcome_cell(o)}</tr>" for o in goals)
        parts.append(f"<h2>Goals</h2><table><tr><th>goal</th><th>outcome</th></tr>{g_rows}</table>")
    if known:
        items = "".join(f"<li>{_esc(_known_text(k))}</li>" for k in known)
        parts.append(f"<h2>Known Kafka 2.6 behaviours</h2><p>Violations the model reproduces from Kafka 2.6 itself, "
                     f"listed as such rather than as failures of the model:</p><ul>{items}</ul>")
    # Coverage and proofs.
    cov = doc.get("coverage", {})
    if cov.get("table_edges_total"):
        parts.extend(_coverage_section(cov, edge_counts))
    else:
        parts.append("<h2>State machines and coverage</h2><p>No exploration in this run: no coverage to draw.</p>")
    if doc.get("proofs"):
        proved = sum(p["result"] == "proved" for p in doc["proofs"])
        failed = "".join(f'<br><span class="bad">{_esc(p["result"])}: {_esc(p["property"])} [{p["brokers"]} brokers]'
                         f"</span>" for p in doc["proofs"] if p["result"] != "proved")
        parts.append(f"<h2>Proofs of the election rules</h2><p>{proved} of {len(doc['proofs'])} proved (Z3)."
                     f"{failed}</p>")
    # Config, one field a row.
    parts.append("<h2>Config</h2><table><tr><th>field</th><th>value</th></tr>"
                 + "".join(f"<tr><td class=mono>{_esc(k)}</td><td class=mono>{_esc(str(v))}</td></tr>"
                           for k, v in config.items()) + "</table>")
    return page(f"kcm · {doc.get('preset')} · {verdict}", _esc(f"report.json schema {doc.get('schema_version')}"),
                "\n".join(parts))


#: The cell's class for each outcome status (kcm.checker.engine.result).
_STATUS_CLASS = {HELD: "ok", MET: "ok", VIOLATED: "bad", NOT_MET: "bad", KNOWN: "known"}


def _outcome_cell(o: Mapping[str, Any]) -> str:
    return f'<td class="{_STATUS_CLASS.get(o["status"], "open")}">{_esc(o.get("text") or o["status"])}</td>'


def _outcomes_of_doc(doc: Mapping[str, Any], properties: Mapping[str, tuple[str, str]],
                     complete: bool) -> list[dict[str, Any]]:
    """The outcomes of a report written without them: from its violations, known violations and goals."""
    violated = {v["invariant"]: v for v in doc.get("violations", [])}
    known = {k["invariant"]: k for k in doc.get("known_violations", [])}
    out: list[dict[str, Any]] = []
    for name in properties:
        if name in violated:
            out.append({"name": name, "category": "invariant", "status": VIOLATED,
                        "text": f"violated after {violated[name]['trace_length']} steps"})
        elif name in known:
            finding = known[name].get("finding")
            out.append({"name": name, "category": "invariant", "status": KNOWN,
                        "text": f"known Kafka 2.6 behaviour{': ' + finding if finding else ''}"})
        else:
            out.append({"name": name, "category": "invariant", "status": HELD if complete else UNREFUTED,
                        "text": HELD if complete else "not violated in the explored part (incomplete)"})
    for name, met in doc.get("goals", {}).items():
        status = MET if met else NOT_MET if complete else NOT_REACHED
        out.append({"name": name, "category": "goal", "status": status, "text": status})
    return out


def _coverage_section(cov: Mapping[str, Any], edge_counts: Mapping | None) -> list[str]:
    """Both state machines with the run's coverage drawn on them."""
    from kcm.model.tables import PARTITION_TABLE, REPLICA_TABLE

    taken = {(table, frm, to) for table, frm, to in (e.split(" ") for e in _taken_edges(cov))}
    parts = [f'<h2>State machines and coverage</h2><p>{cov.get("table_edges_taken", 0)} of '
             f'{cov.get("table_edges_total", 0)} table edges taken; green edges were taken'
             f'{" (with how many generated transitions took them)" if edge_counts else ""}, red dashed ones never.</p>']
    for table in (REPLICA_TABLE, PARTITION_TABLE):
        parts.append(f'<h3>{_esc(table.name.capitalize())} state machine (Kafka {table.version})</h3>'
                     f'<div class="diagram machine">{coverage_svg(table, taken, edge_counts or {})}</div>')
    if cov.get("illegal_requests"):
        parts.append("<p>Invalid transitions requested (logged and skipped, as Kafka 2.6 does): "
                     + ", ".join(f"<code>{_esc(e)}</code>" for e in cov["illegal_requests"]) + "</p>")
    return parts


def _taken_edges(cov: Mapping[str, Any]) -> list[str]:
    from kcm.model.tables import PARTITION_TABLE, REPLICA_TABLE

    untaken = set(cov.get("untaken", []))
    universe = [f"{t.name} {f.name} {to.name}" for t in (REPLICA_TABLE, PARTITION_TABLE) for f, to in t.edges()]
    return [e for e in universe if e not in untaken] if cov.get("table_edges_total") else []


def _known_name(entry: Any) -> str:
    if isinstance(entry, Mapping):
        return str(entry.get("invariant") or entry.get("name") or entry.get("property") or "")
    return str(getattr(entry, "invariant", None) or getattr(entry, "name", None) or entry)


def _known_text(entry: Any) -> str:
    """A known Kafka 2.6 violation in one line, from the report's `known_violations` entries
    (`invariant`, `kind`, `trace_length`, `finding`) or anything with a name."""
    if isinstance(entry, Mapping) and "invariant" in entry:
        steps = f", after {entry['trace_length']} steps" if entry.get("trace_length") is not None else ""
        finding = f": {entry['finding']}" if entry.get("finding") else ""
        return f"{entry['invariant']} ({entry.get('kind', 'safety')}{steps}){finding}"
    if isinstance(entry, Mapping):
        name = _known_name(entry)
        rest = "; ".join(f"{k}: {v}" for k, v in entry.items() if k not in ("invariant", "name", "property"))
        return f"{name}: {rest}" if rest else name
    return str(entry)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
